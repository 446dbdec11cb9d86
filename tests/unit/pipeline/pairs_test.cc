// Every caller protocol x every upstream protocol, on the recorded upstream fixtures
// (tests/fixtures/<provider>/), through the production translation path: the upstream body's
// framing (codec/upstream_events.h: SSE, or Bedrock's binary event stream), the upstream
// protocol's UpstreamCodec decoder, pipeline::make_translation, the caller codec's encoder.
// Upstream-only protocols (Bedrock Converse: no caller speaks it) are upstreams here too.
//
// For each pair and fixture:
//   - golden: the caller's bytes equal tests/golden/pairs/<caller>/<upstream dir>/<fixture>
//     (regenerate with SLUICE_UPDATE_GOLDEN=1 and review the diff);
//   - split points: the upstream stream fed in two pieces, cut at every byte, gives the same
//     bytes;
//   - round trip: the caller's bytes, read back by the caller protocol's own decoder (as a
//     client library would), carry the same text, reasoning, tool calls (names and argument
//     JSON), finish reason and usage as the upstream reported, within what the caller's
//     protocol can express (documented in docs/protocols.md);
//   - metering: the usage reported to observers is the upstream's, exactly, and equals what a
//     passthrough sniffer of the upstream's own protocol reads from the same bytes (where a
//     caller can speak that protocol, so a passthrough exists).
// The set of protocols is the registry's: a protocol registered later is covered here
// without a change to this file.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "codec/sse.h"
#include "codec/upstream_events.h"
#include "ir/response.h"
#include "ir/stream_event.h"
#include "pipeline/request_context.h"
#include "pipeline/stream_transform.h"
#include "protocol/ingress.h"
#include "protocol/registry.h"

namespace sluice::pipeline {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

// Where each protocol's recorded upstream answers live, under tests/fixtures/.
const std::map<std::string, std::string, std::less<>>& fixture_dirs() {
  static const std::map<std::string, std::string, std::less<>> dirs = {
      {"openai_chat", "openai-chat"},
      {"anthropic_messages", "anthropic"},
      {"gemini", "gemini"},
      {"openai_responses", "openai-responses"},
      {"bedrock_converse", "bedrock"},
  };
  return dirs;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// An answer fixture: a stream (.sse, or a Bedrock .eventstream.bin) or a complete answer
// (.json), not an error, another API, or a stream's decoded listing (.events.json).
bool is_answer(const std::string& name) {
  if (name.starts_with("error-") || name.find("embed") != std::string::npos ||
      name.starts_with("cached-contents") || name.ends_with(".events.json")) {
    return false;
  }
  return name.ends_with(".sse") || name.ends_with(".eventstream.bin") || name.ends_with(".json");
}

bool is_stream(const std::string& name) {
  return name.ends_with(".sse") || name.ends_with(".eventstream.bin");
}

codec::UpstreamEvents::Framing framing_of(const std::string& name) {
  return name.ends_with(".eventstream.bin") ? codec::UpstreamEvents::Framing::kEventStream
                                            : codec::UpstreamEvents::Framing::kSse;
}

// Feeds `pieces` of an upstream body, framed as `framing`, to `sink` event by event; `last` is
// true for the event finish() gives. Returns false when the framing itself is malformed.
template <class Sink>
bool for_each_event(codec::UpstreamEvents::Framing framing,
                    const std::vector<std::string_view>& pieces, Sink&& sink) {
  codec::UpstreamEvents events(1 << 20);
  events.set_framing(framing);
  codec::SseEvent ev;
  for (std::string_view piece : pieces) {
    events.feed(piece);
    codec::UpstreamEvents::Status status;
    while ((status = events.next(ev)) == codec::UpstreamEvents::Status::kEvent) {
      if (!sink(ev, false)) {
        return true;
      }
    }
    if (status != codec::UpstreamEvents::Status::kNeedMore) {
      return false;
    }
  }
  const codec::UpstreamEvents::Status last = events.finish(ev);
  if (last == codec::UpstreamEvents::Status::kEvent) {
    sink(ev, true);
  }
  return last == codec::UpstreamEvents::Status::kEvent ||
         last == codec::UpstreamEvents::Status::kNeedMore;
}

// The production codecs of each protocol (protocol/registry.h): the upstream side (decoders)
// and the caller-side reader (the round trip).
const protocol::UpstreamCodec* codec_for(std::string_view protocol) {
  const protocol::UpstreamCodec* codec =
      protocol::find_upstream(protocol, protocol::Operation::kChat);
  EXPECT_NE(codec, nullptr) << protocol;
  return codec;
}

struct Fixture {
  std::string protocol;  // upstream protocol
  std::string dir;
  std::string name;
  bool stream = false;
  std::string bytes;
};

std::vector<Fixture> fixtures_of(std::string_view protocol) {
  std::vector<Fixture> out;
  const auto it = fixture_dirs().find(protocol);
  if (it == fixture_dirs().end()) {
    return out;
  }
  const fs::path dir = fs::path(SLUICE_FIXTURES_DIR) / it->second;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    const std::string name = f.filename().string();
    if (!is_answer(name)) {
      continue;
    }
    out.push_back({std::string(protocol), it->second, name, is_stream(name), read_file(f)});
  }
  return out;
}

// The chat codecs in the registry that answer with model output (not count_tokens, which has
// no streams): the caller protocols.
std::vector<const protocol::IngressCodec*> chat_codecs() {
  std::vector<const protocol::IngressCodec*> out;
  protocol::IngressRequest probe;
  for (const protocol::IngressCodec* c : protocol::ingress_codecs()) {
    if (c->operation() == protocol::Operation::kChat && c->make_stream_encoder(probe) != nullptr) {
      out.push_back(c);
    }
  }
  return out;
}

// What an answer says, as a client library would read it.
struct Summary {
  std::string text;
  std::string reasoning;
  struct Call {
    std::string id;
    std::string name;
    std::string arguments;
  };
  std::vector<Call> calls;
  std::optional<ir::Usage> usage;
  ir::FinishReason finish = ir::FinishReason::kUnset;
  bool error = false;
  std::string error_message;
};

void summarize_event(const ir::StreamEvent& e, Summary& s) {
  switch (e.kind) {
    case ir::StreamEventKind::kTextDelta:
      s.text += e.text;
      break;
    case ir::StreamEventKind::kReasoningDelta:
      s.reasoning += e.text;
      break;
    case ir::StreamEventKind::kToolCallStart:
      if (s.calls.size() <= e.index) {
        s.calls.resize(e.index + 1);
      }
      s.calls[e.index].id = e.id;
      s.calls[e.index].name = e.name;
      break;
    case ir::StreamEventKind::kToolCallDelta:
      if (s.calls.size() <= e.index) {
        s.calls.resize(e.index + 1);
      }
      s.calls[e.index].arguments += e.text;
      break;
    case ir::StreamEventKind::kUsage:
      s.usage = e.usage;
      break;
    case ir::StreamEventKind::kFinish:
      s.finish = e.finish;
      break;
    case ir::StreamEventKind::kError:
      s.error = true;
      s.error_message = e.error.message();
      break;
    default:
      break;
  }
}

Summary summarize_response(const ir::Response& r) {
  Summary s;
  for (const ir::ContentPart& p : r.content) {
    if (p.kind == ir::PartKind::kText) {
      s.text += p.text;
    } else if (p.kind == ir::PartKind::kReasoning) {
      s.reasoning += p.text;
    } else if (p.kind == ir::PartKind::kToolCall) {
      s.calls.push_back({p.id, p.name, p.arguments});
    }
  }
  s.usage = r.usage;
  s.finish = r.finish;
  return s;
}

// Decodes a whole stream body, framed as `framing`, with `decoder`.
Summary decode_stream(
    protocol::StreamDecoder& decoder, std::string_view bytes,
    codec::UpstreamEvents::Framing framing = codec::UpstreamEvents::Framing::kSse) {
  Summary s;
  std::vector<ir::StreamEvent> events;
  EXPECT_TRUE(for_each_event(framing, {bytes}, [&](const codec::SseEvent& ev, bool) {
    decoder.on_event(ev, events);
    return true;
  }));
  if (!decoder.finished()) {
    decoder.on_end(events);
  }
  for (const ir::StreamEvent& e : events) {
    summarize_event(e, s);
  }
  return s;
}

// The fields of `usage` a protocol's answers can state (the rest reads back as 0).
ir::Usage expressible(std::string_view protocol, ir::Usage usage) {
  if (protocol == "anthropic_messages") {
    usage.reasoning_tokens = 0;  // Anthropic counts thinking inside output_tokens, no split
  } else if (protocol != "openai_responses") {  // input_tokens_details.cache_write_tokens
    usage.cache_write_tokens = 0;               // OpenAI chat and Gemini have no cache-write count
  }
  return usage;
}

std::string args_canonical(const std::string& arguments) {
  boost::system::error_code ec;
  json::value v = json::parse(arguments.empty() ? "{}" : arguments, ec);
  return ec ? "<invalid JSON: " + arguments + ">" : json::serialize(v);
}

// Finish reasons a caller protocol cannot tell apart read back as their nearest kind.
ir::FinishReason expressible(std::string_view protocol, ir::FinishReason f) {
  if (protocol == "anthropic_messages") {
    return f == ir::FinishReason::kContentFilter ? ir::FinishReason::kRefusal : f;
  }
  if (f == ir::FinishReason::kStopSequence || f == ir::FinishReason::kPauseTurn) {
    return ir::FinishReason::kStop;
  }
  return f;
}

void expect_same_answer(const Summary& caller, const Summary& upstream,
                        std::string_view caller_protocol, bool stream) {
  ASSERT_FALSE(upstream.error) << "the upstream fixture itself decodes to an error: "
                               << upstream.error_message;
  EXPECT_FALSE(caller.error) << caller.error_message;
  EXPECT_EQ(caller.text, upstream.text);
  ASSERT_EQ(caller.calls.size(), upstream.calls.size());
  for (std::size_t i = 0; i < caller.calls.size(); ++i) {
    EXPECT_EQ(caller.calls[i].name, upstream.calls[i].name) << "call " << i;
    EXPECT_EQ(args_canonical(caller.calls[i].arguments),
              args_canonical(upstream.calls[i].arguments))
        << "call " << i;
    EXPECT_FALSE(caller.calls[i].id.empty()) << "call " << i << " has no id";
    for (std::size_t j = 0; j < i; ++j) {
      EXPECT_NE(caller.calls[i].id, caller.calls[j].id) << "calls " << j << " and " << i;
    }
  }
  EXPECT_EQ(caller.finish, expressible(caller_protocol, upstream.finish))
      << ir::to_string(caller.finish) << " vs " << ir::to_string(upstream.finish);
  if (!upstream.usage) {
    // Nothing to compare: protocols whose answers always state usage (Anthropic) show the
    // gateway's estimate; metering records none (checked by the caller of this function).
    return;
  }
  ASSERT_TRUE(caller.usage.has_value());
  {
    const ir::Usage want = expressible(caller_protocol, *upstream.usage);
    EXPECT_EQ(caller.usage->input_tokens, want.input_tokens);
    EXPECT_EQ(caller.usage->output_tokens, want.output_tokens);
    EXPECT_EQ(caller.usage->cache_read_tokens, want.cache_read_tokens);
    EXPECT_EQ(caller.usage->cache_write_tokens, want.cache_write_tokens);
    EXPECT_EQ(caller.usage->reasoning_tokens, want.reasoning_tokens);
  }
  (void)stream;
}

// The caller's bytes for a translated stream, fed as the given pieces.
struct Translated {
  std::string bytes;
  RequestContext ctx;
  bool complete = false;
};

Translated translate_stream(const protocol::IngressCodec& caller,
                            const protocol::UpstreamCodec& upstream,
                            codec::UpstreamEvents::Framing framing,
                            const std::vector<std::string_view>& pieces) {
  protocol::IngressRequest request;
  request.model = "pair-model";
  request.stream = true;
  request.include_usage = true;
  request.estimated_input_tokens = 7;
  auto transform =
      make_translation(caller, upstream.make_stream_decoder(), caller.make_stream_encoder(request));
  Translated t;
  EXPECT_TRUE(for_each_event(framing, pieces, [&](const codec::SseEvent& ev, bool last) {
    if (transform->failed()) {
      return false;
    }
    transform->on_event(ev, last, t.bytes);
    return true;
  }));
  if (!transform->failed()) {
    transform->on_end(t.bytes);
  }
  t.complete = transform->complete();
  transform->report(t.ctx);
  return t;
}

// Timestamps and generated ids are normalised out of golden files where encoders make them.
std::string golden_path(std::string_view caller, const Fixture& f) {
  return (fs::path(SLUICE_SOURCE_DIR) / "tests" / "golden" / "pairs" / std::string(caller) / f.dir /
          (f.name + ".out"))
      .string();
}

// Encoders stamp `created` / `created_at` with the current time when the upstream did not say
// (Anthropic and Gemini answers carry no timestamp): golden files hold 0 there.
std::string normalized(const std::string& bytes) {
  static const std::regex kStamp(R"re("(created|created_at|completed_at)":[0-9]+)re");
  return std::regex_replace(bytes, kStamp, "\"$1\":0");
}

void check_golden(const std::string& path, const std::string& raw) {
  const std::string actual = normalized(raw);
  if (std::getenv("SLUICE_UPDATE_GOLDEN") != nullptr) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " is missing; run with SLUICE_UPDATE_GOLDEN=1";
  const std::string want = read_file(path);
  if (actual != want) {
    std::size_t at = 0;
    while (at < actual.size() && at < want.size() && actual[at] == want[at]) {
      ++at;
    }
    const std::size_t from = at > 80 ? at - 80 : 0;
    ADD_FAILURE() << path << " differs at byte " << at << "\n  got:  ..."
                  << actual.substr(from, 200) << "\n  want: ..." << want.substr(from, 200);
  }
}

struct Pair {
  const protocol::IngressCodec* caller;
  Fixture fixture;
};

void PrintTo(const Pair& pair, std::ostream* os) {
  *os << pair.caller->protocol() << " <- " << pair.fixture.dir << "/" << pair.fixture.name;
}

// The chat upstream protocols: every caller protocol, and those only upstreams speak.
std::vector<std::string_view> upstream_protocols() {
  std::vector<std::string_view> out;
  for (const protocol::UpstreamCodec* c : protocol::upstream_codecs()) {
    if (c->operation() == protocol::Operation::kChat) {
      out.push_back(c->protocol());
    }
  }
  return out;
}

std::vector<Pair> all_pairs() {
  std::vector<Pair> out;
  for (const protocol::IngressCodec* caller : chat_codecs()) {
    for (std::string_view upstream : upstream_protocols()) {
      if (upstream == caller->protocol()) {
        continue;
      }
      for (Fixture& f : fixtures_of(upstream)) {
        out.push_back({caller, std::move(f)});
      }
    }
  }
  return out;
}

std::string pair_name(const testing::TestParamInfo<Pair>& info) {
  std::string n = std::string(info.param.caller->protocol()) + "__" + info.param.fixture.dir +
                  "__" + info.param.fixture.name;
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      c = '_';
    }
  }
  return n;
}

class PairTest : public testing::TestWithParam<Pair> {};

TEST_P(PairTest, TranslatesGoldenRoundTripAndMeters) {
  const Pair& pair = GetParam();
  const protocol::IngressCodec& caller = *pair.caller;
  const Fixture& f = pair.fixture;
  const protocol::UpstreamCodec* upstream = codec_for(f.protocol);
  const protocol::UpstreamCodec* reader = codec_for(caller.protocol());
  ASSERT_TRUE(upstream && reader);

  if (f.stream) {
    const codec::UpstreamEvents::Framing framing = framing_of(f.name);
    const Translated whole = translate_stream(caller, *upstream, framing, {f.bytes});
    check_golden(golden_path(caller.protocol(), f), whole.bytes);

    auto upstream_decoder = upstream->make_stream_decoder();
    const Summary want = decode_stream(*upstream_decoder, f.bytes, framing);
    if (want.error) {
      // An upstream error event: the caller gets its own protocol's error event, no usage is
      // invented, and the stream is not complete.
      EXPECT_FALSE(whole.complete);
      auto caller_decoder = reader->make_stream_decoder();
      EXPECT_TRUE(decode_stream(*caller_decoder, whole.bytes).error);
      return;
    }
    EXPECT_TRUE(whole.complete);
    auto caller_decoder = reader->make_stream_decoder();
    expect_same_answer(decode_stream(*caller_decoder, whole.bytes), want, caller.protocol(), true);

    // Metering: the upstream's own figures, equal to a passthrough sniffer's reading.
    ASSERT_EQ(whole.ctx.usage.has_value(), want.usage.has_value());
    if (want.usage) {
      EXPECT_EQ(*whole.ctx.usage, *want.usage);
    }
    const protocol::IngressCodec* native = nullptr;
    for (const protocol::IngressCodec* c : chat_codecs()) {
      native = c->protocol() == f.protocol ? c : native;
    }
    if (native != nullptr) {  // no caller speaks an upstream-only protocol: no passthrough
      protocol::IngressRequest native_request;
      native_request.stream = true;
      native_request.include_usage = true;
      auto passthrough = make_passthrough(*native, native->make_stream_sniffer(native_request));
      std::string relayed;
      for_each_event(framing, {f.bytes}, [&](const codec::SseEvent& ev, bool last) {
        passthrough->on_event(ev, last, relayed);
        return true;
      });
      passthrough->on_end(relayed);
      RequestContext sniffed;
      passthrough->report(sniffed);
      EXPECT_EQ(sniffed.usage, whole.ctx.usage) << "the sniffer and the decoder disagree";
    }

    // Every split point gives the same bytes (every byte for fixtures up to 1,500 bytes; a
    // stride that keeps about 1,500 cuts for larger ones, which still lands inside every event
    // of the recorded streams several times).
    const std::size_t step = std::max<std::size_t>(1, f.bytes.size() / 1500);
    const std::string whole_normalized = normalized(whole.bytes);
    for (std::size_t cut = 1; cut < f.bytes.size(); cut += step) {
      const std::string_view all(f.bytes);
      const Translated split =
          translate_stream(caller, *upstream, framing, {all.substr(0, cut), all.substr(cut)});
      if (split.bytes != whole.bytes) {  // timestamps may tick between runs: compare without them
        ASSERT_EQ(normalized(split.bytes), whole_normalized) << "cut at byte " << cut;
      }
    }
    return;
  }

  auto decoded = upstream->decode_response(f.bytes);
  ASSERT_TRUE(decoded) << decoded.error().message();
  bool clamped = false;
  auto encoded = caller.encode_response(*decoded, clamped);
  ASSERT_TRUE(encoded) << encoded.error().message();
  EXPECT_FALSE(clamped);
  check_golden(golden_path(caller.protocol(), f), *encoded);
  auto read_back = reader->decode_response(*encoded);
  ASSERT_TRUE(read_back) << read_back.error().message();
  expect_same_answer(summarize_response(*read_back), summarize_response(*decoded),
                     caller.protocol(), false);
}

INSTANTIATE_TEST_SUITE_P(AllPairs, PairTest, testing::ValuesIn(all_pairs()), pair_name);

// The matrix is what it claims: every registered chat protocol, caller or upstream-only, has
// fixtures, so none is silently left out of the pairs above.
TEST(PairMatrix, EveryChatProtocolHasRecordedAnswers) {
  for (const protocol::IngressCodec* c : chat_codecs()) {
    EXPECT_FALSE(fixtures_of(c->protocol()).empty()) << c->protocol();
  }
  for (std::string_view upstream : upstream_protocols()) {
    EXPECT_FALSE(fixtures_of(upstream).empty()) << upstream;
  }
  EXPECT_GE(chat_codecs().size(), 2u);
}

}  // namespace
}  // namespace sluice::pipeline
