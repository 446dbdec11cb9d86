#include "protocol/openai_chat/model_list.h"

#include "codec/json_writer.h"

namespace sluice::protocol::openai_chat {

std::string encode_model_list(std::span<const std::string_view> aliases) {
  std::string body;
  codec::JsonWriter w(body);
  w.raw(R"({"object":"list","data":[)");
  for (std::size_t i = 0; i < aliases.size(); ++i) {
    w.raw(i == 0 ? "{" : ",{").key("id").string(aliases[i]);
    w.raw(R"(,"object":"model","created":0,"owned_by":"sluice"})");
  }
  w.raw("]}");
  return body;
}

}  // namespace sluice::protocol::openai_chat
