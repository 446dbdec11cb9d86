// Hostile-input tests for the protocol codecs: every recorded fixture, mutated thousands of
// times (byte flips, truncation, JSON-significant insertions, duplicated ranges), is fed to
// every decoder and through the stream translation. Nothing may crash (these run under
// ASan+UBSan in CI), and the contracts must hold whatever the input:
//   - a stream decoder emits kStart first, and nothing after kDone or kError;
//   - the Anthropic stream encoder only ever writes well-formed SSE whose data is valid JSON,
//     and stops after an error event;
//   - decoders either succeed or return an error; they never throw.
// A deterministic seed keeps failures reproducible; the seed and case are in the message.

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "../support/fixtures.h"
#include "codec/sse.h"
#include "ir/stream_event.h"
#include "protocol/anthropic/request_decoder.h"
#include "protocol/anthropic/response.h"
#include "protocol/anthropic/stream_decoder.h"
#include "protocol/anthropic/stream_encoder.h"
#include "protocol/openai_chat/envelope.h"
#include "protocol/openai_chat/request_decoder.h"
#include "protocol/openai_chat/request_encoder.h"
#include "protocol/openai_chat/response.h"
#include "protocol/openai_chat/stream_decoder.h"
#include "protocol/openai_chat/stream_sniffer.h"

namespace sluice::protocol {
namespace {

namespace fs = std::filesystem;
using test::fixture_dir;
using test::read_file;

constexpr int kMutationsPerInput = 300;

std::vector<std::string> corpus(std::string_view dir, std::string_view ext) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(fixture_dir(dir))) {
    if (entry.path().extension() == ext) {
      out.push_back(read_file(entry.path()));
    }
  }
  return out;
}

// Requests in both dialects, hand-written in the shapes the decoders accept.
std::vector<std::string> request_corpus() {
  return {
      R"({"model":"m","max_tokens":64,"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"Hi\n\u00e9"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"sig"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":[1,2.5,null,true]}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","is_error":false}]}],"tools":[{"name":"f","description":"d","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"f"},"stream":true,"stop_sequences":["x"],"temperature":0.5,"top_k":3,"metadata":{"user_id":"u"},"thinking":{"type":"enabled","budget_tokens":2048}})",
      R"({"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"t"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"low"}}]},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},{"role":"tool","tool_call_id":"call_1","content":"r"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"auto","stream":true,"stream_options":{"include_usage":true},"max_tokens":10,"stop":["a","b"],"user":"u"})",
  };
}

std::string mutate(const std::string& in, std::mt19937& rng) {
  static constexpr char kSignificant[] = "\"\\{}[],:0-9eE.+ \n\r\t\x01\x7f\xc3\xff";
  std::string s = in;
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const std::size_t pos = rng() % s.size();
    switch (rng() % 6) {
      case 0:  // flip a bit
        s[pos] = static_cast<char>(s[pos] ^ (1u << (rng() % 8)));
        break;
      case 1:  // truncate
        s.resize(pos);
        break;
      case 2:  // insert a JSON-significant byte
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(pos),
                 kSignificant[rng() % (sizeof kSignificant - 1)]);
        break;
      case 3:  // delete a range
        s.erase(pos, 1 + rng() % 16);
        break;
      case 4: {  // duplicate a range (repeated keys, nested depth)
        const std::size_t len = std::min<std::size_t>(s.size() - pos, 1 + rng() % 64);
        s.insert(pos, s.substr(pos, len));
        break;
      }
      default:  // overwrite with a random byte
        s[pos] = static_cast<char>(rng() % 256);
        break;
    }
  }
  return s;
}

// Parses the Anthropic SSE the encoder wrote and checks it is well formed.
void expect_valid_anthropic_sse(const std::string& sse, const std::string& where) {
  bool saw_error = false;
  test::for_each_sse_event(sse, 0, [&](const codec::SseEvent& ev) {
    ASSERT_FALSE(saw_error) << where << ": output after an error event";
    ASSERT_TRUE(ev.has_data) << where;
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(ev.data, ec);
    ASSERT_FALSE(ec) << where << ": invalid JSON in event data: " << ev.data;
    ASSERT_TRUE(v.is_object()) << where;
    const auto* type = v.as_object().if_contains("type");
    ASSERT_TRUE(type && type->is_string()) << where;
    EXPECT_EQ(std::string_view(type->as_string()), ev.event) << where;
    saw_error = ev.event == "error";
  });
}

void expect_stream_contract(const std::vector<ir::StreamEvent>& events, const std::string& where) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto kind = events[i].kind;
    if (kind == ir::StreamEventKind::kDone || kind == ir::StreamEventKind::kError) {
      EXPECT_EQ(i + 1, events.size()) << where << ": events after the end";
      return;
    }
    if (i == 0 && kind != ir::StreamEventKind::kError) {
      EXPECT_EQ(kind, ir::StreamEventKind::kStart) << where << ": first event is not kStart";
    }
  }
}

TEST(HostileInput, RequestDecodersNeverCrash) {
  std::mt19937 rng(20261129);
  for (const std::string& base : request_corpus()) {
    for (int i = 0; i < kMutationsPerInput * 3; ++i) {
      const std::string in = mutate(base, rng);
      auto a = anthropic::decode_request(in);
      auto o = openai_chat::decode_request(in);
      auto c = openai_chat::decode_chat_request(in);
      if (a) {
        // Whatever decodes must encode to a valid OpenAI body.
        const std::string up = openai_chat::encode_request(*a, "up-model", a->stream);
        boost::system::error_code ec;
        boost::json::parse(up, ec);
        EXPECT_FALSE(ec) << "case " << i << ": encode_request wrote invalid JSON";
      }
      if (c) {
        const std::string up = openai_chat::encode_upstream_body(*c, "up\"model", true);
        boost::system::error_code ec;
        boost::json::parse(up, ec);
        EXPECT_FALSE(ec) << "case " << i << ": spliced body is invalid JSON";
      }
      (void)o;
    }
  }
}

TEST(HostileInput, ResponseDecodersNeverCrash) {
  std::mt19937 rng(7);
  std::vector<std::string> inputs = corpus("openai-chat", ".json");
  for (std::string& s : corpus("anthropic", ".json")) {
    inputs.push_back(std::move(s));
  }
  for (const std::string& base : inputs) {
    for (int i = 0; i < kMutationsPerInput; ++i) {
      const std::string in = mutate(base, rng);
      if (auto r = openai_chat::decode_response(in)) {
        auto out = anthropic::encode_response(*r);
        if (out) {
          boost::system::error_code ec;
          boost::json::parse(*out, ec);
          EXPECT_FALSE(ec) << "case " << i << ": encode_response wrote invalid JSON";
        }
      }
      (void)anthropic::decode_response(in);
      (void)openai_chat::usage_from_response(in);
    }
  }
}

TEST(HostileInput, OpenAiStreamTranslationKeepsItsContracts) {
  std::mt19937 rng(42);
  for (const std::string& base : corpus("openai-chat", ".sse")) {
    for (int i = 0; i < kMutationsPerInput; ++i) {
      const std::string in = mutate(base, rng);
      const std::size_t step = 1 + rng() % 97;
      const std::string where = "case " + std::to_string(i) + " step " + std::to_string(step);
      openai_chat::StreamDecoder decoder;
      openai_chat::StreamSniffer monitor(true);
      anthropic::StreamEncoder encoder;
      std::vector<ir::StreamEvent> all;
      std::vector<ir::StreamEvent> batch;
      std::string sse;
      test::for_each_sse_event(in, step, [&](const codec::SseEvent& ev) {
        (void)monitor.on_event(ev);
        batch.clear();
        decoder.on_event(ev, batch);
        for (const auto& e : batch) {
          all.push_back(e);
          encoder.encode(e, sse);
        }
      });
      batch.clear();
      decoder.on_end(batch);
      for (const auto& e : batch) {
        all.push_back(e);
        encoder.encode(e, sse);
      }
      expect_stream_contract(all, where);
      expect_valid_anthropic_sse(sse, where);
    }
  }
}

TEST(HostileInput, AnthropicStreamDecoderKeepsItsContracts) {
  std::mt19937 rng(1234);
  for (const std::string& base : corpus("anthropic", ".sse")) {
    for (int i = 0; i < kMutationsPerInput; ++i) {
      const std::string in = mutate(base, rng);
      const std::size_t step = 1 + rng() % 61;
      const std::string where = "case " + std::to_string(i) + " step " + std::to_string(step);
      anthropic::StreamDecoder decoder;
      anthropic::StreamEncoder encoder;
      std::vector<ir::StreamEvent> all;
      std::vector<ir::StreamEvent> batch;
      std::string sse;
      test::for_each_sse_event(in, step, [&](const codec::SseEvent& ev) {
        batch.clear();
        decoder.on_event(ev, batch);
        for (const auto& e : batch) {
          all.push_back(e);
          encoder.encode(e, sse);
        }
      });
      batch.clear();
      decoder.on_end(batch);
      for (const auto& e : batch) {
        all.push_back(e);
        encoder.encode(e, sse);
      }
      expect_stream_contract(all, where);
      expect_valid_anthropic_sse(sse, where);
    }
  }
}

}  // namespace
}  // namespace sluice::protocol
