#!/usr/bin/env bash
# Fails (exit 1, listing the files) when a tracked C++ file differs from what clang-format makes
# of it under .clang-format. CI runs it (.ci/run); `make format` fixes the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
format=$(command -v clang-format-14 || command -v clang-format || true)
[[ -n $format ]] || { echo "check-format: clang-format not found (apt-get install clang-format-14)" >&2; exit 2; }
bad=()
while IFS= read -r -d '' file; do
  if ! "$format" --dry-run --Werror "$file" >/dev/null 2>&1; then
    bad+=("$file")
  fi
done < <(git ls-files -z '*.cc' '*.h')
if ((${#bad[@]})); then
  echo "check-format: ${#bad[@]} file(s) are not clang-formatted (run make format):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: every tracked C++ file is formatted"
