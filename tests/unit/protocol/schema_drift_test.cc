// Schema drift in upstream answers (protocol/drift.h): every translation decoder counts the
// fields and event types it does not know, and none of the recorded fixtures counts any.

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include "../support/fixtures.h"
#include "protocol/anthropic/response.h"
#include "protocol/anthropic/stream_decoder.h"
#include "protocol/drift.h"
#include "protocol/gemini/response.h"
#include "protocol/gemini/stream_decoder.h"
#include "protocol/openai_chat/response.h"
#include "protocol/openai_chat/stream_decoder.h"
#include "protocol/openai_responses/response.h"
#include "protocol/openai_responses/stream_decoder.h"

namespace sluice::protocol {
namespace {
namespace json = boost::json;

struct Corpus {
  const char* dir;
  const char* answer_prefix;  // the non-streaming answers (error bodies are not answers)
  std::function<Result<ir::Response>(std::string_view)> decode;
  std::function<std::unique_ptr<StreamDecoder>()> make_decoder;
};

const std::vector<Corpus>& corpora() {
  static const std::vector<Corpus> kCorpora = {
      {"openai-chat", "chat-completion", openai_chat::decode_response,
       [] { return std::make_unique<openai_chat::StreamDecoder>(); }},
      {"anthropic", "message-", anthropic::decode_response,
       [] { return std::make_unique<anthropic::StreamDecoder>(); }},
      {"gemini", "generate-content", gemini::decode_response,
       [] { return std::make_unique<gemini::StreamDecoder>(); }},
      {"openai-responses", "response-", openai_responses::decode_response,
       [] { return std::make_unique<openai_responses::StreamDecoder>(); }},
  };
  return kCorpora;
}

// Feeds a whole SSE body to a new decoder of `corpus` and returns its drift count.
std::uint32_t stream_drift(const Corpus& corpus, std::string_view bytes,
                           std::vector<ir::StreamEvent>* events = nullptr) {
  auto decoder = corpus.make_decoder();
  std::vector<ir::StreamEvent> out;
  test::for_each_sse_event(bytes, 0,
                           [&](const codec::SseEvent& ev) { decoder->on_event(ev, out); });
  decoder->on_end(out);
  if (events != nullptr) {
    *events = std::move(out);
  }
  return decoder->unknown_fields();
}

const Corpus& corpus(std::string_view dir) {
  for (const Corpus& c : corpora()) {
    if (dir == c.dir) {
      return c;
    }
  }
  throw std::logic_error("no corpus");
}

std::string fixture(std::string_view dir, std::string_view name) {
  const std::string bytes = test::read_fixture(dir, name);
  EXPECT_FALSE(bytes.empty()) << dir << "/" << name;
  return bytes;
}

// `body` with `edit` applied to its parsed JSON.
std::string edited(std::string_view body, const std::function<void(json::value&)>& edit) {
  json::value v = json::parse(body);
  edit(v);
  return json::serialize(v);
}

std::string replaced_all(std::string text, std::string_view from, std::string_view to) {
  std::size_t n = 0;
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    ++n;
  }
  EXPECT_GT(n, 0u) << "no '" << from << "' to replace";
  return text;
}

TEST(SchemaDrift, NoRecordedFixtureCountsAny) {
  std::size_t answers = 0;
  std::size_t streams = 0;
  for (const Corpus& c : corpora()) {
    for (const auto& entry : std::filesystem::directory_iterator(test::fixture_dir(c.dir))) {
      const std::string name = entry.path().filename().string();
      const std::string bytes = test::read_file(entry.path());
      if (name.ends_with(".sse")) {
        ++streams;
        EXPECT_EQ(stream_drift(c, bytes), 0u) << c.dir << "/" << name;
      } else if (name.starts_with(c.answer_prefix) && name.ends_with(".json")) {
        ++answers;
        auto decoded = c.decode(bytes);
        ASSERT_TRUE(decoded) << c.dir << "/" << name << ": " << decoded.error().message();
        EXPECT_EQ(decoded->unknown_fields, 0u) << c.dir << "/" << name;
      }
    }
  }
  EXPECT_GE(answers, 15u);
  EXPECT_GE(streams, 29u);
}

TEST(SchemaDrift, SluicesOwnAnswersCountNone) {
  // The pair goldens are what Sluice's encoders write for each caller protocol (and what the
  // mock provider answers with): decoded again, nothing in them is unknown.
  const std::pair<const char*, const char*> kCallers[] = {
      {"openai_chat", "openai-chat"},
      {"anthropic_messages", "anthropic"},
      {"gemini", "gemini"},
      {"openai_responses", "openai-responses"},
  };
  std::size_t checked = 0;
  for (const auto& [caller, corpus_dir] : kCallers) {
    const Corpus& c = corpus(corpus_dir);
    const std::filesystem::path root =
        std::filesystem::path(SLUICE_SOURCE_DIR) / "tests/golden/pairs" / caller;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      const std::string name = entry.path().filename().string();
      const std::string bytes = test::read_file(entry.path());
      if (name.ends_with(".sse.out")) {
        ++checked;
        EXPECT_EQ(stream_drift(c, bytes), 0u) << entry.path();
      } else if (name.ends_with(".json.out")) {
        if (auto decoded = c.decode(bytes)) {  // error bodies are not answers
          ++checked;
          EXPECT_EQ(decoded->unknown_fields, 0u) << entry.path();
        }
      }
    }
  }
  EXPECT_GE(checked, 100u);
}

TEST(SchemaDrift, OpenAiChatAnswerCountsUnknownFieldsPerLevel) {
  const Corpus& c = corpus("openai-chat");
  const std::string body = fixture(c.dir, "chat-completion-tool-call.json");
  auto one = c.decode(edited(body, [](json::value& v) { v.as_object()["future"] = 1; }));
  ASSERT_TRUE(one);
  EXPECT_EQ(one->unknown_fields, 1u);

  auto all = c.decode(edited(body, [](json::value& v) {
    json::object& root = v.as_object();
    root["a"] = 1;
    json::object& choice = root["choices"].as_array()[0].as_object();
    choice["b"] = 1;
    json::object& message = choice["message"].as_object();
    message["c"] = 1;
    json::object& call = message["tool_calls"].as_array()[0].as_object();
    call["d"] = 1;
    call["function"].as_object()["e"] = 1;
    root["usage"].as_object()["f"] = 1;
    root["usage"].as_object()["prompt_tokens_details"].as_object()["below"] = 1;  // not read
  }));
  ASSERT_TRUE(all);
  EXPECT_EQ(all->unknown_fields, 6u);
  // The answer itself is unchanged.
  auto plain = c.decode(body);
  ASSERT_TRUE(plain);
  EXPECT_EQ(all->content.size(), plain->content.size());
}

TEST(SchemaDrift, OpenAiChatStreamCountsEachUnknownFieldOnce) {
  const Corpus& c = corpus("openai-chat");
  std::string bytes = fixture(c.dir, "chat-stream-text-include-usage.sse");
  bytes = replaced_all(bytes, R"({"id":)", R"({"future":[1,{"x":2}],"id":)");  // every chunk
  bytes = replaced_all(bytes, R"("prompt_tokens":)", R"("cost":0.1,"prompt_tokens":)");
  bytes = replaced_all(bytes, R"("delta":{")", R"("delta":{"audio_future":null,")");
  std::vector<ir::StreamEvent> events;
  EXPECT_EQ(stream_drift(c, bytes, &events), 3u);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, ir::StreamEventKind::kDone);
}

TEST(SchemaDrift, AnthropicAnswerAndStream) {
  const Corpus& c = corpus("anthropic");
  auto answer = c.decode(edited(fixture(c.dir, "message-tool-use.json"), [](json::value& v) {
    json::object& root = v.as_object();
    root["future"] = 1;
    root["content"].as_array()[0].as_object()["future_block"] = 1;
    root["usage"].as_object()["future_usage"] = 1;
  }));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->unknown_fields, 3u);

  std::string bytes = fixture(c.dir, "stream-text.sse");
  bytes = replaced_all(bytes, R"("type":"text_delta",)", R"("type":"text_delta","future":1,)");
  bytes = "event: message_heartbeat\ndata: {\"type\":\"message_heartbeat\"}\n\n" + bytes;
  std::vector<ir::StreamEvent> events;
  EXPECT_EQ(stream_drift(c, bytes, &events), 2u);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, ir::StreamEventKind::kDone);  // the unknown event is skipped
}

TEST(SchemaDrift, GeminiAnswerAndStreamAcceptBothSpellings) {
  const Corpus& c = corpus("gemini");
  const std::string body = fixture(c.dir, "generate-content-parallel-function-calls.json");
  auto known = c.decode(edited(body, [](json::value& v) {
    json::object& candidate = v.as_object()["candidates"].as_array()[0].as_object();
    candidate["safety_ratings"] = json::array();  // snake_case of a known field
    candidate["avgLogprobs"] = -0.5;
  }));
  ASSERT_TRUE(known);
  EXPECT_EQ(known->unknown_fields, 0u);
  auto drift = c.decode(edited(body, [](json::value& v) {
    json::object& root = v.as_object();
    root["future"] = 1;
    json::object& candidate = root["candidates"].as_array()[0].as_object();
    candidate["future_candidate"] = 1;
    json::object& content = candidate["content"].as_object();
    content["future_content"] = 1;
    content["parts"].as_array()[0].as_object()["futurePart"] = 1;
    root["usageMetadata"].as_object()["futureTokenCount"] = 1;
  }));
  ASSERT_TRUE(drift);
  EXPECT_EQ(drift->unknown_fields, 5u);

  std::string bytes = fixture(c.dir, "stream-text.sse");
  bytes = replaced_all(bytes, R"({"text":)", R"({"partMetadata":{},"text":)");
  EXPECT_EQ(stream_drift(c, bytes), 1u);
}

TEST(SchemaDrift, ResponsesAnswerAndStream) {
  const Corpus& c = corpus("openai-responses");
  auto answer = c.decode(edited(fixture(c.dir, "response-function-call.json"), [](json::value& v) {
    json::object& root = v.as_object();
    root["future"] = 1;
    root["output"].as_array()[0].as_object()["future_item"] = 1;
    root["usage"].as_object()["future_usage"] = 1;
  }));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->unknown_fields, 3u);

  std::string bytes = fixture(c.dir, "stream-text.sse");
  bytes = replaced_all(bytes, R"("type":"response.output_text.delta",)",
                       R"("type":"response.output_text.delta","future":1,)");
  const std::string unknown =
      "event: response.future.delta\ndata: {\"type\":\"response.future.delta\"}\n\n";
  bytes.insert(bytes.find("event: response.output_text.delta"), unknown + unknown);
  std::vector<ir::StreamEvent> events;
  EXPECT_EQ(stream_drift(c, bytes, &events), 2u);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, ir::StreamEventKind::kDone);  // the unknown event is skipped
}

TEST(SchemaDrift, DistinctNamesAndSnakeCase) {
  Drift d;
  d.unknown("a");
  d.unknown("b");
  d.unknown("a");
  EXPECT_EQ(d.count(), 2u);
  static constexpr std::string_view kKnown[] = {"usageMetadata", "text"};
  EXPECT_TRUE(Drift::is_known("usage_metadata", kKnown, true));
  EXPECT_FALSE(Drift::is_known("usage_metadata", kKnown, false));
  EXPECT_FALSE(Drift::is_known("usage_metadata_", kKnown, true));
  EXPECT_FALSE(Drift::is_known("usagemetadata", kKnown, true));
  EXPECT_FALSE(Drift::is_known("usage_Metadata", kKnown, true));
}

}  // namespace
}  // namespace sluice::protocol
