// protocol/openai_responses/stream_decoder.h: StreamDecoder on the SSE events of arbitrary bytes
// (cut into fuzzed chunks, fuzz_support.h SplitInput), then on_end. Its IR must keep the ordering
// contract of ir/stream_event.h and translate into well-formed Anthropic SSE and OpenAI chunk SSE
// (translate_stream: the Responses upstream -> Anthropic / OpenAI caller paths); the passthrough
// StreamSniffer sees the same events. The IR is also encoded back into a Responses stream
// (openai_responses::StreamEncoder, the path of a Responses caller behind another protocol):
// every event framed and numbered, the item rules the OpenAI SDK's accumulator enforces kept
// (tests/unit/support/responses_stream_check.h), the same text, reasoning, calls and usage as the
// IR, and read back by the decoder to the same again.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../unit/support/responses_stream_check.h"
#include "fuzz_support.h"
#include "protocol/openai_responses/stream_decoder.h"
#include "protocol/openai_responses/stream_encoder.h"
#include "protocol/openai_responses/stream_sniffer.h"

namespace {
namespace rs = sluice::protocol::openai_responses;
namespace ir = sluice::ir;
using sluice::fuzz::check;
using sluice::fuzz::OpenAiView;

// The IR folded per kind (OpenAiView without the OpenAI encoder's rules), and whether it failed.
OpenAiView fold(const std::vector<ir::StreamEvent>& events, bool& failed) {
  OpenAiView view;
  failed = false;
  for (const ir::StreamEvent& e : events) {
    view.on(e, /*as_openai=*/false);
    failed = failed || e.kind == ir::StreamEventKind::kError;
  }
  return view;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const sluice::fuzz::SplitInput in(data, size);
  {
    rs::StreamDecoder decoder;
    rs::StreamSniffer sniffer;
    sluice::fuzz::translate_stream(in, decoder, sniffer);
    (void)std::string(sniffer.stored_id());
  }

  // The same IR, re-encoded for a Responses caller.
  rs::StreamDecoder decoder;
  std::vector<ir::StreamEvent> events;
  sluice::fuzz::for_each_sse_event(
      in, [&](const sluice::codec::SseEvent& ev) { decoder.on_event(ev, events); });
  decoder.on_end(events);
  bool failed = false;
  const OpenAiView want = fold(events, failed);
  rs::StreamEncoder encoder(1'700'000'000);
  std::string out;
  for (const ir::StreamEvent& e : events) {
    encoder.encode(e, out);
  }
  check(encoder.finished(), "responses encoder not finished after kDone or kError", out);
  sluice::test::ResponsesObserved seen;
  const std::string broken = sluice::test::check_responses_stream(out, seen);
  check(broken.empty(), "responses encoder output breaks a stream rule", broken + "\n" + out);
  check(failed == (seen.status == "failed"), "responses encoder error state differs", out);
  if (!failed) {  // a failed stream has no final response to read the items from
    check(seen.text == want.text, "responses encoder output has other text", out);
    check(seen.reasoning == want.reasoning, "responses encoder output has other reasoning", out);
    check(seen.usage == want.usage, "responses encoder output has other usage", out);
    check(seen.calls.size() == want.arguments.size(), "responses encoder output has other calls",
          out);
    for (std::size_t i = 0; i < seen.calls.size(); ++i) {
      const std::string& head = want.tool_heads[i];
      check(seen.calls[i].name == head.substr(head.find('|') + 1) &&
                seen.calls[i].arguments == want.arguments[i],
            "responses encoder output has another call", out);
    }
  }

  // Read back by a Responses decoder: the same content.
  rs::StreamDecoder again;
  std::vector<ir::StreamEvent> back;
  sluice::codec::SseParser parser(64 * 1024 * 1024);
  sluice::codec::SseEvent ev;
  parser.feed(out);
  while (parser.next(ev) == sluice::codec::SseParser::Status::kEvent) {
    again.on_event(ev, back);
  }
  again.on_end(back);
  bool got_failed = false;
  const OpenAiView got = fold(back, got_failed);
  check(got_failed == failed, "responses encoder output decodes to another outcome", out);
  check(got.text == want.text && got.arguments == want.arguments,
        "responses encoder output decodes to other content", out);
  if (!failed) {
    check(got.reasoning == want.reasoning && got.usage == want.usage,
          "responses encoder output decodes to other reasoning or usage", out);
  }
  return 0;
}
