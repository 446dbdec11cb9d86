#include "protocol/openai_chat/stream_decoder.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include "../../support/fixtures.h"

namespace sluice::protocol::openai_chat {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using Kind = ir::StreamEventKind;

using test::read_file;

const fs::path kDir = test::fixture_dir("openai-chat");

// Feeds `bytes` through SseParser in `step`-byte pieces (0 = whole), then ends the stream.
std::vector<ir::StreamEvent> decode(std::string_view bytes, std::size_t step = 0) {
  std::vector<ir::StreamEvent> out;
  StreamDecoder decoder;
  test::for_each_sse_event(bytes, step,
                           [&](const codec::SseEvent& ev) { decoder.on_event(ev, out); });
  decoder.on_end(out);
  return out;
}

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;
};

// What a stream says, read from the fixture with a DOM.
struct Expected {
  std::string id;
  std::string model;
  std::string text;
  std::vector<ToolCall> tools;  // in order of first appearance
  std::string finish;
  bool has_usage = false;
  ir::Usage usage;
};

std::uint64_t u64(const json::value& v) { return v.to_number<std::uint64_t>(); }

Expected expected_from(const std::string& bytes) {
  Expected e;
  std::map<std::int64_t, std::size_t> by_index;
  std::istringstream lines(bytes);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("data: ", 0) != 0 || line == "data: [DONE]") {
      continue;
    }
    const json::object chunk = json::parse(line.substr(6)).as_object();
    if (e.id.empty()) {
      e.id = chunk.at("id").as_string();
      e.model = chunk.at("model").as_string();
    }
    for (const json::value& c : chunk.at("choices").as_array()) {
      const json::object& delta = c.at("delta").as_object();
      if (const json::value* t = delta.if_contains("content"); t && t->is_string()) {
        e.text += t->as_string();
      }
      if (const json::value* calls = delta.if_contains("tool_calls")) {
        for (const json::value& call : calls->as_array()) {
          const std::int64_t idx = call.at("index").to_number<std::int64_t>();
          auto [it, is_new] = by_index.try_emplace(idx, e.tools.size());
          if (is_new) {
            e.tools.emplace_back();
          }
          ToolCall& tc = e.tools[it->second];
          if (const json::value* id = call.as_object().if_contains("id")) {
            tc.id = id->as_string();
          }
          const json::object& fn = call.at("function").as_object();
          if (const json::value* n = fn.if_contains("name")) {
            tc.name = n->as_string();
          }
          if (const json::value* a = fn.if_contains("arguments")) {
            tc.arguments += a->as_string();
          }
        }
      }
      if (const json::value* f = c.as_object().if_contains("finish_reason"); f && f->is_string()) {
        e.finish = f->as_string();
      }
    }
    if (const json::value* u = chunk.if_contains("usage"); u && u->is_object()) {
      e.has_usage = true;
      e.usage.input_tokens = u64(u->at("prompt_tokens"));
      e.usage.output_tokens = u64(u->at("completion_tokens"));
      e.usage.cache_read_tokens = u64(u->at("prompt_tokens_details").at("cached_tokens"));
      e.usage.reasoning_tokens = u64(u->at("completion_tokens_details").at("reasoning_tokens"));
    }
  }
  return e;
}

void expect_same_events(const std::vector<ir::StreamEvent>& a,
                        const std::vector<ir::StreamEvent>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].kind, b[i].kind) << i;
    EXPECT_EQ(a[i].index, b[i].index) << i;
    EXPECT_EQ(a[i].text, b[i].text) << i;
    EXPECT_EQ(a[i].id, b[i].id) << i;
    EXPECT_EQ(a[i].name, b[i].name) << i;
    EXPECT_EQ(a[i].finish, b[i].finish) << i;
    EXPECT_EQ(a[i].usage, b[i].usage) << i;
  }
}

TEST(OpenAiIrStreamDecoder, EveryStreamFixtureWholeAndInPieces) {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".sse") {
      continue;
    }
    SCOPED_TRACE(name);
    const std::string bytes = read_file(entry.path());
    const Expected want = expected_from(bytes);
    const std::vector<ir::StreamEvent> events = decode(bytes);
    ASSERT_GE(events.size(), 3u);

    EXPECT_EQ(events.front().kind, Kind::kStart);
    EXPECT_EQ(events.front().id, want.id);
    EXPECT_EQ(events.front().model, want.model);
    EXPECT_EQ(events.back().kind, Kind::kDone);
    ASSERT_EQ(events[events.size() - 2].kind, Kind::kFinish);
    EXPECT_EQ(ir::to_string(events[events.size() - 2].finish), want.finish);

    std::string text;
    std::vector<ToolCall> tools;
    int starts = 0;
    int finishes = 0;
    int usages = 0;
    ir::Usage usage;
    for (std::size_t i = 0; i < events.size(); ++i) {
      const ir::StreamEvent& e = events[i];
      switch (e.kind) {
        case Kind::kStart:
          ++starts;
          break;
        case Kind::kTextDelta:
          EXPECT_FALSE(e.text.empty());
          text += e.text;
          break;
        case Kind::kToolCallStart:
          ASSERT_EQ(e.index, tools.size()) << "tool indexes are zero-based, in order";
          tools.push_back({e.id, e.name, ""});
          break;
        case Kind::kToolCallDelta:
          ASSERT_LT(e.index, tools.size()) << "fragment before its start";
          tools[e.index].arguments += e.text;
          break;
        case Kind::kUsage:
          ++usages;
          usage = e.usage;
          break;
        case Kind::kFinish:
          ++finishes;
          break;
        case Kind::kError:
          ADD_FAILURE() << e.error.message();
          break;
        default:
          break;
      }
    }
    EXPECT_EQ(starts, 1);
    EXPECT_EQ(finishes, 1);
    EXPECT_EQ(text, want.text);
    ASSERT_EQ(tools.size(), want.tools.size());
    for (std::size_t i = 0; i < tools.size(); ++i) {
      EXPECT_EQ(tools[i].id, want.tools[i].id);
      EXPECT_EQ(tools[i].name, want.tools[i].name);
      EXPECT_EQ(tools[i].arguments, want.tools[i].arguments);
    }
    EXPECT_EQ(usages, want.has_usage ? 1 : 0);
    if (want.has_usage) {
      EXPECT_EQ(usage, want.usage);
    }

    for (std::size_t step : {1, 2, 3, 5, 7, 16, 61, 256, 1000}) {
      SCOPED_TRACE(step);
      expect_same_events(decode(bytes, step), events);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

TEST(OpenAiIrStreamDecoder, FixtureSpecifics) {
  const std::vector<ir::StreamEvent> text = decode(read_file(kDir / "chat-stream-text.sse"));
  EXPECT_EQ(text[1].kind, Kind::kTextDelta);
  EXPECT_EQ(text[1].text, "Hi");  // the role chunk's "" content is skipped

  const std::vector<ir::StreamEvent> usage =
      decode(read_file(kDir / "chat-stream-finish-length-usage.sse"));
  ASSERT_EQ(usage.size(), 4u);  // start, usage, finish, done: no content at all
  EXPECT_EQ(usage[1].kind, Kind::kUsage);
  EXPECT_EQ(usage[1].usage.input_tokens, 12u);
  EXPECT_EQ(usage[1].usage.output_tokens, 100u);
  EXPECT_EQ(usage[1].usage.reasoning_tokens, 100u);
  EXPECT_EQ(usage[2].finish, ir::FinishReason::kLength);

  const std::vector<ir::StreamEvent> tools =
      decode(read_file(kDir / "chat-stream-parallel-tool-calls.sse"));
  std::vector<const ir::StreamEvent*> starts;
  for (const ir::StreamEvent& e : tools) {
    if (e.kind == Kind::kToolCallStart) {
      starts.push_back(&e);
    }
  }
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0]->id, "call_NS4iQj14cDFwc0BnrKqDHavt");
  EXPECT_EQ(starts[0]->name, "get_weather");
  EXPECT_EQ(starts[1]->index, 1u);
  EXPECT_EQ(starts[1]->name, "get_product_name");
  EXPECT_EQ(tools[tools.size() - 2].finish, ir::FinishReason::kToolCalls);
}

std::string sse(std::initializer_list<std::string_view> payloads) {
  std::string out;
  for (std::string_view p : payloads) {
    codec::append_data_event(out, p);
  }
  return out;
}

constexpr std::string_view kFirst =
    R"({"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]})";

TEST(OpenAiIrStreamDecoder, InStreamErrorObjectEndsTheStream) {
  const std::vector<ir::StreamEvent> events = decode(sse(
      {kFirst,
       R"({"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}})",
       R"({"id":"c1","choices":[{"index":0,"delta":{"content":"lost"}}]})", "[DONE]"}));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, Kind::kStart);
  EXPECT_EQ(events[1].text, "Hel");
  ASSERT_EQ(events[2].kind, Kind::kError);
  EXPECT_EQ(events[2].error.kind(), ErrorKind::kUpstreamStatus);
  EXPECT_EQ(events[2].error.http_status(), 500);
  EXPECT_TRUE(events[2].error.retryable());
  EXPECT_EQ(events[2].error.message(), "The server had an error while processing your request.");

  // vLLM's flat shape, as the first event.
  const std::vector<ir::StreamEvent> vllm = decode(sse(
      {R"({"object":"error","message":"prompt too long","type":"BadRequestError","param":null,"code":400})"}));
  ASSERT_EQ(vllm.size(), 1u);
  EXPECT_EQ(vllm[0].kind, Kind::kError);
  EXPECT_EQ(vllm[0].error.http_status(), 400);
  EXPECT_EQ(vllm[0].error.message(), "prompt too long");

  // An `event: error` block whose data is not JSON.
  const std::vector<ir::StreamEvent> named =
      decode(sse({kFirst}) + "event: error\ndata: upstream overloaded\n\n");
  ASSERT_EQ(named.back().kind, Kind::kError);
  EXPECT_EQ(named.back().error.message(), "upstream overloaded");
}

TEST(OpenAiIrStreamDecoder, InvalidChunksAreErrorsNotDropped) {
  for (std::string_view bad :
       {std::string_view(R"({"id":"c1","choices":[{"delta":{"content":"x"})"),
        std::string_view("42"), std::string_view("[1,2]"),
        std::string_view(R"({"a":1} trailing)")}) {
    const std::vector<ir::StreamEvent> events = decode(sse({kFirst, bad, "[DONE]"}));
    ASSERT_EQ(events.size(), 3u) << bad;
    EXPECT_EQ(events[2].kind, Kind::kError) << bad;
    EXPECT_EQ(events[2].error.kind(), ErrorKind::kUpstreamProtocol) << bad;
  }
  std::string deep = R"({"id":"c","x":)" + std::string(70, '[') + std::string(70, ']') + "}";
  const std::vector<ir::StreamEvent> events = decode(sse({deep}));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, Kind::kError);
}

TEST(OpenAiIrStreamDecoder, ReasoningDeltasFromCompatibleServers) {
  const std::vector<ir::StreamEvent> events = decode(sse({
      R"({"id":"d1","model":"deepseek-reasoner","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Let me think"}}]})",
      R"({"id":"d1","model":"deepseek-reasoner","choices":[{"index":0,"delta":{"reasoning":" harder"}}]})",
      R"({"id":"d1","model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"42"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":3}}})",
      "[DONE]",
  }));
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(events[0].model, "deepseek-reasoner");
  EXPECT_EQ(events[1].kind, Kind::kReasoningDelta);
  EXPECT_EQ(events[1].text, "Let me think");
  EXPECT_EQ(events[2].kind, Kind::kReasoningDelta);
  EXPECT_EQ(events[2].text, " harder");
  EXPECT_EQ(events[3].kind, Kind::kTextDelta);
  EXPECT_EQ(events[4].kind, Kind::kUsage);
  EXPECT_EQ(events[4].usage, (ir::Usage{3, 4, 2, 0, 3}));
  EXPECT_EQ(events[5].kind, Kind::kFinish);
  EXPECT_EQ(events[5].finish, ir::FinishReason::kStop);
  EXPECT_EQ(events[6].kind, Kind::kDone);
}

TEST(OpenAiIrStreamDecoder, ToolIndexesAreRenumberedAndKeyOrderDoesNotMatter) {
  // Sparse OpenAI indexes, keys in alphabetical order (as Go re-serialisers emit them),
  // a second candidate (index 1) that must be ignored.
  const std::vector<ir::StreamEvent> events = decode(sse({
      R"({"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"a\"","name":"f"},"id":"call_x","index":3,"type":"function"}]},"index":0}],"id":"c9","model":"m"})",
      R"({"choices":[{"delta":{"content":"other candidate","tool_calls":[{"function":{"arguments":"zzz"},"index":3}]},"finish_reason":"length","index":1}],"id":"c9","model":"m"})",
      R"({"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{}","name":"g"},"id":"call_y","index":7},{"function":{"arguments":":1}"},"index":3}]},"index":0}],"id":"c9","model":"m"})",
      R"({"choices":[{"delta":{"tool_calls":[{"function":{"name":"h","arguments":""},"index":9}]},"finish_reason":"tool_calls","index":0}],"id":"c9","model":"m"})",
  }));
  std::vector<std::string> seen;
  for (const ir::StreamEvent& e : events) {
    switch (e.kind) {
      case Kind::kToolCallStart:
        seen.push_back("start " + std::to_string(e.index) + " " + e.id + " " + e.name);
        break;
      case Kind::kToolCallDelta:
        seen.push_back("delta " + std::to_string(e.index) + " " + e.text);
        break;
      case Kind::kTextDelta:
        seen.push_back("text " + e.text);
        break;
      case Kind::kFinish:
        seen.push_back("finish " + std::string(ir::to_string(e.finish)));
        break;
      default:
        break;
    }
  }
  const std::vector<std::string> want = {
      "start 0 call_x f", "delta 0 {\"a\"",      "start 1 call_y g", "delta 1 {}",
      "delta 0 :1}",      "start 2 c9_call_2 h", "finish tool_calls"};
  EXPECT_EQ(seen, want);
  // No [DONE], but a finish_reason came: the stream is complete.
  EXPECT_EQ(events.back().kind, Kind::kDone);
}

TEST(OpenAiIrStreamDecoder, EndOfStreamBeforeFinishIsAnError) {
  const std::vector<ir::StreamEvent> events = decode(sse({kFirst}));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].kind, Kind::kError);
  EXPECT_EQ(events[2].error.kind(), ErrorKind::kUpstreamProtocol);

  // Comments and empty data blocks are not chunks.
  const std::vector<ir::StreamEvent> quiet = decode(": keep-alive\n\ndata:\n\n" + sse({"[DONE]"}));
  ASSERT_EQ(quiet.size(), 3u);
  EXPECT_EQ(quiet[0].kind, Kind::kStart);
  EXPECT_EQ(quiet[1].kind, Kind::kFinish);
  EXPECT_EQ(quiet[1].finish, ir::FinishReason::kUnset);
  EXPECT_EQ(quiet[2].kind, Kind::kDone);
}

}  // namespace
}  // namespace sluice::protocol::openai_chat
