#include "protocol/openai_chat/stream_encoder.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include "../../support/fixtures.h"
#include "protocol/anthropic/stream_decoder.h"
#include "protocol/openai_chat/conventions.h"
#include "protocol/openai_chat/ingress.h"
#include "protocol/openai_chat/response.h"
#include "protocol/openai_chat/stream_decoder.h"

// openai_chat::StreamEncoder: IR -> chat.completion.chunk SSE. Round trips through the
// recorded OpenAI and Anthropic streams (decoded by our decoders, encoded, decoded again by the
// OpenAI decoder), the framing and ordering rules, and the events it refuses or drops.
namespace sluice::protocol::openai_chat {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using Kind = ir::StreamEventKind;

constexpr std::int64_t kCreated = 1'750'000'000;

// A JSON string's text ("" for anything else), for comparisons with std::string.
std::string str(const json::value& v) { return v.is_string() ? std::string(v.as_string()) : ""; }

// Steps at which the decoders are fed: 1 puts a split at every byte (every split point), the
// others cut events at varying places; 0 is whole.
constexpr std::size_t kSteps[] = {1, 2, 3, 7, 64, 1000};

template <typename Decoder>
std::vector<ir::StreamEvent> decode_with(std::string_view bytes, std::size_t step = 0) {
  Decoder decoder;
  std::vector<ir::StreamEvent> out;
  test::for_each_sse_event(bytes, step,
                           [&](const codec::SseEvent& ev) { decoder.on_event(ev, out); });
  decoder.on_end(out);
  return out;
}

std::vector<ir::StreamEvent> decode_openai(std::string_view bytes, std::size_t step = 0) {
  return decode_with<StreamDecoder>(bytes, step);
}

std::vector<ir::StreamEvent> decode_anthropic(std::string_view bytes, std::size_t step = 0) {
  return decode_with<anthropic::StreamDecoder>(bytes, step);
}

std::string encode(const std::vector<ir::StreamEvent>& events, bool include_usage,
                   StreamEncoder* enc = nullptr) {
  StreamEncoder local(include_usage, kCreated);
  StreamEncoder& encoder = enc != nullptr ? *enc : local;
  std::string out;
  for (const ir::StreamEvent& e : events) {
    encoder.encode(e, out);
  }
  return out;
}

// One line per IR event with every field a codec can set, for exact comparisons.
std::vector<std::string> describe(const std::vector<ir::StreamEvent>& events) {
  std::vector<std::string> out;
  for (const ir::StreamEvent& e : events) {
    std::ostringstream s;
    s << static_cast<int>(e.kind) << " #" << e.index << " text=" << e.text << " id=" << e.id
      << " name=" << e.name << " model=" << e.model << " finish=" << ir::to_string(e.finish)
      << " usage=" << e.usage.input_tokens << "/" << e.usage.output_tokens << "/"
      << e.usage.cache_read_tokens << "/" << e.usage.cache_write_tokens << "/"
      << e.usage.reasoning_tokens << " error=" << e.error.message();
    out.push_back(s.str());
  }
  return out;
}

// The encoder's output read strictly: each event exactly "data: <payload>\n\n" with a one-line
// payload, chunks that share id / object / created / model, nothing after [DONE] or an error.
struct Wire {
  std::vector<json::object> chunks;  // every chat.completion.chunk, in order
  std::optional<json::object> error;
  bool done = false;
};

Wire read_wire(std::string_view out, std::string_view want_id = {}) {
  Wire w;
  while (!out.empty()) {
    EXPECT_FALSE(w.done || w.error) << "bytes after the end: " << out;
    if (!out.starts_with("data: ")) {
      ADD_FAILURE() << "event does not start with 'data: ': " << out;
      return w;
    }
    const std::size_t end = out.find("\n\n");
    if (end == std::string_view::npos) {
      ADD_FAILURE() << "event not ended by a blank line: " << out;
      return w;
    }
    const std::string_view payload = out.substr(6, end - 6);
    out.remove_prefix(end + 2);
    EXPECT_EQ(payload.find('\n'), std::string_view::npos) << payload;
    if (payload == "[DONE]") {
      w.done = true;
      continue;
    }
    boost::system::error_code ec;
    json::value v = json::parse(payload, ec);
    if (ec || !v.is_object()) {
      ADD_FAILURE() << "payload is not a JSON object: " << payload;
      return w;
    }
    json::object o = std::move(v.as_object());
    if (o.contains("error")) {
      w.error = std::move(o);
      continue;
    }
    EXPECT_EQ(o.at("object"), "chat.completion.chunk");
    EXPECT_EQ(o.at("created").to_number<std::int64_t>(), kCreated);
    EXPECT_TRUE(o.at("id").as_string().starts_with("chatcmpl-")) << o.at("id");
    if (!want_id.empty()) {
      EXPECT_EQ(str(o.at("id")), want_id);
    }
    if (!w.chunks.empty()) {
      EXPECT_EQ(o.at("id"), w.chunks.front().at("id"));
      EXPECT_EQ(o.at("model"), w.chunks.front().at("model"));
    }
    w.chunks.push_back(std::move(o));
  }
  return w;
}

// The shape rules every encoded stream keeps: role chunk first, one finish chunk (empty delta)
// after all content, the usage chunk ("choices":[]) only when asked for and then last, "usage"
// null on every other chunk exactly when asked for, [DONE] last.
void expect_shape(const Wire& w, bool include_usage) {
  ASSERT_FALSE(w.chunks.empty());
  const json::value role_delta = json::parse(R"({"role":"assistant","content":""})");
  EXPECT_EQ(w.chunks.front().at("choices").at(0).at("delta"), role_delta);
  EXPECT_TRUE(w.done);
  int finishes = 0;
  for (std::size_t i = 0; i < w.chunks.size(); ++i) {
    const json::object& c = w.chunks[i];
    const json::array& choices = c.at("choices").as_array();
    if (choices.empty()) {
      EXPECT_TRUE(include_usage) << "usage chunk without include_usage";
      EXPECT_EQ(i, w.chunks.size() - 1) << "usage chunk is not the last chunk";
      const json::object& u = c.at("usage").as_object();
      EXPECT_EQ(u.at("total_tokens").to_number<std::uint64_t>(),
                u.at("prompt_tokens").to_number<std::uint64_t>() +
                    u.at("completion_tokens").to_number<std::uint64_t>());
      continue;
    }
    ASSERT_EQ(choices.size(), 1u);
    EXPECT_EQ(choices[0].at("index"), 0);
    if (include_usage) {
      EXPECT_TRUE(c.at("usage").is_null()) << i;
    } else {
      EXPECT_FALSE(c.contains("usage")) << i;
    }
    const json::value& finish = choices[0].at("finish_reason");
    if (!finish.is_null()) {
      ++finishes;
      EXPECT_EQ(choices[0].at("delta"), json::object()) << "finish chunk carries content";
    } else {
      EXPECT_EQ(finishes, 0) << "content after the finish chunk";
    }
  }
  EXPECT_EQ(finishes, 1);
}

// What a client takes from a stream: IR events folded per kind.
struct Summary {
  std::string id;
  std::string model;
  std::string text;
  std::string reasoning;
  struct Tool {
    std::string id;
    std::string name;
    std::string arguments;
    bool operator==(const Tool&) const = default;
  };
  std::vector<Tool> tools;
  ir::FinishReason finish = ir::FinishReason::kUnset;
  int usages = 0;
  ir::Usage usage;
  std::uint32_t dropped = 0;  // signatures and redacted reasoning
  bool done = false;
};

Summary summarize(const std::vector<ir::StreamEvent>& events) {
  Summary s;
  for (const ir::StreamEvent& e : events) {
    switch (e.kind) {
      case Kind::kStart:
        s.id = e.id;
        s.model = e.model;
        break;
      case Kind::kTextDelta:
        s.text += e.text;
        break;
      case Kind::kReasoningDelta:
        s.reasoning += e.text;
        break;
      case Kind::kReasoningSignature:
      case Kind::kRedactedReasoning:
        ++s.dropped;
        break;
      case Kind::kToolCallStart:
        EXPECT_EQ(e.index, s.tools.size());
        s.tools.push_back({e.id, e.name, ""});
        break;
      case Kind::kToolCallDelta:
        if (e.index < s.tools.size()) {
          s.tools[e.index].arguments += e.text;
        } else {
          ADD_FAILURE() << "delta for tool call " << e.index << " never started";
        }
        break;
      case Kind::kUsage:
        ++s.usages;
        s.usage = e.usage;
        break;
      case Kind::kFinish:
        s.finish = e.finish;
        break;
      case Kind::kError:
        ADD_FAILURE() << "unexpected error: " << e.error.message();
        break;
      case Kind::kDone:
        s.done = true;
        break;
    }
  }
  return s;
}

std::vector<fs::path> fixtures(std::string_view corpus) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(test::fixture_dir(corpus))) {
    if (entry.path().extension() == ".sse") {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// (a) Every recorded OpenAI stream: decode -> encode -> decode gives the same IR events, with
// and without include_usage (without it, the usage event is all that goes missing).
TEST(OpenAiStreamEncoder, OpenAiFixturesRoundTrip) {
  int checked = 0;
  for (const fs::path& path : fixtures("openai-chat")) {
    SCOPED_TRACE(path.filename().string());
    const std::string bytes = test::read_file(path);
    const std::vector<ir::StreamEvent> events = decode_openai(bytes);
    ASSERT_EQ(events.back().kind, Kind::kDone);
    const std::vector<std::string> want = describe(events);

    for (bool include_usage : {true, false}) {
      SCOPED_TRACE(include_usage ? "include_usage" : "no usage");
      StreamEncoder encoder(include_usage, kCreated);
      const std::string out = encode(events, include_usage, &encoder);
      EXPECT_TRUE(encoder.finished());
      EXPECT_FALSE(encoder.error());
      EXPECT_EQ(encoder.dropped_events(), 0u);
      const Wire wire = read_wire(out, events.front().id);
      expect_shape(wire, include_usage);

      std::vector<ir::StreamEvent> expected = events;
      if (!include_usage) {
        std::erase_if(expected, [](const ir::StreamEvent& e) { return e.kind == Kind::kUsage; });
      }
      EXPECT_EQ(describe(decode_openai(out)), describe(expected));
      for (std::size_t step : kSteps) {
        SCOPED_TRACE(step);
        EXPECT_EQ(describe(decode_openai(out, step)), describe(expected));
      }
    }
    // The fixture itself, fed at every split point, gives the same IR and so the same bytes.
    const std::string reference = encode(events, true);
    for (std::size_t step : kSteps) {
      SCOPED_TRACE(step);
      const std::vector<ir::StreamEvent> pieces = decode_openai(bytes, step);
      EXPECT_EQ(describe(pieces), want);
      EXPECT_EQ(encode(pieces, true), reference);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

// What an Anthropic stream says, read from its JSON with a DOM (independently of our decoder),
// in the terms an OpenAI client will see.
struct AnthropicWant {
  std::string id;
  std::string model;
  std::string text;
  std::string reasoning;
  std::vector<Summary::Tool> tools;
  std::string stop_reason;
  std::uint64_t input = 0, cache_write = 0, cache_read = 0, output = 0;
  std::uint32_t dropped = 0;
  std::string error_type;
};

AnthropicWant anthropic_want(std::string_view bytes) {
  AnthropicWant w;
  std::map<std::int64_t, std::size_t> tool_of_block;
  auto read_usage = [&](const json::value& u) {
    const json::object& o = u.as_object();
    auto set = [&](const char* key, std::uint64_t& field) {
      if (const json::value* v = o.if_contains(key); v && !v->is_null()) {
        field = v->to_number<std::uint64_t>();
      }
    };
    set("input_tokens", w.input);
    set("cache_creation_input_tokens", w.cache_write);
    set("cache_read_input_tokens", w.cache_read);
    set("output_tokens", w.output);
  };
  test::for_each_sse_event(bytes, 0, [&](const codec::SseEvent& ev) {
    const json::object o = json::parse(ev.data).as_object();
    const std::string_view type = o.at("type").as_string();
    if (type == "message_start") {
      w.id = o.at("message").at("id").as_string();
      w.model = o.at("message").at("model").as_string();
      read_usage(o.at("message").at("usage"));
    } else if (type == "content_block_start") {
      const json::object& cb = o.at("content_block").as_object();
      const std::string_view cb_type = cb.at("type").as_string();
      if (cb_type == "text") {
        w.text += cb.at("text").as_string();
      } else if (cb_type == "thinking") {
        w.reasoning += cb.at("thinking").as_string();
        w.dropped += cb.at("signature").as_string().empty() ? 0 : 1;
      } else if (cb_type == "redacted_thinking") {
        ++w.dropped;
      } else if (cb_type == "tool_use") {
        tool_of_block[o.at("index").to_number<std::int64_t>()] = w.tools.size();
        const json::value& input = cb.at("input");
        w.tools.push_back({std::string(cb.at("id").as_string()),
                           std::string(cb.at("name").as_string()),
                           input.as_object().empty() ? "" : json::serialize(input)});
      }
    } else if (type == "content_block_delta") {
      const json::object& d = o.at("delta").as_object();
      const std::string_view d_type = d.at("type").as_string();
      if (d_type == "text_delta") {
        w.text += d.at("text").as_string();
      } else if (d_type == "thinking_delta") {
        w.reasoning += d.at("thinking").as_string();
      } else if (d_type == "signature_delta") {
        w.dropped += d.at("signature").as_string().empty() ? 0 : 1;
      } else if (d_type == "input_json_delta") {
        w.tools.at(tool_of_block.at(o.at("index").to_number<std::int64_t>())).arguments +=
            d.at("partial_json").as_string();
      }
    } else if (type == "message_delta") {
      w.stop_reason = o.at("delta").at("stop_reason").as_string();
      read_usage(o.at("usage"));
    } else if (type == "error") {
      w.error_type = o.at("error").at("type").as_string();
    }
  });
  return w;
}

// Anthropic stop_reason -> the finish_reason an OpenAI client must see (and what our decoder
// makes of it).
std::string openai_finish(std::string_view stop_reason) {
  if (stop_reason == "max_tokens") {
    return "length";
  }
  if (stop_reason == "tool_use") {
    return "tool_calls";
  }
  if (stop_reason == "refusal") {
    return "content_filter";
  }
  return "stop";  // end_turn, stop_sequence, pause_turn
}

// (b) Every recorded Anthropic stream -> anthropic::StreamDecoder -> IR -> this encoder: valid
// OpenAI SSE whose re-decoding gives the same text, reasoning, tool calls, finish reason and
// usage (prompt = input + cache read + cache write, cached = cache read).
TEST(OpenAiStreamEncoder, AnthropicFixturesTranslate) {
  int checked = 0;
  for (const fs::path& path : fixtures("anthropic")) {
    const std::string name = path.filename().string();
    if (name == "stream-error-overloaded.sse") {
      continue;  // AnthropicErrorFixture
    }
    SCOPED_TRACE(name);
    const std::string bytes = test::read_file(path);
    const AnthropicWant want = anthropic_want(bytes);
    const std::vector<ir::StreamEvent> events = decode_anthropic(bytes);
    ASSERT_EQ(events.back().kind, Kind::kDone) << events.back().error.message();

    StreamEncoder encoder(true, kCreated);
    const std::string out = encode(events, true, &encoder);
    EXPECT_TRUE(encoder.finished());
    EXPECT_FALSE(encoder.error());
    EXPECT_EQ(encoder.dropped_events(), want.dropped);
    const Wire wire = read_wire(out, "chatcmpl-" + want.id);
    expect_shape(wire, true);
    EXPECT_EQ(str(wire.chunks.front().at("model")), want.model);
    ASSERT_TRUE(wire.chunks.back().at("choices").as_array().empty()) << "no usage chunk";
    const json::object& usage = wire.chunks.back().at("usage").as_object();
    const std::uint64_t prompt = want.input + want.cache_read + want.cache_write;
    EXPECT_EQ(usage.at("prompt_tokens").to_number<std::uint64_t>(), prompt);
    EXPECT_EQ(usage.at("completion_tokens").to_number<std::uint64_t>(), want.output);
    EXPECT_EQ(usage.at("total_tokens").to_number<std::uint64_t>(), prompt + want.output);
    EXPECT_EQ(usage.at("prompt_tokens_details").at("cached_tokens").to_number<std::uint64_t>(),
              want.cache_read);

    const std::vector<ir::StreamEvent> again = decode_openai(out);
    const Summary got = summarize(again);
    EXPECT_TRUE(got.done);
    EXPECT_EQ(got.id, "chatcmpl-" + want.id);
    EXPECT_EQ(got.model, want.model);
    EXPECT_EQ(got.text, want.text);
    EXPECT_EQ(got.reasoning, want.reasoning);
    EXPECT_EQ(got.tools, want.tools);
    EXPECT_EQ(ir::to_string(got.finish), openai_finish(want.stop_reason));
    EXPECT_EQ(got.usages, 1);
    EXPECT_EQ(got.usage, (ir::Usage{prompt, want.output, want.cache_read, 0, 0}));
    EXPECT_EQ(got.dropped, 0u);

    // Fed at every split point, both decoders give the same IR, hence the same bytes.
    for (std::size_t step : kSteps) {
      SCOPED_TRACE(step);
      EXPECT_EQ(describe(decode_anthropic(bytes, step)), describe(events));
      EXPECT_EQ(encode(decode_anthropic(bytes, step), true), out);
      EXPECT_EQ(describe(decode_openai(out, step)), describe(again));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

TEST(OpenAiStreamEncoder, AnthropicErrorFixture) {
  const std::string bytes = test::read_fixture("anthropic", "stream-error-overloaded.sse");
  const std::vector<ir::StreamEvent> events = decode_anthropic(bytes);
  ASSERT_EQ(events.size(), 1u);
  StreamEncoder encoder(true, kCreated);
  const std::string out = encode(events, true, &encoder);
  EXPECT_TRUE(encoder.finished());
  ASSERT_TRUE(encoder.error());
  EXPECT_EQ(encoder.error()->code(), "overloaded_error");

  const Wire wire = read_wire(out);
  EXPECT_TRUE(wire.chunks.empty());
  EXPECT_FALSE(wire.done);
  ASSERT_TRUE(wire.error);
  const json::object& e = wire.error->at("error").as_object();
  EXPECT_EQ(e.at("message"), "Overloaded");
  EXPECT_EQ(e.at("code"), "overloaded_error");
  EXPECT_TRUE(e.at("param").is_null());
  EXPECT_TRUE(e.contains("type"));

  const std::vector<ir::StreamEvent> again = decode_openai(out);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].kind, Kind::kError);
  EXPECT_EQ(again[0].error.message(), "Overloaded");
  EXPECT_EQ(again[0].error.code(), "overloaded_error");
}

ir::StreamEvent start(std::string id = "msg_1", std::string model = "claude-x") {
  ir::StreamEvent e;
  e.kind = Kind::kStart;
  e.id = std::move(id);
  e.model = std::move(model);
  return e;
}

ir::StreamEvent event(Kind kind, std::string text = {}, std::uint32_t index = 0) {
  ir::StreamEvent e;
  e.kind = kind;
  e.text = std::move(text);
  e.index = index;
  return e;
}

ir::StreamEvent tool_start(std::uint32_t index, std::string id, std::string name) {
  ir::StreamEvent e = event(Kind::kToolCallStart, {}, index);
  e.id = std::move(id);
  e.name = std::move(name);
  return e;
}

ir::StreamEvent usage(ir::Usage u) {
  ir::StreamEvent e = event(Kind::kUsage);
  e.usage = u;
  return e;
}

ir::StreamEvent finish(ir::FinishReason reason) {
  ir::StreamEvent e = event(Kind::kFinish);
  e.finish = reason;
  return e;
}

ir::StreamEvent error(Error err) {
  ir::StreamEvent e = event(Kind::kError);
  e.error = std::move(err);
  return e;
}

// (c) The role chunk goes out with kStart, each delta in the call of its event: no added
// first-token latency. The exact bytes are OpenAI's.
TEST(OpenAiStreamEncoder, EveryEventIsWrittenInItsOwnCall) {
  StreamEncoder encoder(true, kCreated);
  std::string out;
  encoder.encode(start("msg_01", "claude-sonnet-4-5"), out);
  const std::string head =
      R"(data: {"id":"chatcmpl-msg_01","object":"chat.completion.chunk","created":1750000000,)"
      R"("model":"claude-sonnet-4-5","choices":[{"index":0,"delta":)";
  const std::string tail = R"(,"logprobs":null,"finish_reason":null}],"usage":null})"
                           "\n\n";
  EXPECT_EQ(out, head + R"({"role":"assistant","content":""})" + tail);

  out.clear();
  encoder.encode(event(Kind::kTextDelta, "Hi \"there\"\n"), out);
  EXPECT_EQ(out, head + R"({"content":"Hi \"there\"\n"})" + tail);

  out.clear();
  encoder.encode(event(Kind::kReasoningDelta, "hmm"), out);
  EXPECT_EQ(out, head + R"({"reasoning_content":"hmm"})" + tail);

  out.clear();
  encoder.encode(tool_start(0, "toolu_1", "get_weather"), out);
  EXPECT_EQ(
      out,
      head +
          R"({"tool_calls":[{"index":0,"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":""}}]})" +
          tail);

  out.clear();
  encoder.encode(event(Kind::kToolCallDelta, R"({"city":)", 0), out);
  EXPECT_EQ(out,
            head + R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]})" + tail);

  out.clear();
  encoder.encode(usage({10, 2, 4, 1, 0}), out);
  EXPECT_EQ(out, "");  // held until the end
  encoder.encode(usage({10, 5, 4, 1, 3}), out);
  EXPECT_EQ(out, "");

  encoder.encode(finish(ir::FinishReason::kToolCalls), out);
  EXPECT_EQ(out, head + R"({},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null})"
                        "\n\n");

  out.clear();
  encoder.encode(event(Kind::kDone), out);
  EXPECT_EQ(
      out, R"(data: {"id":"chatcmpl-msg_01","object":"chat.completion.chunk","created":1750000000,)"
           R"("model":"claude-sonnet-4-5","choices":[],"usage":{"prompt_tokens":10,)"
           R"("completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4},)"
           R"("completion_tokens_details":{"reasoning_tokens":3}}})"
           "\n\ndata: [DONE]\n\n");
  EXPECT_TRUE(encoder.finished());
  EXPECT_FALSE(encoder.error());

  out.clear();
  encoder.encode(event(Kind::kTextDelta, "late"), out);
  EXPECT_EQ(out, "");
}

TEST(OpenAiStreamEncoder, UsageChunkOnlyWithIncludeUsage) {
  const std::vector<ir::StreamEvent> events = {start(),
                                               event(Kind::kTextDelta, "a"),
                                               usage({3, 1, 0, 0, 0}),
                                               finish(ir::FinishReason::kStop),
                                               usage({3, 2, 0, 0, 0}),
                                               event(Kind::kDone)};
  const std::string with = encode(events, true);
  const Wire w = read_wire(with);
  expect_shape(w, true);
  ASSERT_EQ(w.chunks.size(), 4u);                                 // role, text, finish, usage
  EXPECT_EQ(w.chunks[3].at("usage").at("completion_tokens"), 2);  // the last kUsage

  const std::string without = encode(events, false);
  const Wire wo = read_wire(without);
  expect_shape(wo, false);
  ASSERT_EQ(wo.chunks.size(), 3u);
  EXPECT_EQ(without.find("usage"), std::string::npos);
  EXPECT_TRUE(without.ends_with("data: [DONE]\n\n"));

  // An upstream that never reported usage gets no made-up zeros.
  const std::string none = encode(
      {start(), event(Kind::kTextDelta, "a"), finish(ir::FinishReason::kStop), event(Kind::kDone)},
      true);
  const Wire n = read_wire(none);
  expect_shape(n, true);
  ASSERT_EQ(n.chunks.size(), 3u);
  EXPECT_FALSE(n.chunks.back().at("choices").as_array().empty());
}

// The finish chunk carries finish_reason_to_openai() of kFinish (its table is tested with
// encode_response, openai_response_encoder_test.cc).
TEST(OpenAiStreamEncoder, FinishReasonMapping) {
  for (int r = 0; r <= static_cast<int>(ir::FinishReason::kOther); ++r) {
    const auto reason = static_cast<ir::FinishReason>(r);
    SCOPED_TRACE(ir::to_string(reason));
    const Wire w = read_wire(encode({start(), finish(reason), event(Kind::kDone)}, false));
    expect_shape(w, false);
    EXPECT_EQ(str(w.chunks.back().at("choices").at(0).at("finish_reason")),
              finish_reason_to_openai(reason));
  }
  // kDone without kFinish still tells the client the answer ended.
  const Wire w =
      read_wire(encode({start(), event(Kind::kTextDelta, "x"), event(Kind::kDone)}, false));
  expect_shape(w, false);
  EXPECT_EQ(w.chunks.back().at("choices").at(0).at("finish_reason"), "stop");
}

TEST(OpenAiStreamEncoder, IdsAreChatCompletionIds) {
  // Already an OpenAI id: kept. Empty: still a chatcmpl- id; a tool call without an id gets
  // the one stream_decoder.h would invent.
  EXPECT_EQ(
      read_wire(encode({start("chatcmpl-abc"), event(Kind::kDone)}, false)).chunks.front().at("id"),
      "chatcmpl-abc");
  const Wire w = read_wire(encode({start(""), tool_start(0, "", "f"), event(Kind::kDone)}, false));
  EXPECT_EQ(w.chunks.front().at("id"), "chatcmpl-");
  EXPECT_EQ(w.chunks[1].at("choices").at(0).at("delta").at("tool_calls").at(0).at("id"),
            "chatcmpl-_call_0");
}

TEST(OpenAiStreamEncoder, EmptyDeltasWriteNothing) {
  StreamEncoder encoder(false, kCreated);
  std::string out;
  encoder.encode(start(), out);
  encoder.encode(tool_start(0, "t", "f"), out);
  out.clear();
  for (Kind k : {Kind::kTextDelta, Kind::kReasoningDelta, Kind::kToolCallDelta}) {
    encoder.encode(event(k, ""), out);
  }
  EXPECT_EQ(out, "");
  EXPECT_EQ(encoder.dropped_events(), 0u);
}

TEST(OpenAiStreamEncoder, SignaturesAndRedactedReasoningAreDroppedAndCounted) {
  StreamEncoder encoder(false, kCreated);
  std::string out;
  encoder.encode(start(), out);
  out.clear();
  encoder.encode(event(Kind::kReasoningSignature, "sig"), out);
  encoder.encode(event(Kind::kRedactedReasoning, "opaque"), out);
  EXPECT_EQ(out, "");
  EXPECT_EQ(encoder.dropped_events(), 2u);
  EXPECT_FALSE(encoder.error());
  encoder.encode(event(Kind::kDone), out);
  EXPECT_TRUE(encoder.finished());
  EXPECT_FALSE(encoder.error());
}

TEST(OpenAiStreamEncoder, ErrorEndsTheStreamWithNothingAfter) {
  StreamEncoder encoder(true, kCreated);
  std::string out;
  encoder.encode(start(), out);
  encoder.encode(event(Kind::kTextDelta, "partial"), out);
  encoder.encode(
      error(Error(ErrorKind::kUpstreamStatus, 529, "Overloaded").with_code("overloaded_error")),
      out);
  EXPECT_TRUE(encoder.finished());
  ASSERT_TRUE(encoder.error());
  EXPECT_EQ(encoder.error()->message(), "Overloaded");
  const std::size_t size = out.size();
  encoder.encode(event(Kind::kTextDelta, "more"), out);
  encoder.encode(finish(ir::FinishReason::kStop), out);
  encoder.encode(event(Kind::kDone), out);
  EXPECT_EQ(out.size(), size);

  const Wire w = read_wire(out);
  ASSERT_EQ(w.chunks.size(), 2u);
  ASSERT_TRUE(w.error);
  EXPECT_FALSE(w.done);
  EXPECT_EQ(w.error->at("error").at("message"), "Overloaded");
  EXPECT_EQ(w.error->at("error").at("code"), "overloaded_error");
  EXPECT_TRUE(out.ends_with("}\n\n"));

  // An error before anything else: the error event alone.
  StreamEncoder first(true, kCreated);
  std::string only;
  first.encode(error(Error(ErrorKind::kUpstreamTimeout, "upstream timed out")), only);
  const Wire e = read_wire(only);
  EXPECT_TRUE(e.chunks.empty());
  ASSERT_TRUE(e.error);
}

// Events the chunk stream cannot express end it with an error, never silently.
TEST(OpenAiStreamEncoder, InexpressibleEventsAreErrors) {
  struct Case {
    std::vector<ir::StreamEvent> events;
    const char* message;
  };
  const Case cases[] = {
      {{start(), finish(ir::FinishReason::kStop), event(Kind::kTextDelta, "late")},
       "model output after the finish reason cannot be expressed in a chat.completion.chunk "
       "stream"},
      {{start(), tool_start(0, "a", "f"), finish(ir::FinishReason::kToolCalls),
        event(Kind::kToolCallDelta, "{}", 0)},
       "model output after the finish reason cannot be expressed in a chat.completion.chunk "
       "stream"},
      {{start(), tool_start(1, "a", "f")},
       "tool call 1 started out of order (expected tool call 0)"},
      {{start(), tool_start(0, "a", "f"), tool_start(0, "b", "g")},
       "tool call 0 started out of order (expected tool call 1)"},
      {{start(), event(Kind::kToolCallDelta, "{}", 0)},
       "arguments for tool call 0 arrived before the call started"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    StreamEncoder encoder(false, kCreated);
    const std::string out = encode(c.events, false, &encoder);
    EXPECT_TRUE(encoder.finished());
    ASSERT_TRUE(encoder.error());
    EXPECT_EQ(encoder.error()->kind(), ErrorKind::kUpstreamProtocol);
    EXPECT_EQ(encoder.error()->message(), c.message);
    const Wire w = read_wire(out);
    ASSERT_TRUE(w.error);
    EXPECT_EQ(w.error->at("error").at("message"), c.message);
    EXPECT_FALSE(w.done);
  }
}

TEST(OpenAiStreamEncoder, ChatIngressMakesOne) {
  ChatIngress ingress;
  IngressRequest request;
  request.stream = true;
  request.include_usage = true;
  const std::int64_t before = std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  auto encoder = ingress.make_stream_encoder(request);
  ASSERT_NE(encoder, nullptr);
  std::string out;
  for (const ir::StreamEvent& e : {start(), event(Kind::kTextDelta, "x"), usage({1, 1, 0, 0, 0}),
                                   finish(ir::FinishReason::kStop), event(Kind::kDone)}) {
    encoder->encode(e, out);
  }
  EXPECT_TRUE(encoder->finished());
  EXPECT_EQ(encoder->usage_clamped(), 0u);
  // A usage chunk (include_usage was passed on) and a current `created`.
  ASSERT_NE(out.find(R"("choices":[],"usage":{"prompt_tokens":1)"), std::string::npos) << out;
  const std::size_t at = out.find(R"("created":)") + 10;
  const std::int64_t created = std::stoll(out.substr(at, out.find(',', at) - at));
  EXPECT_GE(created, before);
  EXPECT_LE(created, before + 60);
}

}  // namespace
}  // namespace sluice::protocol::openai_chat
