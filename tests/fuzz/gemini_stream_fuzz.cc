// protocol/gemini/stream_decoder.h: StreamDecoder on the SSE events of arbitrary bytes (cut into
// fuzzed chunks, fuzz_support.h SplitInput), then on_end. Its IR must keep the ordering contract
// of ir/stream_event.h and translate into well-formed Anthropic SSE and OpenAI chunk SSE
// (translate_stream: the Gemini upstream -> Anthropic / OpenAI caller paths); the passthrough
// StreamSniffer sees the same events. The IR is also encoded back into a Gemini stream
// (gemini::StreamEncoder, the path of a Gemini caller behind another protocol), which must be
// framed as the API frames it and decode to what the IR said.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.h"
#include "protocol/gemini/stream_decoder.h"
#include "protocol/gemini/stream_encoder.h"
#include "protocol/gemini/stream_sniffer.h"

namespace {
namespace gm = sluice::protocol::gemini;
namespace ir = sluice::ir;
using sluice::fuzz::check;

// What a Gemini client keeps of an IR stream.
struct View {
  std::string text;
  std::string reasoning;
  std::string signatures;
  std::vector<std::string> calls;
  ir::FinishReason finish = ir::FinishReason::kUnset;
  ir::Usage usage;
  std::string id;
  std::string model;
  bool error = false;

  void on(const ir::StreamEvent& e) {
    switch (e.kind) {
      case ir::StreamEventKind::kStart:
        id = e.id;
        model = e.model;
        break;
      case ir::StreamEventKind::kTextDelta:
        text += e.text;
        break;
      case ir::StreamEventKind::kReasoningDelta:
        reasoning += e.text;
        break;
      case ir::StreamEventKind::kReasoningSignature:
        signatures += e.text + ";";
        break;
      case ir::StreamEventKind::kToolCallStart:
        calls.push_back(e.id + "|" + e.name + "|");
        break;
      case ir::StreamEventKind::kToolCallDelta:
        if (e.index < calls.size()) {
          calls[e.index] += e.text;
        }
        break;
      case ir::StreamEventKind::kUsage:
        usage = e.usage;
        break;
      case ir::StreamEventKind::kFinish:
        finish = e.finish;
        break;
      case ir::StreamEventKind::kError:
        error = true;
        break;
      default:
        break;
    }
  }
};

// `out` must be `data: <JSON object>\r\n\r\n` chunks, each with candidates, except a last one
// with the error object when the stream ended in an error.
void check_framing(std::string_view out, bool errored) {
  bool ended = false;
  while (!out.empty()) {
    check(!ended, "gemini encoder wrote after its error", out);
    check(out.starts_with("data: "), "gemini encoder chunk does not start with data:", out);
    const std::size_t end = out.find("\r\n\r\n");
    check(end != std::string_view::npos, "gemini encoder chunk not ended by CRLF CRLF", out);
    const std::string_view chunk = out.substr(6, end - 6);
    out.remove_prefix(end + 4);
    check(chunk.find('\n') == std::string_view::npos && chunk.find('\r') == std::string_view::npos,
          "gemini encoder chunk spans lines", chunk);
    const auto v = sluice::fuzz::expect_json(chunk, "gemini encoder chunk not JSON");
    check(v.is_object(), "gemini encoder chunk is not an object", chunk);
    if (v.get_object().contains("error")) {
      ended = true;
    } else {
      check(v.get_object().contains("candidates"), "gemini encoder chunk without candidates",
            chunk);
    }
  }
  check(ended == errored, "gemini encoder error chunk and error() disagree");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const sluice::fuzz::SplitInput in(data, size);
  {
    gm::StreamDecoder decoder;
    gm::StreamSniffer sniffer;
    sluice::fuzz::translate_stream(in, decoder, sniffer);
  }
  gm::StreamDecoder decoder;
  std::vector<ir::StreamEvent> events;
  sluice::fuzz::for_each_sse_event(
      in, [&](const sluice::codec::SseEvent& ev) { decoder.on_event(ev, events); });
  decoder.on_end(events);
  gm::StreamEncoder encoder;
  std::string out;
  View want;
  for (const ir::StreamEvent& e : events) {
    encoder.encode(e, out);
    want.on(e);
  }
  check(encoder.finished(), "gemini encoder not finished after kDone or kError");
  check_framing(out, encoder.error().has_value());

  gm::StreamDecoder again;
  std::vector<ir::StreamEvent> read;
  sluice::codec::SseParser parser;
  sluice::codec::SseEvent ev;
  parser.feed(out);
  while (parser.next(ev) == sluice::codec::SseParser::Status::kEvent) {
    again.on_event(ev, read);
  }
  if (parser.finish(ev) == sluice::codec::SseParser::Status::kEvent) {
    again.on_event(ev, read);
  }
  again.on_end(read);
  View got;
  for (const ir::StreamEvent& e : read) {
    got.on(e);
  }
  // Text and thinking go out as they arrive; the rest is complete only without an error.
  check(got.text == want.text && got.reasoning == want.reasoning,
        "gemini encoder output decodes to other text or thinking", out);
  check(got.error == want.error, "gemini encoder output decodes to another outcome", out);
  if (!want.error) {
    check(got.signatures == want.signatures && got.calls == want.calls &&
              got.finish == want.finish && got.id == want.id && got.model == want.model,
          "gemini encoder output decodes to other signatures, calls, finish or ids", out);
    check(encoder.usage_clamped() > 0 || got.usage == want.usage,
          "gemini encoder output decodes to other usage", out);
  }
  return 0;
}
