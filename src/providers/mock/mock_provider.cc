#include "providers/mock/mock_provider.h"

#include <cmath>
#include <cstring>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "codec/sse.h"

namespace sluice::providers {
namespace json = boost::json;

namespace {

constexpr std::int64_t kCreated = 1700000000;  // fixed: replies must be deterministic

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string text_of(const json::value& content) {
  if (content.is_string()) {
    return std::string(content.get_string());
  }
  std::string out;
  if (content.is_array()) {
    for (const json::value& part : content.get_array()) {
      if (!part.is_object()) {
        continue;
      }
      if (const json::value* t = part.get_object().if_contains("text"); t && t->is_string()) {
        out += t->get_string();
      }
    }
  }
  return out;
}

// Rough token estimate (4 bytes per token), good enough for a mock's usage numbers.
std::uint64_t estimate_tokens(std::size_t bytes) { return bytes / 4 + 1; }

std::string hex_id(std::string_view prefix, std::uint64_t h) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(prefix);
  for (int i = 0; i < 16; ++i) {
    id.push_back(kHex[(h >> (60 - 4 * i)) & 0xF]);
  }
  return id;
}

json::object usage_json(std::uint64_t prompt, std::uint64_t completion) {
  return json::object{{"prompt_tokens", prompt},
                      {"completion_tokens", completion},
                      {"total_tokens", prompt + completion}};
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t sp = text.find(' ', start);
    std::size_t end = sp == std::string::npos ? text.size() : sp + 1;
    words.push_back(text.substr(start, end - start));
    start = end;
  }
  return words;
}

}  // namespace

MockReply mock_chat(const protocol::openai_chat::ChatRequest& request, std::string_view model) {
  const json::object& req = request.document().get_object();
  const json::array& messages = req.at("messages").get_array();
  std::string last_user;
  std::size_t prompt_bytes = 0;
  for (const json::value& m : messages) {
    const json::object& mo = m.get_object();
    std::string text;
    if (const json::value* c = mo.if_contains("content")) {
      text = text_of(*c);
    }
    prompt_bytes += text.size();
    if (const json::value* r = mo.if_contains("role");
        r && r->is_string() && r->get_string() == "user") {
      last_user = std::move(text);
    }
  }
  if (last_user.size() > 200) {
    last_user.resize(200);
  }
  const std::string answer = last_user.empty()
                                 ? "Hello from the Sluice mock provider."
                                 : "Hello from the Sluice mock provider. You said: " + last_user;
  const std::uint64_t h = fnv1a(json::serialize(request.document()));
  const std::string id = hex_id("chatcmpl-mock-", h);
  const std::uint64_t prompt_tokens = estimate_tokens(prompt_bytes);
  const std::vector<std::string> words = split_words(answer);
  const std::uint64_t completion_tokens = words.size();

  MockReply reply;
  if (!request.stream) {
    json::object message{{"role", "assistant"}, {"content", answer}, {"refusal", nullptr}};
    json::object choice{{"index", 0},
                        {"message", std::move(message)},
                        {"logprobs", nullptr},
                        {"finish_reason", "stop"}};
    json::object body{{"id", id},
                      {"object", "chat.completion"},
                      {"created", kCreated},
                      {"model", model},
                      {"choices", json::array{std::move(choice)}},
                      {"usage", usage_json(prompt_tokens, completion_tokens)},
                      {"system_fingerprint", "sluice-mock"}};
    reply.body = json::serialize(body);
    return reply;
  }

  auto chunk = [&](json::object delta, json::value finish_reason) {
    json::object choice{{"index", 0},
                        {"delta", std::move(delta)},
                        {"logprobs", nullptr},
                        {"finish_reason", std::move(finish_reason)}};
    json::object c{{"id", id},
                   {"object", "chat.completion.chunk"},
                   {"created", kCreated},
                   {"model", model},
                   {"system_fingerprint", "sluice-mock"},
                   {"choices", json::array{std::move(choice)}},
                   {"usage", nullptr}};
    std::string framed;
    codec::append_data_event(framed, json::serialize(c));
    reply.events.push_back(std::move(framed));
  };
  chunk(json::object{{"role", "assistant"}, {"content", ""}, {"refusal", nullptr}}, nullptr);
  for (const std::string& w : words) {
    chunk(json::object{{"content", w}}, nullptr);
  }
  chunk(json::object{}, "stop");
  json::object usage_chunk{{"id", id},
                           {"object", "chat.completion.chunk"},
                           {"created", kCreated},
                           {"model", model},
                           {"system_fingerprint", "sluice-mock"},
                           {"choices", json::array{}},
                           {"usage", usage_json(prompt_tokens, completion_tokens)}};
  std::string framed;
  codec::append_data_event(framed, json::serialize(usage_chunk));
  reply.events.push_back(std::move(framed));
  reply.events.emplace_back("data: [DONE]\n\n");
  return reply;
}

MockReply mock_embeddings(const protocol::openai_chat::ChatRequest& request, std::string_view model,
                          std::uint32_t default_dimensions) {
  const json::object& req = request.document().get_object();
  std::uint32_t dims = default_dimensions;
  if (const json::value* d = req.if_contains("dimensions");
      d && d->is_int64() && d->get_int64() > 0 && d->get_int64() <= 4096) {
    dims = static_cast<std::uint32_t>(d->get_int64());
  }
  bool base64 = false;
  if (const json::value* f = req.if_contains("encoding_format"); f && f->is_string()) {
    base64 = f->get_string() == "base64";
  }
  std::vector<std::string> inputs;
  const json::value& input = req.at("input");
  if (input.is_string()) {
    inputs.emplace_back(input.get_string());
  } else if (input.is_array() && !input.get_array().empty() &&
             (input.get_array()[0].is_int64() || input.get_array()[0].is_uint64())) {
    inputs.push_back(json::serialize(input));  // one token array
  } else {
    for (const json::value& v : input.get_array()) {
      inputs.push_back(v.is_string() ? std::string(v.get_string()) : json::serialize(v));
    }
  }
  json::array data;
  std::size_t total_bytes = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    total_bytes += inputs[i].size();
    std::vector<float> vec(dims);
    std::uint64_t h = fnv1a(inputs[i]);
    double norm = 0;
    for (std::uint32_t d = 0; d < dims; ++d) {
      h = fnv1a(std::string_view(reinterpret_cast<const char*>(&d), sizeof d), h);
      vec[d] = static_cast<float>(static_cast<double>(h % 2000001) / 1000000.0 - 1.0);
      norm += static_cast<double>(vec[d]) * vec[d];
    }
    norm = std::sqrt(norm > 0 ? norm : 1);
    json::value embedding;
    if (base64) {
      static constexpr char kB64[] =
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      std::string raw(dims * sizeof(float), '\0');
      for (std::uint32_t d = 0; d < dims; ++d) {
        float f = static_cast<float>(vec[d] / norm);
        std::memcpy(raw.data() + d * sizeof(float), &f, sizeof f);  // little-endian host
      }
      std::string enc;
      for (std::size_t k = 0; k < raw.size(); k += 3) {
        std::uint32_t n = static_cast<unsigned char>(raw[k]) << 16;
        if (k + 1 < raw.size()) n |= static_cast<unsigned char>(raw[k + 1]) << 8;
        if (k + 2 < raw.size()) n |= static_cast<unsigned char>(raw[k + 2]);
        enc.push_back(kB64[(n >> 18) & 63]);
        enc.push_back(kB64[(n >> 12) & 63]);
        enc.push_back(k + 1 < raw.size() ? kB64[(n >> 6) & 63] : '=');
        enc.push_back(k + 2 < raw.size() ? kB64[n & 63] : '=');
      }
      embedding = json::string(enc);
    } else {
      json::array arr;
      arr.reserve(dims);
      for (float f : vec) {
        arr.push_back(static_cast<double>(f) / norm);
      }
      embedding = std::move(arr);
    }
    data.push_back(json::object{{"object", "embedding"},
                                {"index", static_cast<std::int64_t>(i)},
                                {"embedding", std::move(embedding)}});
  }
  const std::uint64_t tokens = estimate_tokens(total_bytes);
  json::object body{{"object", "list"},
                    {"data", std::move(data)},
                    {"model", model},
                    {"usage", json::object{{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  MockReply reply;
  reply.body = json::serialize(body);
  return reply;
}

}  // namespace sluice::providers
