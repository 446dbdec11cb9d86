#pragma once

#include <span>
#include <string>
#include <string_view>

namespace sluice::protocol::openai_chat {

// GET /v1/models in OpenAI's list shape:
//   {"object":"list","data":[{"id":..,"object":"model","created":0,"owned_by":"sluice"},...]}
std::string encode_model_list(std::span<const std::string_view> aliases);

}  // namespace sluice::protocol::openai_chat
