#!/usr/bin/env python3
"""Table and RESULTS.md section for the variant benchmarks (bench/limits.sh, bench/metering.sh).

Reads the JSON lines those scripts append ({"mode", "round", "c", "result": wrk's BENCH_JSON}),
prints a table of medians with each mode's added latency and throughput ratio against the first
mode, and writes (or replaces) the section HEADING of RESULTS (skipped when RESULTS is "").

  variants_report.py JSONL RESULTS HEADING MODES DESCRIPTION
    MODES        comma-separated, the baseline first
    DESCRIPTION  the paragraph under the heading
"""
import json
import re
import statistics
import sys


def main():
    jsonl, results_file, heading, modes, description = sys.argv[1:6]
    modes = modes.split(",")
    rows = [json.loads(line) for line in open(jsonl)]

    def med(mode, c, field):
        return statistics.median(
            r["result"][field] for r in rows if r["mode"] == mode and r["c"] == c)

    base = modes[0]
    base_p50, base_p99, base_rps = med(base, 1, "p50_us"), med(base, 1, "p99_us"), med(base, 64, "rps")
    table = [f"| mode | c=1 p50 | c=1 p99 | added p50 | added p99 | c=64 req/s | vs {base} | non-2xx |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for mode in modes:
        p50, p99, rps = med(mode, 1, "p50_us"), med(mode, 1, "p99_us"), med(mode, 64, "rps")
        bad = sum(r["result"]["non2xx"] for r in rows if r["mode"] == mode)
        table.append(f"| {mode} | {p50} us | {p99} us | {p50 - base_p50:+} us | "
                     f"{p99 - base_p99:+} us | {rps:,.0f} | {rps / base_rps:.3f} | {bad} |")
    print("\n".join(table))
    if not results_file:
        return
    section = "\n".join([f"## {heading}", "", description, "", *table, ""])
    try:
        text = open(results_file).read()
    except OSError:
        text = ""
    pattern = re.compile(r"^## " + re.escape(heading) + r"\n.*?(?=^## |\Z)", flags=re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    open(results_file, "w").write(text)


if __name__ == "__main__":
    main()
