// protocol/anthropic/stream_decoder.h: StreamDecoder on the SSE events of arbitrary bytes (cut
// into fuzzed chunks, fuzz_support.h SplitInput), then on_end. Its IR must keep the ordering
// contract of ir/stream_event.h, and anthropic::StreamEncoder must turn that IR back into
// well-formed Anthropic SSE (the Anthropic upstream -> Anthropic caller translated path), and
// openai_chat::StreamEncoder into well-formed OpenAI chunk SSE that decodes back to the same
// content (the Anthropic upstream -> OpenAI caller path; fuzz_support.h translate_stream). The
// passthrough StreamSniffer sees the same events.

#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "protocol/anthropic/stream_decoder.h"
#include "protocol/anthropic/stream_sniffer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sluice::protocol::anthropic::StreamDecoder decoder;
  sluice::protocol::anthropic::StreamSniffer sniffer;
  sluice::fuzz::translate_stream(sluice::fuzz::SplitInput(data, size), decoder, sniffer);
  return 0;
}
