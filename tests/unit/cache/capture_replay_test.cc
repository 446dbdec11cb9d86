#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "../support/fixtures.h"
#include "cache/capture.h"
#include "cache/replay.h"
#include "protocol/ingress.h"
#include "protocol/registry.h"

namespace sluice::cache {
namespace {

// The chat codecs a cached answer may be told in (count_tokens and embeddings produce none).
std::vector<const protocol::IngressCodec*> chat_codecs() {
  std::vector<const protocol::IngressCodec*> out;
  for (const protocol::IngressCodec* codec : protocol::ingress_codecs()) {
    if (codec->operation() == protocol::Operation::kChat && !codec->output_limit_fields().empty()) {
      out.push_back(codec);
    }
  }
  return out;
}

const protocol::UpstreamCodec& upstream_of(const protocol::IngressCodec& codec) {
  return *protocol::find_upstream(codec.protocol(), protocol::Operation::kChat);
}

std::optional<ir::Response> capture_stream(const protocol::UpstreamCodec& codec,
                                           std::string_view bytes, std::size_t step = 7) {
  AnswerCapture capture(codec, 1 << 20);
  for (std::size_t pos = 0; pos < bytes.size(); pos += step) {
    capture.stream(bytes.substr(pos, step));  // split anywhere: the capture reassembles
  }
  return capture.finish();
}

// Arguments as JSON values: protocols that carry them as objects write them back compactly.
std::string canonical_json(const std::string& text) {
  return boost::json::serialize(boost::json::parse(text));
}

// What every protocol can carry of an answer: text, tool calls, finish, usage.
void expect_same_answer(const ir::Response& got, const ir::Response& want, std::string_view how) {
  std::string got_text;
  std::string want_text;
  std::vector<std::pair<std::string, std::string>> got_calls;
  std::vector<std::pair<std::string, std::string>> want_calls;
  for (const ir::ContentPart& p : got.content) {
    if (p.kind == ir::PartKind::kText) got_text += p.text;
    if (p.kind == ir::PartKind::kToolCall)
      got_calls.emplace_back(p.name, canonical_json(p.arguments));
  }
  for (const ir::ContentPart& p : want.content) {
    if (p.kind == ir::PartKind::kText) want_text += p.text;
    if (p.kind == ir::PartKind::kToolCall)
      want_calls.emplace_back(p.name, canonical_json(p.arguments));
  }
  EXPECT_EQ(got_text, want_text) << how;
  EXPECT_EQ(got_calls, want_calls) << how;
  EXPECT_EQ(got.finish, want.finish) << how;
  ASSERT_TRUE(got.usage.has_value()) << how;
  EXPECT_EQ(got.usage->input_tokens, want.usage->input_tokens) << how;
  EXPECT_EQ(got.usage->output_tokens, want.usage->output_tokens) << how;
}

struct Recorded {
  const char* corpus;
  const char* file;
  protocol::ProtocolId protocol;
};

// One answer recorded from each provider, read into IR as the cache reads a caller's stream,
// then told again in every protocol and mode and read back: what the caller of any protocol
// gets from the entry is the original answer.
TEST(CaptureReplayTest, OneEntryAnswersEveryProtocolAndMode) {
  const Recorded recorded[] = {
      {"openai-chat", "chat-stream-tool-call.sse", "openai_chat"},
      {"openai-chat", "chat-stream-text-include-usage.sse", "openai_chat"},
      {"anthropic", "stream-thinking-signature.sse", "anthropic_messages"},
      {"anthropic", "stream-tool-use.sse", "anthropic_messages"},
      {"gemini", "stream-function-call.sse", "gemini"},
  };
  for (const Recorded& r : recorded) {
    const protocol::IngressCodec* source = protocol::ingress_of(r.protocol);
    ASSERT_NE(source, nullptr) << r.protocol;
    const std::string bytes = test::read_fixture(r.corpus, r.file);
    ASSERT_FALSE(bytes.empty()) << r.file;
    std::optional<ir::Response> original = capture_stream(upstream_of(*source), bytes);
    ASSERT_TRUE(original) << r.file << " did not read as a whole answer";
    if (!original->usage) {
      original->usage = ir::Usage{12, 34, 0, 0, 0};  // the pipeline fills it from the upstream
    }
    for (const protocol::IngressCodec* codec : chat_codecs()) {
      const std::string how = std::string(r.file) + " -> " + std::string(codec->api_name());
      protocol::IngressRequest request;
      request.stream = true;
      request.include_usage = true;
      std::unique_ptr<protocol::StreamEncoder> encoder = codec->make_stream_encoder(request);
      ASSERT_TRUE(encoder) << how;
      std::string stream;
      for (const ir::StreamEvent& event : replay_events(*original)) {
        encoder->encode(event, stream);
      }
      ASSERT_TRUE(encoder->finished()) << how;
      ASSERT_FALSE(encoder->error()) << how << ": " << encoder->error()->message();
      std::optional<ir::Response> streamed = capture_stream(upstream_of(*codec), stream);
      ASSERT_TRUE(streamed) << how << " (stream)\n" << stream;
      expect_same_answer(*streamed, *original, how + " (stream)");

      bool clamped = false;
      Result<std::string> body = codec->encode_response(*original, clamped);
      ASSERT_TRUE(body) << how;
      AnswerCapture capture(upstream_of(*codec), 1 << 20);
      capture.body(*body);
      std::optional<ir::Response> plain = capture.finish();
      ASSERT_TRUE(plain) << how << " (body)\n" << *body;
      expect_same_answer(*plain, *original, how + " (body)");
    }
  }
}

// Anthropic carries reasoning and its signature both ways: a cached thinking answer replays
// them to an Anthropic caller (a later turn must send the signature back).
TEST(CaptureReplayTest, ReasoningSignaturesSurviveTheCache) {
  const protocol::IngressCodec& anthropic = *protocol::ingress_of("anthropic_messages");
  const std::string bytes = test::read_fixture("anthropic", "stream-thinking-signature.sse");
  std::optional<ir::Response> original = capture_stream(upstream_of(anthropic), bytes);
  ASSERT_TRUE(original);
  protocol::IngressRequest request;
  request.stream = true;
  std::unique_ptr<protocol::StreamEncoder> encoder = anthropic.make_stream_encoder(request);
  std::string stream;
  for (const ir::StreamEvent& event : replay_events(*original)) {
    encoder->encode(event, stream);
  }
  std::optional<ir::Response> replayed = capture_stream(upstream_of(anthropic), stream);
  ASSERT_TRUE(replayed);
  auto reasoning = [](const ir::Response& r) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const ir::ContentPart& p : r.content) {
      if (p.kind == ir::PartKind::kReasoning) out.emplace_back(p.text, p.signature);
    }
    return out;
  };
  ASSERT_FALSE(reasoning(*original).empty());
  EXPECT_FALSE(reasoning(*original).front().second.empty());
  EXPECT_EQ(reasoning(*replayed), reasoning(*original));
}

TEST(CaptureReplayTest, WhatIsNotAWholeAnswerIsNotKept) {
  const protocol::IngressCodec& chat = *protocol::ingress_of("openai_chat");
  const std::string bytes = test::read_fixture("openai-chat", "chat-stream-text.sse");
  // Cut before the end: no finish reason, no answer.
  EXPECT_FALSE(
      capture_stream(upstream_of(chat), std::string_view(bytes).substr(0, bytes.size() / 2)));
  // Larger than the entry limit.
  AnswerCapture small(upstream_of(chat), 64);
  small.stream(bytes);
  EXPECT_FALSE(small.finish());
  // Abandoned (a non-200 head, a filter's say).
  AnswerCapture abandoned(upstream_of(chat), 1 << 20);
  abandoned.stream(bytes);
  abandoned.abandon();
  EXPECT_FALSE(abandoned.finish());
  // An error body.
  AnswerCapture error(upstream_of(chat), 1 << 20);
  error.body(test::read_fixture("openai-chat", "error-429-insufficient-quota.json"));
  EXPECT_FALSE(error.finish());
  // An upstream error event inside the stream.
  const protocol::IngressCodec& anthropic = *protocol::ingress_of("anthropic_messages");
  EXPECT_FALSE(capture_stream(upstream_of(anthropic),
                              test::read_fixture("anthropic", "stream-error-overloaded.sse")));
}

}  // namespace
}  // namespace sluice::cache
