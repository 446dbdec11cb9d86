// protocol::UpstreamCodec through the registry (protocol/registry.h find_upstream): every
// upstream protocol reads its recorded answers and streams (tests/fixtures/) and writes bodies
// its own caller side reads back, and the per-provider options reach the encoders.

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "../support/fixtures.h"
#include "codec/request_head.h"
#include "protocol/anthropic/conventions.h"
#include "protocol/bedrock_converse/conventions.h"
#include "protocol/gemini/conventions.h"
#include "protocol/openai_chat/conventions.h"
#include "protocol/openai_responses/conventions.h"
#include "protocol/registry.h"

namespace sluice::protocol {
namespace {

namespace json = boost::json;

// A recorded answer and stream of one upstream protocol.
struct Recorded {
  ProtocolId protocol;
  std::string_view corpus;
  std::string_view answer;
  std::string_view stream;
};

const Recorded kRecorded[] = {
    {openai_chat::kChatProtocol, "openai-chat", "chat-completion-text.json",
     "chat-stream-text-include-usage.sse"},
    {anthropic::kMessagesProtocol, "anthropic", "message-text.json", "stream-text.sse"},
    {gemini::kGeminiProtocol, "gemini", "generate-content-text.json", "stream-text.sse"},
    {openai_responses::kResponsesProtocol, "openai-responses", "response-text.json",
     "stream-text.sse"},
};

const UpstreamCodec& codec_of(ProtocolId protocol) {
  const UpstreamCodec* codec = find_upstream(protocol, Operation::kChat);
  EXPECT_NE(codec, nullptr) << protocol;
  return *codec;
}

std::string text_of(const std::vector<ir::ContentPart>& parts) {
  std::string out;
  for (const ir::ContentPart& p : parts) {
    if (p.kind == ir::PartKind::kText) {
      out += p.text;
    }
  }
  return out;
}

ir::Request sample_request() {
  ir::Request r;
  r.system.push_back(ir::ContentPart::make_text("Be brief."));
  ir::Message m;
  m.content.push_back(ir::ContentPart::make_text("What is the capital of France?"));
  r.messages.push_back(std::move(m));
  r.max_tokens = 100;
  return r;
}

TEST(UpstreamCodecRegistry, OneCodecPerProtocolAndOperation) {
  for (const UpstreamCodec* codec : upstream_codecs()) {
    EXPECT_EQ(find_upstream(codec->protocol(), codec->operation()), codec) << codec->protocol();
    for (const UpstreamCodec* other : upstream_codecs()) {
      if (other != codec) {
        EXPECT_FALSE(other->protocol() == codec->protocol() &&
                     other->operation() == codec->operation())
            << codec->protocol() << " is registered twice";
      }
    }
  }
  EXPECT_EQ(find_upstream(openai_chat::kChatProtocol, Operation::kEmbeddings), nullptr);
  EXPECT_EQ(find_upstream("no_such_protocol", Operation::kChat), nullptr);
  EXPECT_EQ(find_upstream(anthropic::kCountTokensProtocol, Operation::kChat), nullptr)
      << "count_tokens is passed through only: nothing is ever translated to it";
}

TEST(UpstreamCodecRegistry, EveryChatUpstreamHasACallerSideToPlayIt) {
  // The mock provider answers in any upstream protocol with that protocol's ingress codec.
  // Bedrock Converse is upstream-only: no caller speaks it, and the mock does not offer it.
  for (const UpstreamCodec* codec : upstream_codecs()) {
    if (codec->operation() == Operation::kChat &&
        codec->protocol() != bedrock_converse::kConverseProtocol) {
      const IngressCodec* ingress = ingress_of(codec->protocol());
      ASSERT_NE(ingress, nullptr) << codec->protocol();
      EXPECT_EQ(ingress->operation(), Operation::kChat);
    }
  }
}

TEST(UpstreamCodecRegistry, FindsTheUpstreamOnlyBedrockConverseCodec) {
  const UpstreamCodec* codec = find_upstream("bedrock_converse", Operation::kChat);
  ASSERT_NE(codec, nullptr);
  EXPECT_EQ(codec->protocol(), bedrock_converse::kConverseProtocol);
  EXPECT_NE(codec->make_stream_decoder(), nullptr);
  EXPECT_EQ(ingress_of(bedrock_converse::kConverseProtocol), nullptr);
}

TEST(UpstreamCodec, DecodesRecordedAnswers) {
  for (const Recorded& r : kRecorded) {
    SCOPED_TRACE(std::string(r.protocol));
    auto decoded = codec_of(r.protocol).decode_response(test::read_fixture(r.corpus, r.answer));
    ASSERT_TRUE(decoded) << decoded.error().message();
    EXPECT_FALSE(text_of(decoded->content).empty());
    EXPECT_EQ(decoded->finish, ir::FinishReason::kStop);
    ASSERT_TRUE(decoded->usage.has_value());
    EXPECT_GT(decoded->usage->input_tokens, 0u);
    EXPECT_GT(decoded->usage->output_tokens, 0u);
    EXPECT_FALSE(codec_of(r.protocol).decode_response("{"))
        << "a body that is no answer of this protocol is an error";
  }
}

TEST(UpstreamCodec, DecodesRecordedStreamsAtEverySplitPoint) {
  for (const Recorded& r : kRecorded) {
    SCOPED_TRACE(std::string(r.protocol));
    const std::string bytes = test::read_fixture(r.corpus, r.stream);
    ASSERT_FALSE(bytes.empty());
    std::string whole;
    for (std::size_t step : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
      auto decoder = codec_of(r.protocol).make_stream_decoder();
      ASSERT_NE(decoder, nullptr);
      std::vector<ir::StreamEvent> events;
      test::for_each_sse_event(bytes, step,
                               [&](const codec::SseEvent& ev) { decoder->on_event(ev, events); });
      decoder->on_end(events);
      ASSERT_TRUE(decoder->finished());
      ASSERT_FALSE(events.empty());
      EXPECT_EQ(events.back().kind, ir::StreamEventKind::kDone);
      std::string text;
      bool usage = false;
      for (const ir::StreamEvent& e : events) {
        ASSERT_NE(e.kind, ir::StreamEventKind::kError) << e.error.message();
        text += e.kind == ir::StreamEventKind::kTextDelta ? e.text : "";
        usage = usage || e.kind == ir::StreamEventKind::kUsage;
      }
      EXPECT_FALSE(text.empty());
      EXPECT_TRUE(usage);
      if (step == 0) {
        whole = text;
      } else {
        EXPECT_EQ(text, whole) << "split every " << step << " bytes";
      }
    }
  }
}

TEST(UpstreamCodec, WritesBodiesTheProtocolsOwnCallerSideReadsBack) {
  const ir::Request request = sample_request();
  for (const Recorded& r : kRecorded) {
    SCOPED_TRACE(std::string(r.protocol));
    EncodeTarget target;
    target.model = "up-model";
    target.stream = true;
    auto body = codec_of(r.protocol).encode_request(request, target);
    ASSERT_TRUE(body) << body.error().message();
    const json::object doc = json::parse(*body).as_object();
    if (r.protocol == gemini::kGeminiProtocol) {
      // The model and the stream flag are the URL's (the adapter writes it).
      EXPECT_FALSE(doc.contains("model"));
      EXPECT_FALSE(doc.contains("stream"));
    } else {
      EXPECT_EQ(doc.at("model").as_string(), "up-model");
      EXPECT_EQ(doc.at("stream").as_bool(), true);
    }
    IngressRequest caller;
    caller.body = *body;
    auto back = ingress_of(r.protocol)->to_ir(caller);
    ASSERT_TRUE(back) << back.error().message();
    ASSERT_EQ(back->messages.size(), 1u);
    EXPECT_EQ(text_of(back->messages[0].content), "What is the capital of France?");
    EXPECT_EQ(text_of(back->system), "Be brief.");
    EXPECT_EQ(back->max_tokens, std::optional<std::uint32_t>(100));
  }
}

TEST(UpstreamCodec, OpenAiChatPutsTheLimitInTheFieldTheOptionsName) {
  const UpstreamCodec& chat = codec_of(openai_chat::kChatProtocol);
  EncodeTarget target;
  target.model = "m";
  auto plain = chat.encode_request(sample_request(), target);
  ASSERT_TRUE(plain);
  EXPECT_EQ(json::parse(*plain).as_object().at("max_tokens").as_int64(), 100);
  EXPECT_FALSE(json::parse(*plain).as_object().contains("max_completion_tokens"));
  target.options.max_completion_tokens = true;
  auto reasoning = chat.encode_request(sample_request(), target);
  ASSERT_TRUE(reasoning);
  EXPECT_EQ(json::parse(*reasoning).as_object().at("max_completion_tokens").as_int64(), 100);
  EXPECT_FALSE(json::parse(*reasoning).as_object().contains("max_tokens"));
}

TEST(UpstreamCodec, AnthropicTakesDefaultMaxTokensAndAdaptiveThinkingFromTheOptions) {
  const UpstreamCodec& messages = codec_of(anthropic::kMessagesProtocol);
  ir::Request request = sample_request();
  request.max_tokens.reset();
  request.reasoning.enabled = true;
  request.reasoning.effort = "high";
  EncodeTarget target;
  target.model = "claude";
  auto budget = messages.encode_request(request, target);
  ASSERT_TRUE(budget) << budget.error().message();
  const json::object b = json::parse(*budget).as_object();
  EXPECT_EQ(b.at("thinking").at("type").as_string(), "enabled");
  EXPECT_GT(b.at("max_tokens").as_int64(), b.at("thinking").at("budget_tokens").as_int64());

  target.options.default_max_tokens = 321;
  target.options.adaptive_thinking = true;
  auto adaptive = messages.encode_request(request, target);
  ASSERT_TRUE(adaptive) << adaptive.error().message();
  const json::object a = json::parse(*adaptive).as_object();
  EXPECT_EQ(a.at("max_tokens").as_int64(), 321);
  EXPECT_EQ(a.at("thinking").at("type").as_string(), "adaptive");
  EXPECT_EQ(a.at("output_config").at("effort").as_string(), "high");
}

TEST(UpstreamCodec, EmbeddingsAreNeverTranslated) {
  const UpstreamCodec* embeddings =
      find_upstream(openai_chat::kEmbeddingsProtocol, Operation::kEmbeddings);
  ASSERT_NE(embeddings, nullptr);
  auto body = embeddings->encode_request(sample_request(), EncodeTarget{});
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().kind(), ErrorKind::kBadRequest);
  EXPECT_EQ(body.error().code(), "translation_unsupported");
  EXPECT_FALSE(embeddings->decode_response(R"({"object":"list","data":[]})"));
  EXPECT_EQ(embeddings->make_stream_decoder(), nullptr);
}

}  // namespace
}  // namespace sluice::protocol
