#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "event_source.h"
#include "reply.h"
#include "reply_content.h"

namespace sluice::mock {

// The last kCapacity response objects created with "store" (the API's default), by id, for
// GET /responses/{id} and previous_response_id. Thread-safe.
class ResponseStore {
 public:
  static constexpr std::size_t kCapacity = 1000;

  // Keeps `body` under `id`, forgetting the oldest entry beyond kCapacity.
  void put(std::string id, std::string body);
  std::optional<std::string> get(std::string_view id) const;
  bool contains(std::string_view id) const;
  void clear();

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string, std::less<>> bodies_;
  std::deque<std::string> order_;  // ids, oldest first
};

// What the mock takes from a POST /responses body.
struct ResponsesRequest {
  std::string model;
  bool stream = false;
  bool store = true;
  // Set when the reply is a function_call item: "tools" has a {"type":"function"} entry and
  // tool_choice is not "none". The function a {"type":"function","name":..} tool_choice
  // names, or else the first function tool's name.
  std::optional<std::string> tool_name;
  // Characters of "instructions" and of all input text / 4 + 1: a string input, or the
  // items' string "content", the "text" of their content parts and their string "output".
  std::uint32_t input_tokens = 0;
  // Request fields the response object repeats, as JSON text (their defaults when absent).
  std::string instructions = "null";
  std::string max_output_tokens = "null";
  std::string metadata = "{}";
  std::string previous_response_id = "null";
  std::string temperature = "1.0";
  std::string tool_choice = R"("auto")";
  std::string tools = "[]";
  std::string top_p = "1.0";
};

// Validates a body: a JSON object with a string "model"; "input", if present, a string or
// an array; a "previous_response_id" must name a response in `store` (400
// previous_response_not_found otherwise), as OpenAI answers.
Result<ResponsesRequest> parse_responses_request(std::string_view body, const ResponseStore& store);

// A completed "response" object: id resp_mock_<n>, output [a message with one output_text
// part "Mock reply w1 .. wN"] or [a function_call item], usage with input, cached, output,
// reasoning and total tokens.
std::string response_object(const ResponsesRequest& request, const ReplySpec& spec);

// The events of a streamed response, each `event: <type>\ndata: <json>\n\n` with a
// sequence_number from 0 and no [DONE]: response.created, response.in_progress,
// response.output_item.added, response.content_part.added (kPrelude; no content part for
// a function call); one response.output_text.delta per word, or three
// response.function_call_arguments.delta (kCounted); response.output_text.done,
// response.content_part.done (or response.function_call_arguments.done),
// response.output_item.done, response.completed (kTrailer; response.completed left out
// with spec.omit_done).
std::unique_ptr<EventSource> make_responses_stream(const ResponsesRequest& request,
                                                   const ReplySpec& spec);

// POST …/responses: the response object or its stream (kept in `store` unless the request
// says "store": false), or a validation error.
Result<Reply> respond_responses(std::string_view body, const ReplySpec& spec, ResponseStore& store);

// GET …/responses/{id}: the stored response object, or a 404 in OpenAI's shape.
Result<Reply> respond_stored_response(std::string_view id, const ResponseStore& store);

}  // namespace sluice::mock
