#include "providers/mock/mock_adapter.h"

#include <array>

#include "protocol/anthropic/conventions.h"
#include "protocol/gemini/conventions.h"
#include "protocol/openai_chat/conventions.h"
#include "protocol/openai_responses/conventions.h"
#include "protocol/registry.h"
#include "providers/mock/mock_exchange.h"
#include "providers/mock/mock_ir.h"
#include "providers/mock/mock_provider.h"

namespace sluice::providers {

namespace {

constexpr std::array<std::string_view, 4> kProtocols = {
    protocol::openai_chat::kChatProtocol, protocol::anthropic::kMessagesProtocol,
    protocol::gemini::kGeminiProtocol, protocol::openai_responses::kResponsesProtocol};

constexpr std::array<config::AdapterOption, 3> kOptions = {{
    {.name = "mock.embedding_dimensions",
     .type = config::AdapterOption::Type::kUnsigned,
     .min = 1,
     .max = 65536,
     .choices = {}},
    {.name = "mock.chunk_interval_ms",
     .type = config::AdapterOption::Type::kMillis,
     .min = 0,
     .max = 60'000,
     .choices = {}},
    {.name = "mock.protocol", .type = config::AdapterOption::Type::kChoice, .choices = kProtocols},
}};

}  // namespace

const config::AdapterSchema MockAdapter::kSchema = {
    .name = "mock", .network = false, .options = kOptions};

Result<std::unique_ptr<ProviderAdapter>> MockAdapter::make(const config::Provider& p) {
  std::unique_ptr<MockAdapter> a(new MockAdapter(p));
  if (const std::string* d = p.option("mock.embedding_dimensions")) {
    a->embedding_dimensions_ = static_cast<std::uint32_t>(std::stoul(*d));  // validated
  }
  if (const std::string* i = p.option("mock.chunk_interval_ms")) {
    a->chunk_interval_ = std::chrono::milliseconds(std::stoul(*i));
  }
  a->protocol_ = protocol::openai_chat::kChatProtocol;
  if (const std::string* wire = p.option("mock.protocol")) {
    for (std::string_view known : kProtocols) {
      if (known == *wire) {
        a->protocol_ = known;  // validated against kProtocols; keep the static string
      }
    }
  }
  if (a->protocol_ != protocol::openai_chat::kChatProtocol) {
    a->answers_ = protocol::ingress_of(a->protocol_);
    if (a->answers_ == nullptr) {
      return Error(ErrorKind::kInternal, p.source + ": provider " + p.id +
                                             ": no caller-side codec speaks mock.protocol " +
                                             std::string(a->protocol_));
    }
  }
  return std::unique_ptr<ProviderAdapter>(std::move(a));
}

protocol::ProtocolId MockAdapter::wire_protocol(protocol::Operation operation) const {
  return operation == protocol::Operation::kEmbeddings ? protocol::openai_chat::kEmbeddingsProtocol
                                                       : protocol_;
}

Result<MockReply> MockAdapter::answer_in_protocol(std::string_view body, bool stream) const {
  // The upstream body, read the way a server of protocol_ reads its callers' bodies.
  protocol::IngressRequest upstream;
  upstream.body = body;
  upstream.stream = stream;
  auto request = answers_->to_ir(upstream);
  if (!request) {
    return std::move(request).error();
  }
  // Gemini bodies carry no model (it is in the URL); the mock answers as "mock" then.
  const ir::Response response =
      mock_ir_response(*request, request->model.empty() ? "mock" : request->model);
  MockReply reply;
  if (!stream) {
    bool clamped = false;
    auto encoded = answers_->encode_response(response, clamped);
    if (!encoded) {
      return std::move(encoded).error();
    }
    reply.body = std::move(*encoded);
    return reply;
  }
  upstream.estimated_input_tokens = response.usage->input_tokens;
  auto encoder = answers_->make_stream_encoder(upstream);
  std::string block;
  for (const ir::StreamEvent& event : mock_ir_stream(response)) {
    encoder->encode(event, block);
    if (!block.empty()) {
      reply.events.push_back(std::move(block));
      block.clear();
    }
  }
  return reply;
}

Awaitable<Result<std::unique_ptr<Exchange>>> MockAdapter::call_in_process(
    boost::asio::any_io_executor executor, const InProcessRequest& request,
    Cancellation& cancel) const {
  if (cancel.cancelled()) {
    co_return Error(ErrorKind::kClientGone, "client disconnected");
  }
  // The body is what an upstream would receive; the mock reads it like one.
  const bool embeddings = request.operation == protocol::Operation::kEmbeddings;
  if (!embeddings && answers_ != nullptr) {
    auto reply = answer_in_protocol(request.body, request.stream);
    if (!reply) {
      co_return Error(
          ErrorKind::kInternal,
          "the mock provider could not read the upstream request: " + reply.error().message());
    }
    co_return std::make_unique<MockExchange>(std::move(executor), std::move(*reply), request.stream,
                                             chunk_interval_);
  }
  auto decoded = embeddings ? protocol::openai_chat::decode_embeddings_request(request.body)
                            : protocol::openai_chat::decode_chat_request(request.body);
  if (!decoded) {
    co_return Error(
        ErrorKind::kInternal,
        "the mock provider could not read the upstream request: " + decoded.error().message());
  }
  MockReply reply = embeddings ? mock_embeddings(*decoded, decoded->model, embedding_dimensions_)
                               : mock_chat(*decoded, decoded->model);
  co_return std::make_unique<MockExchange>(std::move(executor), std::move(reply),
                                           request.stream && !embeddings, chunk_interval_);
}

void MockAdapter::write_request_head(const RequestSpec& spec, std::string_view /*body*/,
                                     codec::HeadWriter& head) const {
  // Never sent anywhere; written for symmetry with network adapters (tests, logs).
  head.request_line("POST", spec.operation == protocol::Operation::kEmbeddings
                                ? "/embeddings"
                                : "/chat/completions")
      .field("Content-Length", spec.content_length)
      .end();
}

}  // namespace sluice::providers
