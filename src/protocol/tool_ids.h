#pragma once

#include <string>
#include <string_view>

namespace sluice::protocol {

// Pieces of the deterministic tool-call id mappings of anthropic/ and bedrock_converse/
// (conventions.h tool_use_id in each): an id another provider made is sent with the characters
// the upstream does not take replaced, and because replacing could make two ids collide, a
// hash of the original id is appended. The same input always gives the same output, so a tool
// result names the id its call was sent with. Pure functions.

// [A-Za-z0-9_-]: the characters both upstreams take in tool ids and tool names.
bool is_id_word_char(char c);

// Appends "_" and the 16 lowercase hex digits of the 64-bit FNV-1a hash of `id`.
void append_id_hash(std::string& out, std::string_view id);

}  // namespace sluice::protocol
