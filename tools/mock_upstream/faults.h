#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "mock_request.h"

namespace sluice::mock {

// How x-mock-disconnect-after ends the connection.
enum class DisconnectMode : std::uint8_t {
  kFin,    // shutdown + close: the peer reads what was sent, then EOF
  kReset,  // SO_LINGER 0 + close: the peer gets a TCP RST (may lose unread bytes)
};

// x-mock-stream-error: end a generated stream with an in-stream error event of this type.
struct StreamError {
  // After this many content events; nullopt: half of them (rounded down).
  std::optional<std::uint32_t> after;
  // The provider's error type, e.g. "overloaded_error" (Anthropic) or "throttlingException"
  // (Bedrock): ASCII letters and '_'.
  std::string type;
};

// What one request asks the mock to do. Built from the per-run defaults (CLI flags)
// overridden by x-mock-* request headers. Durations are milliseconds.
struct Faults {
  std::uint32_t latency_ms = 0;
  std::uint32_t first_byte_ms = 0;
  std::uint32_t pace_ms = 0;
  // x-mock-end-delay-ms: streams hold the body's end (its last chunk) this long after the last
  // event, as an upstream that keeps the connection open after its final answer.
  std::uint32_t end_delay_ms = 0;
  std::uint32_t events = 8;
  std::optional<std::uint32_t> stall_after;
  std::optional<std::uint32_t> disconnect_after;
  DisconnectMode disconnect_mode = DisconnectMode::kFin;
  // Empty: no injected status. One entry: always that status. Several: the k-th request
  // (k counted per sequence key since the last reset) gets entry min(k, size - 1); an
  // entry below 400 means "answer normally" (with that status if it is a 2xx, else 200).
  std::vector<int> status;
  // Key for the status sequence counter; defaults to the x-mock-status text itself.
  std::string sequence_key;
  std::string retry_after;
  std::string fixture;
  std::optional<std::string> raw_body;
  std::string content_type;
  // x-mock-informational: one interim head per entry (100..199, not 101), in this order,
  // before the final head.
  std::vector<int> informational;
  // x-mock-set-<name>: value, pre-formatted as "<name>: value\r\n" lines for the final head.
  std::string set_headers;
  // x-mock-trailing-response: write a second, unrequested response after this one.
  bool trailing_response = false;
  // x-mock-omit-done: generated streams end without their terminator ("data: [DONE]",
  // Anthropic's message_stop, Responses' response.completed).
  bool omit_done = false;
  // x-mock-stream-error: "TYPE" or "N:TYPE" (Anthropic and Bedrock streams).
  std::optional<StreamError> stream_error;
  // x-mock-tool-name: the tool a generated tool call calls, instead of the one the request
  // would pick.
  std::optional<std::string> tool_name;
  // x-mock-tool-arguments: the arguments of a generated tool call, a JSON object kept as
  // compact JSON text; empty: {"mock":true}.
  std::string tool_arguments;
  // x-mock-embeddings: bag-of-words: an input's vector is the normalised sum of its words'
  // vectors, so paraphrases that share most words are close (cosine near 1) and unrelated
  // texts are not; hash (the default): one pseudo-random vector per distinct input.
  bool bag_of_words_embeddings = false;
};

// Largest accepted value of any numeric fault, so a typo cannot make the mock sleep for
// weeks or try to generate billions of events.
inline constexpr std::uint32_t kMaxFaultValue = 100'000'000;
// Largest x-mock-events: a non-stream reply holds all the words in one body.
inline constexpr std::uint32_t kMaxEvents = 1'000'000;

// Parses one numeric fault value (decimal, 0..kMaxFaultValue). `what` names the fault in
// the error message.
Result<std::uint32_t> parse_fault_number(std::string_view text, std::string_view what);

// Parses an x-mock-status value: one status or a comma-separated sequence, each 100..599.
Result<std::vector<int>> parse_status_list(std::string_view text);

// Parses an x-mock-informational value: comma-separated statuses, each 100..199 but not 101
// (a switch of protocols is not an interim response).
Result<std::vector<int>> parse_informational_list(std::string_view text);

// Parses an x-mock-stream-error value: "TYPE" or "N:TYPE", TYPE being 1..64 ASCII letters
// and underscores, the first a lower-case letter (overloaded_error, throttlingException).
Result<StreamError> parse_stream_error(std::string_view text);

// Prefix of the headers whose suffix names a response header to add: x-mock-set-<name>.
inline constexpr std::string_view kSetHeaderPrefix = "x-mock-set-";

// Parses an x-mock-tool-arguments value: a JSON object, returned as compact JSON text.
Result<std::string> parse_tool_arguments(std::string_view text);

// `defaults` overridden by the request's x-mock-* headers. A malformed header value is a
// kBadRequest error naming the header. The values "none" / "off" / "-1" turn off
// stall-after, disconnect-after and status set by a per-run default. An x-mock-set-<name>
// header whose <name> is empty, not an HTTP token, or a framing header (content-length,
// transfer-encoding, connection) is also a kBadRequest error.
Result<Faults> parse_faults(const HeaderList& headers, const Faults& defaults);

}  // namespace sluice::mock
