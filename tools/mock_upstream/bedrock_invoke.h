#pragma once

#include <string_view>

#include "core/result.h"
#include "reply.h"
#include "reply_content.h"

namespace sluice::mock {

// POST …/model/{modelId}/invoke and …/invoke-with-response-stream with an Anthropic Messages
// body, as Bedrock serves Claude: the body must carry "anthropic_version": "bedrock-2023-05-31"
// and neither "model" (the path names it) nor "stream" (the operation decides), else a 400
// ValidationException in Bedrock's wording. The answer is the Messages API's (the Anthropic
// responder's, for the path's model); the stream's events each ride in an event stream `chunk`
// message, {"bytes":"<base64 of the event's JSON>"}, and an injected stream error
// (x-mock-stream-error) becomes a modelStreamErrorException message.
Result<Reply> respond_bedrock_invoke(std::string_view body, std::string_view model_id,
                                     const ReplySpec& spec, bool stream);

}  // namespace sluice::mock
