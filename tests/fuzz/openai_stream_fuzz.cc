// protocol/openai_chat/stream_decoder.h: StreamDecoder on the SSE events of arbitrary bytes (cut
// into fuzzed chunks, fuzz_support.h SplitInput), then on_end. Its IR must keep the ordering
// contract of ir/stream_event.h, and anthropic::StreamEncoder must turn that IR into
// well-formed Anthropic SSE (the OpenAI upstream -> Anthropic caller path). The same IR goes
// through openai_chat::StreamEncoder, whose output must decode back to the same content
// (fuzz_support.h translate_stream). The passthrough StreamSniffer sees the same events.

#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "protocol/openai_chat/stream_decoder.h"
#include "protocol/openai_chat/stream_sniffer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sluice::protocol::openai_chat::StreamDecoder decoder;
  sluice::protocol::openai_chat::StreamSniffer monitor(/*strip_usage_chunk=*/true);
  sluice::fuzz::translate_stream(sluice::fuzz::SplitInput(data, size), decoder, monitor);
  return 0;
}
