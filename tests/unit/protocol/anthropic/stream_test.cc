#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>
#include <gtest/gtest.h>

#include "../../support/fixtures.h"
#include "protocol/anthropic/stream_decoder.h"
#include "protocol/anthropic/stream_encoder.h"

namespace sluice::protocol::anthropic {
namespace {
namespace json = boost::json;

std::string fixture(std::string_view name) { return test::read_fixture("anthropic", name); }

struct Sse {
  std::string event;
  std::string data;
};

// Splits `bytes` into SSE events, feeding the parser `chunk` bytes at a time (0 = all at once).
std::vector<Sse> parse_sse(std::string_view bytes, std::size_t chunk = 0) {
  std::vector<Sse> events;
  test::for_each_sse_event(bytes, chunk, [&](const codec::SseEvent& ev) {
    events.push_back({std::string(ev.event), std::string(ev.data)});
  });
  return events;
}

std::vector<ir::StreamEvent> decode(std::string_view bytes, std::size_t chunk = 0) {
  StreamDecoder decoder;
  std::vector<ir::StreamEvent> out;
  for (const Sse& e : parse_sse(bytes, chunk)) {
    decoder.decode(e.event, e.data, out);
  }
  decoder.on_end(out);
  return out;
}

std::string encode(const std::vector<ir::StreamEvent>& events, StreamEncoder* enc = nullptr) {
  StreamEncoder local;
  StreamEncoder& encoder = enc != nullptr ? *enc : local;
  std::string out;
  for (const ir::StreamEvent& e : events) {
    encoder.encode(e, out);
  }
  return out;
}

std::string describe(const ir::StreamEvent& e) {
  std::ostringstream s;
  s << static_cast<int>(e.kind) << "|" << e.index << "|" << e.text << "|" << e.id << "|" << e.name
    << "|" << e.model << "|" << static_cast<int>(e.finish) << "|" << e.usage.input_tokens << ","
    << e.usage.output_tokens << "," << e.usage.cache_read_tokens << ","
    << e.usage.cache_write_tokens << "|" << e.error.message();
  return s.str();
}

std::vector<std::string> describe(const std::vector<ir::StreamEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    out.push_back(describe(e));
  }
  return out;
}

// What a client observes from an Anthropic stream, independent of padding, pings, empty
// deltas and how deltas are split.
struct Observed {
  std::vector<std::string> sequence;  // event types (deltas collapsed per block), with indices
  struct Block {
    std::string type;
    std::string id;
    std::string name;
    std::string data;  // redacted_thinking
    std::string text;  // text_delta / thinking_delta concatenated
    std::string signature;
    std::string json;  // input_json_delta concatenated
    bool stopped = false;
  };
  std::map<std::int64_t, Block> blocks;
  json::value start_usage;
  json::value delta_usage;
  std::string message_id;
  std::string model;
  std::string stop_reason;
  json::value stop_sequence;
  std::string error_type;
  bool stopped = false;
};

std::string delta_field(std::string_view type) {
  if (type == "text_delta") {
    return "text";
  }
  if (type == "thinking_delta") {
    return "thinking";
  }
  if (type == "signature_delta") {
    return "signature";
  }
  return "partial_json";
}

Observed observe(std::string_view bytes) {
  Observed o;
  for (const Sse& e : parse_sse(bytes)) {
    if (e.event == "ping") {
      continue;
    }
    json::value v = json::parse(e.data);
    EXPECT_EQ(v.at("type").as_string(), e.event) << "event name and type differ";
    const std::string type = e.event;
    if (type == "message_start") {
      const json::value& m = v.at("message");
      o.message_id = json::value_to<std::string>(m.at("id"));
      o.model = json::value_to<std::string>(m.at("model"));
      o.start_usage = m.at("usage");
      o.sequence.push_back(type);
    } else if (type == "content_block_start") {
      const std::int64_t index = v.at("index").to_number<std::int64_t>();
      const json::object& cb = v.at("content_block").as_object();
      Observed::Block& b = o.blocks[index];
      b.type = json::value_to<std::string>(cb.at("type"));
      if (b.type == "tool_use") {
        b.id = json::value_to<std::string>(cb.at("id"));
        b.name = json::value_to<std::string>(cb.at("name"));
        EXPECT_EQ(cb.at("input"), json::object());
      } else if (b.type == "redacted_thinking") {
        b.data = json::value_to<std::string>(cb.at("data"));
      }
      o.sequence.push_back("start:" + std::to_string(index) + ":" + b.type);
    } else if (type == "content_block_delta") {
      const std::int64_t index = v.at("index").to_number<std::int64_t>();
      const std::string dtype = json::value_to<std::string>(v.at("delta").at("type"));
      const std::string piece = json::value_to<std::string>(v.at("delta").at(delta_field(dtype)));
      if (piece.empty()) {
        continue;
      }
      Observed::Block& b = o.blocks[index];
      if (dtype == "signature_delta") {
        b.signature += piece;
      } else if (dtype == "input_json_delta") {
        b.json += piece;
      } else {
        b.text += piece;
      }
      const std::string entry = "delta:" + std::to_string(index) + ":" + dtype;
      if (o.sequence.empty() || o.sequence.back() != entry) {
        o.sequence.push_back(entry);
      }
    } else if (type == "content_block_stop") {
      const std::int64_t index = v.at("index").to_number<std::int64_t>();
      o.blocks[index].stopped = true;
      o.sequence.push_back("stop:" + std::to_string(index));
    } else if (type == "message_delta") {
      o.stop_reason = json::value_to<std::string>(v.at("delta").at("stop_reason"));
      o.stop_sequence = v.at("delta").at("stop_sequence");
      o.delta_usage = v.at("usage");
      o.sequence.push_back(type);
    } else if (type == "message_stop") {
      o.stopped = true;
      o.sequence.push_back(type);
    } else if (type == "error") {
      o.error_type = json::value_to<std::string>(v.at("error").at("type"));
      o.sequence.push_back(type);
    } else {
      ADD_FAILURE() << "unexpected event " << type;
    }
  }
  return o;
}

// Anthropic usage objects restricted to the four counts the IR carries.
json::object counts(const json::value& usage) {
  json::object out;
  for (const char* k : {"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                        "output_tokens"}) {
    if (const json::value* v = usage.as_object().if_contains(k)) {
      out[k] = *v;
    }
  }
  return out;
}

class StreamFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(StreamFixture, DecodeEncodeGivesTheSameObservableStream) {
  const std::string bytes = fixture(GetParam());
  ASSERT_FALSE(bytes.empty());
  const std::vector<ir::StreamEvent> events = decode(bytes);
  ASSERT_FALSE(events.empty());
  EXPECT_NE(events.back().kind, ir::StreamEventKind::kError) << events.back().error.message();

  StreamEncoder encoder;
  const std::string out = encode(events, &encoder);
  EXPECT_TRUE(encoder.finished());
  EXPECT_FALSE(encoder.error().has_value());

  const Observed want = observe(bytes);
  const Observed got = observe(out);
  EXPECT_EQ(got.sequence, want.sequence);
  EXPECT_EQ(got.message_id, want.message_id);
  EXPECT_EQ(got.model, want.model);
  // message_start states no output (the upstream's is 1 or so): message_delta has the count,
  // and clients that add the two would otherwise count it twice.
  json::object want_start = counts(want.start_usage);
  if (want_start.contains("output_tokens")) {
    want_start["output_tokens"] = 0;
  }
  EXPECT_EQ(counts(got.start_usage), want_start);
  EXPECT_EQ(counts(got.delta_usage), counts(want.delta_usage));
  EXPECT_EQ(got.stop_reason, want.stop_reason);
  EXPECT_EQ(got.stop_sequence, want.stop_sequence);
  EXPECT_TRUE(got.stopped);
  ASSERT_EQ(got.blocks.size(), want.blocks.size());
  for (const auto& [index, w] : want.blocks) {
    const Observed::Block& g = got.blocks.at(index);
    EXPECT_EQ(g.type, w.type) << index;
    EXPECT_EQ(g.id, w.id) << index;
    EXPECT_EQ(g.name, w.name) << index;
    EXPECT_EQ(g.data, w.data) << index;
    EXPECT_EQ(g.text, w.text) << index;
    EXPECT_EQ(g.signature, w.signature) << index;
    EXPECT_EQ(g.json, w.json) << index;
    EXPECT_TRUE(g.stopped) << index;
  }
  // Every event is framed as "event: <type>\ndata: <json>\n\n".
  EXPECT_EQ(out.rfind("event: message_start\ndata: {", 0), 0u);
  EXPECT_EQ(out.substr(out.size() - 2), "\n\n");
}

TEST_P(StreamFixture, DecodingIsIndependentOfChunkBoundaries) {
  const std::string bytes = fixture(GetParam());
  const auto whole = describe(decode(bytes));
  for (std::size_t chunk : {1, 2, 3, 5, 7, 13, 64, 1000}) {
    EXPECT_EQ(describe(decode(bytes, chunk)), whole) << "chunk " << chunk;
  }
}

INSTANTIATE_TEST_SUITE_P(Anthropic, StreamFixture,
                         ::testing::Values("stream-text.sse", "stream-text-single-delta.sse",
                                           "stream-cache-read.sse", "stream-cache-write.sse",
                                           "stream-redacted-thinking.sse",
                                           "stream-thinking-signature.sse", "stream-tool-use.sse",
                                           "stream-text-then-tool-use-no-args.sse"));

TEST(StreamDecoder, MapsFixtureEventsToIr) {
  const auto events = decode(fixture("stream-cache-read.sse"));
  ASSERT_GE(events.size(), 6u);
  EXPECT_EQ(events[0].kind, ir::StreamEventKind::kStart);
  EXPECT_EQ(events[0].id, "msg_011CczBWmS717HsNJwaC9mWM");
  EXPECT_EQ(events[0].model, "claude-sonnet-4-6");
  EXPECT_EQ(events[1].kind, ir::StreamEventKind::kUsage);
  EXPECT_EQ(events[1].usage.input_tokens, 3u + 18639u);
  EXPECT_EQ(events[1].usage.cache_read_tokens, 18639u);
  EXPECT_EQ(events[2].kind, ir::StreamEventKind::kTextDelta);
  EXPECT_EQ(events[2].text, "OK");
  EXPECT_EQ(events[3].kind, ir::StreamEventKind::kFinish);
  EXPECT_EQ(events[3].finish, ir::FinishReason::kLength);
  EXPECT_EQ(events[4].kind, ir::StreamEventKind::kUsage);
  EXPECT_EQ(events[4].usage.output_tokens, 1u);
  EXPECT_EQ(events[5].kind, ir::StreamEventKind::kDone);
  EXPECT_EQ(events.size(), 6u);
}

TEST(StreamDecoder, ToolIndexCountsToolBlocksNotContentBlocks) {
  const auto events = decode(fixture("stream-text-then-tool-use-no-args.sse"));
  bool saw_start = false;
  for (const auto& e : events) {
    if (e.kind == ir::StreamEventKind::kToolCallStart) {
      saw_start = true;
      EXPECT_EQ(e.index, 0u);  // content block 1, first tool
      EXPECT_EQ(e.id, "toolu_01QE1WLsSVp5hy5Q3GmGTmjP");
      EXPECT_EQ(e.name, "updateIssueList");
    }
    EXPECT_NE(e.kind, ir::StreamEventKind::kToolCallDelta);  // only "" fragments upstream
  }
  EXPECT_TRUE(saw_start);
}

TEST(StreamDecoder, ThinkingSignatureAndRedactedThinking) {
  const auto thinking = decode(fixture("stream-thinking-signature.sse"));
  std::string reasoning;
  std::string signature;
  for (const auto& e : thinking) {
    if (e.kind == ir::StreamEventKind::kReasoningDelta) {
      reasoning += e.text;
    } else if (e.kind == ir::StreamEventKind::kReasoningSignature) {
      signature += e.text;
    }
  }
  EXPECT_EQ(reasoning.rfind("This is a straightforward question about pedestrian safety.", 0), 0u);
  EXPECT_EQ(signature.rfind("EvMCCkYICxgCKkCHP2cSuEdcJK", 0), 0u);

  const auto redacted = decode(fixture("stream-redacted-thinking.sse"));
  int count = 0;
  for (const auto& e : redacted) {
    if (e.kind == ir::StreamEventKind::kRedactedReasoning) {
      ++count;
      EXPECT_FALSE(e.text.empty());
    }
  }
  EXPECT_EQ(count, 2);
}

TEST(StreamDecoder, OverloadedErrorEvent) {
  const auto events = decode(fixture("stream-error-overloaded.sse"));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, ir::StreamEventKind::kError);
  EXPECT_EQ(events[0].error.kind(), ErrorKind::kUpstreamStatus);
  EXPECT_EQ(events[0].error.http_status(), 529);
  EXPECT_EQ(events[0].error.code(), "overloaded_error");
  EXPECT_EQ(events[0].error.message(), "Overloaded");

  const Observed o = observe(encode(events));
  EXPECT_EQ(o.sequence, std::vector<std::string>{"error"});
  EXPECT_EQ(o.error_type, "overloaded_error");
}

TEST(StreamDecoder, UntranslatableInputIsAnExplicitError) {
  struct Case {
    const char* event;
    const char* data;
    const char* message;
  };
  const Case cases[] = {
      {"content_block_start",
       R"({"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s","name":"web_search","input":{}}})",
       "cannot translate content block 'server_tool_use'"},
      {"content_block_delta",
       R"({"type":"content_block_delta","index":5,"delta":{"type":"text_delta","text":"x"}})",
       "cannot translate content_block_delta: unknown block index or missing delta"},
      {"content_block_delta", "{not json",
       "cannot translate event 'content_block_delta': data is not a JSON object"},
  };
  for (const Case& c : cases) {
    StreamDecoder decoder;
    std::vector<ir::StreamEvent> out;
    decoder.decode("message_start",
                   R"({"type":"message_start","message":{"id":"msg_1","model":"m"}})", out);
    decoder.decode(c.event, c.data, out);
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.back().kind, ir::StreamEventKind::kError) << c.event;
    EXPECT_EQ(out.back().error.kind(), ErrorKind::kUpstreamProtocol);
    EXPECT_EQ(out.back().error.message(), c.message);
    EXPECT_TRUE(decoder.finished());
    const std::size_t n = out.size();
    decoder.decode("message_stop", R"({"type":"message_stop"})", out);
    EXPECT_EQ(out.size(), n);  // nothing after the error
  }
}

TEST(StreamDecoder, UnknownEventTypesAreSkippedAndCountedAsDrift) {
  // Anthropic may add event types and asks clients to tolerate them: skipped, counted once per
  // type, before and after message_start, with or without an event name.
  StreamDecoder decoder;
  std::vector<ir::StreamEvent> out;
  decoder.decode("web_search_progress", R"({"type":"web_search_progress"})", out);
  decoder.decode("message_start",
                 R"({"type":"message_start","message":{"id":"msg_1","model":"m"}})", out);
  decoder.decode("web_search_progress", "not even JSON", out);
  decoder.decode("", R"({"type":"message_heartbeat"})", out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, ir::StreamEventKind::kStart);
  EXPECT_FALSE(decoder.finished());
  EXPECT_EQ(decoder.unknown_fields(), 2u);
}

TEST(StreamDecoder, CitationsDeltaIsNotDropped) {
  StreamDecoder decoder;
  std::vector<ir::StreamEvent> out;
  decoder.decode(
      "content_block_start",
      R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})", out);
  decoder.decode(
      "content_block_delta",
      R"({"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}})",
      out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, ir::StreamEventKind::kError);
}

// Found by tests/fuzz/anthropic_stream_fuzz: events out of order must end the stream with an
// error rather than break the IR ordering contract (kStart first, kFinish once before kDone).
TEST(StreamDecoder, OutOfOrderEventsAreErrors) {
  const std::string start = R"({"type":"message_start","message":{"id":"msg_1","model":"m"}})";
  const std::string delta = R"({"type":"message_delta","delta":{"stop_reason":"end_turn"}})";
  struct Case {
    std::vector<Sse> events;
    const char* message;
  };
  const Case cases[] = {
      {{{"content_block_start",
         R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":"hi"}})"}},
       "cannot translate content_block_start before message_start"},
      {{{"message_start", start}, {"message_stop", R"({"type":"message_stop"})"}},
       "cannot translate message_stop before message_delta"},
      {{{"message_start", start}, {"message_delta", delta}, {"message_delta", delta}},
       "cannot translate a second message_delta"},
  };
  for (const Case& c : cases) {
    StreamDecoder decoder;
    std::vector<ir::StreamEvent> out;
    for (const Sse& e : c.events) {
      decoder.decode(e.event, e.data, out);
    }
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.back().kind, ir::StreamEventKind::kError) << c.message;
    EXPECT_EQ(out.back().error.message(), c.message);
    EXPECT_TRUE(decoder.finished());
  }
}

TEST(StreamDecoder, TruncatedStreamEndsWithAnError) {
  std::string bytes = fixture("stream-text.sse");
  bytes.resize(bytes.find("event: message_delta"));
  const auto events = decode(bytes);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, ir::StreamEventKind::kError);
  EXPECT_EQ(events.back().error.message(), "upstream stream ended before message_stop");
}

// --- Encoder on hand-built IR sequences (as an OpenAI upstream would produce them) ---

ir::StreamEvent ev(ir::StreamEventKind kind) {
  ir::StreamEvent e;
  e.kind = kind;
  return e;
}
ir::StreamEvent start(std::string id, std::string model) {
  auto e = ev(ir::StreamEventKind::kStart);
  e.id = std::move(id);
  e.model = std::move(model);
  return e;
}
ir::StreamEvent text(std::string t) {
  auto e = ev(ir::StreamEventKind::kTextDelta);
  e.text = std::move(t);
  return e;
}
ir::StreamEvent tool_start(std::uint32_t index, std::string id, std::string name) {
  auto e = ev(ir::StreamEventKind::kToolCallStart);
  e.index = index;
  e.id = std::move(id);
  e.name = std::move(name);
  return e;
}
ir::StreamEvent tool_delta(std::uint32_t index, std::string fragment) {
  auto e = ev(ir::StreamEventKind::kToolCallDelta);
  e.index = index;
  e.text = std::move(fragment);
  return e;
}
ir::StreamEvent finish(ir::FinishReason reason, std::string seq = "") {
  auto e = ev(ir::StreamEventKind::kFinish);
  e.finish = reason;
  e.text = std::move(seq);
  return e;
}
ir::StreamEvent usage(ir::Usage u) {
  auto e = ev(ir::StreamEventKind::kUsage);
  e.usage = u;
  return e;
}

// Asserts that no block's events interleave with another's: start, deltas, stop, next start.
void expect_contiguous_blocks(const std::vector<std::string>& sequence) {
  int open = -1;
  int next = 0;
  for (const std::string& s : sequence) {
    if (s.rfind("start:", 0) == 0) {
      EXPECT_EQ(open, -1) << "block started while another is open";
      open = std::stoi(s.substr(6));
      EXPECT_EQ(open, next++) << "blocks not numbered sequentially";
    } else if (s.rfind("delta:", 0) == 0) {
      EXPECT_EQ(std::stoi(s.substr(6)), open) << s;
    } else if (s.rfind("stop:", 0) == 0) {
      EXPECT_EQ(std::stoi(s.substr(5)), open) << s;
      open = -1;
    }
  }
  EXPECT_EQ(open, -1);
}

TEST(StreamEncoder, InterleavedParallelToolCallsBecomeContiguousBlocks) {
  StreamEncoder encoder;
  std::string out;
  for (const auto& e : {start("chatcmpl-1", "gpt-4o"), text("Let me check."),
                        tool_start(0, "call_a", "get_weather"), tool_delta(0, R"({"ci)"),
                        tool_start(1, "call_b", "get_time"), tool_delta(1, R"({"tz":)"),
                        tool_delta(0, R"(ty":"Paris"})")}) {
    encoder.encode(e, out);
  }
  // Call 0 became complete, so call 1 (waiting) was written right away and is now open.
  EXPECT_NE(out.find(R"("id":"toolu_call_b")"), std::string::npos);
  for (const auto& e :
       {tool_delta(1, R"("CET"})"), finish(ir::FinishReason::kToolCalls),
        usage({.input_tokens = 20, .output_tokens = 9}), ev(ir::StreamEventKind::kDone)}) {
    encoder.encode(e, out);
  }
  const Observed o = observe(out);
  expect_contiguous_blocks(o.sequence);
  ASSERT_EQ(o.blocks.size(), 3u);
  EXPECT_EQ(o.blocks.at(0).text, "Let me check.");
  EXPECT_EQ(o.blocks.at(1).id, "toolu_call_a");
  EXPECT_EQ(o.blocks.at(1).name, "get_weather");
  EXPECT_EQ(o.blocks.at(1).json, R"({"city":"Paris"})");
  EXPECT_EQ(o.blocks.at(2).id, "toolu_call_b");
  EXPECT_EQ(o.blocks.at(2).name, "get_time");
  EXPECT_EQ(o.blocks.at(2).json, R"({"tz":"CET"})");
  EXPECT_EQ(o.stop_reason, "tool_use");
  EXPECT_EQ(o.message_id, "msg_chatcmpl-1");
  EXPECT_EQ(o.delta_usage.at("input_tokens"), 20);
  EXPECT_EQ(o.delta_usage.at("output_tokens"), 9);
  EXPECT_TRUE(o.stopped);
}

TEST(StreamEncoder, IncompleteParallelCallsAreFlushedWholeAtFinish) {
  const std::string out = encode(
      {start("c", "m"), tool_start(0, "a", "f"), tool_start(1, "b", "g"), tool_delta(1, "{\"y\""),
       tool_delta(0, "{\"x\""), tool_delta(1, ":2}"), tool_delta(0, ":1"), tool_delta(0, "}"),
       finish(ir::FinishReason::kToolCalls), ev(ir::StreamEventKind::kDone)});
  const Observed o = observe(out);
  expect_contiguous_blocks(o.sequence);
  ASSERT_EQ(o.blocks.size(), 2u);
  EXPECT_EQ(o.blocks.at(0).id, "toolu_a");
  EXPECT_EQ(o.blocks.at(0).json, R"({"x":1})");
  EXPECT_EQ(o.blocks.at(1).id, "toolu_b");
  EXPECT_EQ(o.blocks.at(1).json, R"({"y":2})");
}

TEST(StreamEncoder, SequentialToolCallsStreamLive) {
  StreamEncoder encoder;
  std::string out;
  for (const auto& e :
       {start("c", "m"), tool_start(0, "a", "f"), tool_delta(0, "{}"), tool_start(1, "b", "g")}) {
    encoder.encode(e, out);
  }
  const std::size_t before = out.size();
  encoder.encode(tool_delta(1, R"({"q":)"), out);
  // The second call's block is open, so its fragment is written immediately.
  EXPECT_NE(
      out.find(
          R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"q\":"}})",
          before),
      std::string::npos)
      << out.substr(before);
}

TEST(StreamEncoder, TextIsWrittenImmediately) {
  StreamEncoder encoder;
  std::string out;
  encoder.encode(start("c", "m"), out);
  EXPECT_TRUE(out.empty());  // message_start waits for something to say
  encoder.encode(text("Hel"), out);
  EXPECT_NE(out.find("event: message_start\n"), std::string::npos);
  EXPECT_NE(out.find(R"("delta":{"type":"text_delta","text":"Hel"})"), std::string::npos);
  const std::size_t before = out.size();
  encoder.encode(text("lo"), out);
  EXPECT_EQ(out.substr(before),
            "event: content_block_delta\ndata: "
            R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}})"
            "\n\n");
}

TEST(StreamEncoder, MessageStartCarriesUsageKnownBeforeContent) {
  const std::string out = encode(
      {start("msg_1", "m"),
       usage({.input_tokens = 1006 + 45696, .output_tokens = 1, .cache_read_tokens = 45696}),
       text("x"), finish(ir::FinishReason::kStop),
       usage({.input_tokens = 1006 + 45696, .output_tokens = 86, .cache_read_tokens = 45696}),
       ev(ir::StreamEventKind::kDone)});
  const Observed o = observe(out);
  EXPECT_EQ(o.start_usage.at("input_tokens"), 1006);
  EXPECT_EQ(o.start_usage.at("cache_read_input_tokens"), 45696);
  EXPECT_EQ(o.delta_usage.at("output_tokens"), 86);
  EXPECT_EQ(o.stop_reason, "end_turn");
  EXPECT_TRUE(o.stop_sequence.is_null());
}

TEST(StreamEncoder, StopSequenceAndDefaultStopReason) {
  const Observed seq =
      observe(encode({start("c", "m"), text("a"), finish(ir::FinishReason::kStopSequence, "###"),
                      ev(ir::StreamEventKind::kDone)}));
  EXPECT_EQ(seq.stop_reason, "stop_sequence");
  EXPECT_EQ(seq.stop_sequence, "###");
  const Observed none =
      observe(encode({start("c", "m"), text("a"), ev(ir::StreamEventKind::kDone)}));
  EXPECT_EQ(none.stop_reason, "end_turn");
}

TEST(StreamEncoder, InconsistentUsageIsClampedNotAnError) {
  StreamEncoder encoder;
  const std::string out =
      encode({start("c", "m"), text("a"), finish(ir::FinishReason::kStop),
              usage({.input_tokens = 5, .output_tokens = 1, .cache_read_tokens = 10}),
              ev(ir::StreamEventKind::kDone)},
             &encoder);
  const Observed o = observe(out);
  ASSERT_FALSE(o.sequence.empty());
  EXPECT_EQ(o.sequence.back(), "message_stop");
  EXPECT_TRUE(o.stopped);
  EXPECT_FALSE(encoder.error().has_value());
  EXPECT_EQ(o.delta_usage.at("input_tokens"), 0);
  EXPECT_EQ(o.delta_usage.at("cache_read_input_tokens"), 10);
  EXPECT_EQ(o.delta_usage.at("output_tokens"), 1);
  EXPECT_GE(encoder.usage_clamped(), 1u);
  EXPECT_TRUE(encoder.finished());
}

TEST(StreamEncoder, ErrorMidStreamIsTheLastEvent) {
  StreamEncoder encoder;
  auto err = ev(ir::StreamEventKind::kError);
  err.error = Error(ErrorKind::kUpstreamTimeout, "upstream timed out");
  const std::string out =
      encode({start("c", "m"), text("partial"), err, text("more"), ev(ir::StreamEventKind::kDone)},
             &encoder);
  const Observed o = observe(out);
  ASSERT_FALSE(o.sequence.empty());
  EXPECT_EQ(o.sequence.back(), "error");
  EXPECT_EQ(o.error_type, "timeout_error");
  EXPECT_EQ(o.blocks.at(0).text, "partial");
  EXPECT_FALSE(o.stopped);
  EXPECT_EQ(out.find("more"), std::string::npos);
  EXPECT_TRUE(encoder.finished());
}

TEST(StreamEncoder, ArgumentsForAClosedToolBlockAreAnError) {
  const std::string out =
      encode({start("c", "m"), tool_start(0, "a", "f"), tool_delta(0, "{}"), text("then text"),
              tool_delta(0, " "), tool_delta(0, "x"), ev(ir::StreamEventKind::kDone)});
  const Observed o = observe(out);
  EXPECT_EQ(o.sequence.back(), "error");
  EXPECT_EQ(o.blocks.at(0).json, "{}");
}

TEST(StreamEncoder, DeltaForUnknownToolIsAnError) {
  const Observed o = observe(encode({start("c", "m"), tool_delta(3, "{}")}));
  EXPECT_EQ(o.sequence, std::vector<std::string>{"error"});
}

TEST(StreamEncoder, ThinkingThenSignatureThenNewThinkingBlock) {
  auto reasoning = [](std::string t) {
    auto e = ev(ir::StreamEventKind::kReasoningDelta);
    e.text = std::move(t);
    return e;
  };
  auto signature = ev(ir::StreamEventKind::kReasoningSignature);
  signature.text = "sig";
  auto redacted = ev(ir::StreamEventKind::kRedactedReasoning);
  redacted.text = "opaque";
  const Observed o =
      observe(encode({start("c", "m"), reasoning("a"), reasoning("b"), signature, reasoning("c"),
                      redacted, text("answer"), ev(ir::StreamEventKind::kDone)}));
  expect_contiguous_blocks(o.sequence);
  ASSERT_EQ(o.blocks.size(), 4u);
  EXPECT_EQ(o.blocks.at(0).type, "thinking");
  EXPECT_EQ(o.blocks.at(0).text, "ab");
  EXPECT_EQ(o.blocks.at(0).signature, "sig");
  EXPECT_EQ(o.blocks.at(1).type, "thinking");
  EXPECT_EQ(o.blocks.at(1).text, "c");
  EXPECT_EQ(o.blocks.at(2).type, "redacted_thinking");
  EXPECT_EQ(o.blocks.at(2).data, "opaque");
  EXPECT_EQ(o.blocks.at(3).text, "answer");
}

TEST(StreamEncoder, ToolIdsAreDeterministicAcrossStreams) {
  auto run = [] {
    return observe(
        encode({start("chatcmpl-9", "m"), tool_start(0, "call:x", "f"), tool_start(1, "", "g"),
                finish(ir::FinishReason::kToolCalls), ev(ir::StreamEventKind::kDone)}));
  };
  const Observed a = run();
  const Observed b = run();
  EXPECT_EQ(a.blocks.at(0).id, b.blocks.at(0).id);
  EXPECT_EQ(a.blocks.at(0).id.rfind("toolu_call_x_", 0), 0u);
  EXPECT_EQ(a.blocks.at(1).id, "toolu_msg_chatcmpl-9_1");
}

}  // namespace
}  // namespace sluice::protocol::anthropic

namespace sluice::protocol::anthropic {
namespace {

// Several frameworks read input usage only from message_start. When the upstream reports usage
// last (OpenAI), message_start carries the gateway's estimate and message_delta the exact
// figures; when the upstream reported it first (Anthropic), message_start has the real ones.
TEST(StreamEncoderEstimate, MessageStartCarriesTheEstimateUntilTheUpstreamReports) {
  auto run = [](std::vector<ir::StreamEvent> events) {
    StreamEncoder encoder(/*estimated_input_tokens=*/250);
    std::string out;
    for (const ir::StreamEvent& e : events) {
      encoder.encode(e, out);
    }
    return out;
  };
  auto make = [](ir::StreamEventKind kind) {
    ir::StreamEvent e;
    e.kind = kind;
    return e;
  };
  ir::StreamEvent start = make(ir::StreamEventKind::kStart);
  start.id = "c1";
  start.model = "m";
  ir::StreamEvent text = make(ir::StreamEventKind::kTextDelta);
  text.text = "hi";
  ir::StreamEvent usage = make(ir::StreamEventKind::kUsage);
  usage.usage = ir::Usage{.input_tokens = 12, .output_tokens = 3};
  ir::StreamEvent finish = make(ir::StreamEventKind::kFinish);
  finish.finish = ir::FinishReason::kStop;

  const std::string late = run({start, text, finish, usage, make(ir::StreamEventKind::kDone)});
  const auto start_at = late.find("event: message_start");
  const auto delta_at = late.find("event: message_delta");
  ASSERT_NE(start_at, std::string::npos);
  ASSERT_NE(delta_at, std::string::npos);
  EXPECT_NE(late.substr(start_at, delta_at - start_at).find(R"("input_tokens":250)"),
            std::string::npos)
      << late;
  EXPECT_NE(late.substr(delta_at).find(R"("input_tokens":12)"), std::string::npos) << late;

  const std::string early = run({start, usage, text, finish, make(ir::StreamEventKind::kDone)});
  EXPECT_NE(early.find(R"("input_tokens":12)"), std::string::npos);
  EXPECT_EQ(early.find(R"("input_tokens":250)"), std::string::npos) << early;
}

}  // namespace
}  // namespace sluice::protocol::anthropic
