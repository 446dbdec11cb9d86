#include "ir/token_estimate.h"

namespace sluice::ir {

namespace {

constexpr std::uint64_t kBytesPerToken = 4;
constexpr std::uint64_t kPerMessage = 4;  // role and turn markers
constexpr std::uint64_t kPerTool = 8;     // the tool's framing in the prompt
constexpr std::uint64_t kPerImage = 1600;

std::uint64_t bytes_of(const std::vector<ContentPart>& parts, std::uint64_t& images) {
  std::uint64_t bytes = 0;
  for (const ContentPart& p : parts) {
    switch (p.kind) {
      case PartKind::kText:
      case PartKind::kReasoning:
        bytes += p.text.size();
        break;
      case PartKind::kImage:
        ++images;
        break;
      case PartKind::kToolCall:
        bytes += p.name.size() + p.arguments.size();
        break;
      case PartKind::kToolResult:
        bytes += bytes_of(p.parts, images);
        break;
      case PartKind::kRedactedReasoning:
        break;  // opaque to the model's tokenizer too; billed as the thinking it stands for
    }
  }
  return bytes;
}

}  // namespace

std::uint64_t estimate_input_tokens(const Request& request) {
  std::uint64_t images = 0;
  std::uint64_t bytes = bytes_of(request.system, images);
  std::uint64_t fixed = 0;
  for (const Message& m : request.messages) {
    bytes += bytes_of(m.content, images);
    fixed += kPerMessage;
  }
  for (const Tool& t : request.tools) {
    bytes += t.name.size() + t.description.size() + t.parameters.size();
    fixed += kPerTool;
  }
  bytes += request.response_format.schema.size();  // providers put the schema in the prompt
  for (const std::string& input : request.embed.inputs) {
    bytes += input.size();
  }
  return (bytes + kBytesPerToken - 1) / kBytesPerToken + fixed + images * kPerImage;
}

}  // namespace sluice::ir
