#include "trailing_response.h"

#include "chat_responder.h"
#include "response_head.h"

namespace sluice::mock {

void append_trailing_response(std::string& out, std::int64_t created) {
  std::string body =
      text_completion_body("chatcmpl-smuggled", created, "mock-smuggled", kSmuggledContent);
  ResponseHead head;
  head.content_type = "application/json";
  head.content_length = body.size();
  append_response_head(out, head);
  out += body;
}

}  // namespace sluice::mock
