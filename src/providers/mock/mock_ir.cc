#include "providers/mock/mock_ir.h"

namespace sluice::providers {

namespace {

std::string text_of(const std::vector<ir::ContentPart>& parts) {
  std::string out;
  for (const ir::ContentPart& p : parts) {
    if (p.kind == ir::PartKind::kText) {
      out += p.text;
    }
  }
  return out;
}

}  // namespace

ir::Response mock_ir_response(const ir::Request& request, std::string_view model) {
  std::string last_user;
  std::size_t prompt_bytes = 0;
  for (const ir::ContentPart& p : request.system) {
    prompt_bytes += p.text.size();
  }
  for (const ir::Message& m : request.messages) {
    std::string text = text_of(m.content);
    prompt_bytes += text.size();
    if (m.role == ir::Role::kUser && !text.empty()) {
      last_user = std::move(text);
    }
  }
  if (last_user.size() > 200) {
    last_user.resize(200);
  }
  ir::Response response;
  response.id = "mock-" + std::to_string(prompt_bytes);
  response.model = std::string(model);
  response.created = 1700000000;
  response.content.push_back(ir::ContentPart::make_text(
      last_user.empty() ? "Hello from the Sluice mock provider."
                        : "Hello from the Sluice mock provider. You said: " + last_user));
  response.finish = ir::FinishReason::kStop;
  ir::Usage usage;
  usage.input_tokens = prompt_bytes / 4 + 1;
  std::uint64_t words = 0;
  const std::string& answer = response.content.front().text;
  for (std::size_t i = 0; i < answer.size(); ++i) {
    words += answer[i] == ' ' ? 1 : 0;
  }
  usage.output_tokens = words + 1;
  response.usage = usage;
  return response;
}

std::vector<ir::StreamEvent> mock_ir_stream(const ir::Response& response) {
  std::vector<ir::StreamEvent> events;
  ir::StreamEvent start;
  start.kind = ir::StreamEventKind::kStart;
  start.id = response.id;
  start.model = response.model;
  events.push_back(std::move(start));
  const std::string& answer = response.content.front().text;
  std::size_t begin = 0;
  while (begin < answer.size()) {
    const std::size_t space = answer.find(' ', begin);
    const std::size_t end = space == std::string::npos ? answer.size() : space + 1;
    ir::StreamEvent delta;
    delta.kind = ir::StreamEventKind::kTextDelta;
    delta.text = answer.substr(begin, end - begin);
    events.push_back(std::move(delta));
    begin = end;
  }
  ir::StreamEvent usage;
  usage.kind = ir::StreamEventKind::kUsage;
  usage.usage = *response.usage;
  events.push_back(std::move(usage));
  ir::StreamEvent finish;
  finish.kind = ir::StreamEventKind::kFinish;
  finish.finish = response.finish;
  events.push_back(std::move(finish));
  ir::StreamEvent done;
  done.kind = ir::StreamEventKind::kDone;
  events.push_back(std::move(done));
  return events;
}

}  // namespace sluice::providers
