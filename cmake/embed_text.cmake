# cmake -DINPUT=<file> -DOUTPUT=<file.cc> -DFUNCTION=<ns::name> -P embed_text.cmake
# Writes a .cc defining `std::string_view <FUNCTION>()` that returns INPUT's bytes, so the binary
# carries the file (prices/default.yaml) and never reads the source tree at run time.
file(READ "${INPUT}" _hex HEX)
string(LENGTH "${_hex}" _len)
math(EXPR _size "${_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," _bytes "${_hex}")
string(REGEX REPLACE "::[^:]*$" "" _namespace "${FUNCTION}")
string(REGEX REPLACE "^.*::" "" _name "${FUNCTION}")
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by cmake/embed_text.cmake; do not edit.
#include <string_view>

namespace ${_namespace} {

namespace {
constexpr char kBytes[${_size} + 1] = {${_bytes}'\\0'};
}  // namespace

std::string_view ${_name}() { return std::string_view(kBytes, ${_size}); }

}  // namespace ${_namespace}
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
