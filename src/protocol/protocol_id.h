#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::protocol {

// Names a wire format ("openai_chat", "anthropic_messages", ...). A caller and an upstream with
// the same ProtocolId exchange bytes that need no translation: the pipeline relays them
// verbatim (passthrough) and only sniffs usage. Ids are string literals owned by the codecs
// (each folder's conventions.h).
using ProtocolId = std::string_view;

// What a request asks the model to do; a route serves exactly one operation.
enum class Operation : std::uint8_t { kChat, kEmbeddings };

constexpr std::string_view to_string(Operation operation) {
  switch (operation) {
    case Operation::kChat:
      return "chat";
    case Operation::kEmbeddings:
      return "embeddings";
  }
  return "chat";
}

}  // namespace sluice::protocol
