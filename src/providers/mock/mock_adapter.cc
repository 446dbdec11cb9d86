#include "providers/mock/mock_adapter.h"

#include <array>

#include "protocol/anthropic/ingress.h"
#include "protocol/anthropic/request_decoder.h"
#include "protocol/anthropic/request_encoder.h"
#include "protocol/anthropic/response.h"
#include "protocol/anthropic/stream_decoder.h"
#include "protocol/anthropic/stream_encoder.h"
#include "protocol/gemini/ingress.h"
#include "protocol/gemini/request_decoder.h"
#include "protocol/gemini/request_encoder.h"
#include "protocol/gemini/response.h"
#include "protocol/gemini/stream_decoder.h"
#include "protocol/gemini/stream_encoder.h"
#include "protocol/openai_chat/envelope.h"
#include "protocol/openai_chat/ingress.h"
#include "protocol/openai_chat/request_decoder.h"
#include "protocol/openai_chat/request_encoder.h"
#include "protocol/openai_chat/response.h"
#include "protocol/openai_chat/stream_decoder.h"
#include "protocol/openai_responses/conventions.h"
#include "protocol/openai_responses/request_decoder.h"
#include "protocol/openai_responses/request_encoder.h"
#include "protocol/openai_responses/response.h"
#include "protocol/openai_responses/stream_decoder.h"
#include "protocol/openai_responses/stream_encoder.h"
#include "providers/mock/mock_exchange.h"
#include "providers/mock/mock_ir.h"
#include "providers/mock/mock_provider.h"

namespace sluice::providers {

namespace {

constexpr std::array<std::string_view, 4> kProtocols = {
    protocol::openai_chat::kChatProtocol, protocol::anthropic::kMessagesProtocol,
    protocol::gemini::kGeminiProtocol, protocol::openai_responses::kResponsesProtocol};

constexpr std::int64_t kCreated = 1700000000;  // the mock's answers do not depend on the clock

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

// The request as IR, read the way an upstream of `wire` would read it.
Result<ir::Request> decode_in(protocol::ProtocolId wire, std::string_view body) {
  if (wire == protocol::anthropic::kMessagesProtocol) {
    return protocol::anthropic::decode_request(body);
  }
  if (wire == protocol::gemini::kGeminiProtocol) {
    return protocol::gemini::decode_request(body);
  }
  return protocol::openai_responses::decode_request(body);
}

Result<std::string> encode_in(protocol::ProtocolId wire, const ir::Response& response) {
  if (wire == protocol::anthropic::kMessagesProtocol) {
    return protocol::anthropic::encode_response(response);
  }
  if (wire == protocol::gemini::kGeminiProtocol) {
    return protocol::gemini::encode_response(response);
  }
  return protocol::openai_responses::encode_response(response, kCreated);
}

std::unique_ptr<protocol::StreamEncoder> stream_encoder_for(protocol::ProtocolId wire,
                                                            std::uint64_t input_tokens) {
  if (wire == protocol::anthropic::kMessagesProtocol) {
    return std::make_unique<protocol::anthropic::StreamEncoder>(input_tokens);
  }
  if (wire == protocol::gemini::kGeminiProtocol) {
    return std::make_unique<protocol::gemini::StreamEncoder>();
  }
  return std::make_unique<protocol::openai_responses::StreamEncoder>(kCreated);
}

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
  return std::unique_ptr<ProviderAdapter>(std::move(a));
}

protocol::ProtocolId MockAdapter::wire_protocol(protocol::Operation operation) const {
  return operation == protocol::Operation::kEmbeddings ? protocol::openai_chat::kEmbeddingsProtocol
                                                       : protocol_;
}

Result<MockReply> MockAdapter::answer_in_protocol(std::string_view body, bool stream) const {
  auto request = decode_in(protocol_, body);
  if (!request) {
    return std::move(request).error();
  }
  // Gemini bodies carry no model (it is in the URL); the mock answers as "mock" then.
  const ir::Response response =
      mock_ir_response(*request, request->model.empty() ? "mock" : request->model);
  MockReply reply;
  if (!stream) {
    auto encoded = encode_in(protocol_, response);
    if (!encoded) {
      return std::move(encoded).error();
    }
    reply.body = std::move(*encoded);
    return reply;
  }
  auto encoder = stream_encoder_for(protocol_, response.usage->input_tokens);
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
  if (!embeddings && protocol_ != protocol::openai_chat::kChatProtocol) {
    auto reply = answer_in_protocol(request.body, request.stream);
    if (!reply) {
      co_return Error(ErrorKind::kInternal, "the mock provider could not read the upstream request: " +
                                                reply.error().message());
    }
    co_return std::make_unique<MockExchange>(std::move(executor), std::move(*reply),
                                             request.stream, chunk_interval_);
  }
  auto decoded = embeddings ? protocol::openai_chat::decode_embeddings_request(request.body)
                            : protocol::openai_chat::decode_chat_request(request.body);
  if (!decoded) {
    co_return Error(ErrorKind::kInternal,
                    "the mock provider could not read the upstream request: " +
                        decoded.error().message());
  }
  MockReply reply = embeddings ? mock_embeddings(*decoded, decoded->model, embedding_dimensions_)
                               : mock_chat(*decoded, decoded->model);
  co_return std::make_unique<MockExchange>(std::move(executor), std::move(reply),
                                           request.stream && !embeddings, chunk_interval_);
}

void MockAdapter::write_request_head(const RequestSpec& spec, std::string_view /*body*/,
                                     codec::HeadWriter& head) const {
  // Never sent anywhere; written for symmetry with network adapters (tests, logs).
  head.request_line("POST",
                    spec.operation == protocol::Operation::kEmbeddings ? "/embeddings"
                                                                        : "/chat/completions")
      .field("Content-Length", spec.content_length)
      .end();
}

Result<std::string> MockAdapter::encode_request(const ir::Request& request,
                                                std::string_view model, bool stream) const {
  // The same encoders as the real adapter of each protocol, with their default options.
  if (protocol_ == protocol::anthropic::kMessagesProtocol) {
    return protocol::anthropic::encode_request(request, model, stream);
  }
  if (protocol_ == protocol::gemini::kGeminiProtocol) {
    return protocol::gemini::encode_request(request);
  }
  if (protocol_ == protocol::openai_responses::kResponsesProtocol) {
    return protocol::openai_responses::encode_request(request, model, stream);
  }
  return protocol::openai_chat::encode_request(request, model, stream);
}

Result<ir::Response> MockAdapter::decode_response(std::string_view body) const {
  if (protocol_ == protocol::anthropic::kMessagesProtocol) {
    return protocol::anthropic::decode_response(body);
  }
  if (protocol_ == protocol::gemini::kGeminiProtocol) {
    return protocol::gemini::decode_response(body);
  }
  if (protocol_ == protocol::openai_responses::kResponsesProtocol) {
    return protocol::openai_responses::decode_response(body);
  }
  return protocol::openai_chat::decode_response(body);
}

std::unique_ptr<protocol::StreamDecoder> MockAdapter::make_stream_decoder() const {
  if (protocol_ == protocol::anthropic::kMessagesProtocol) {
    return std::make_unique<protocol::anthropic::StreamDecoder>();
  }
  if (protocol_ == protocol::gemini::kGeminiProtocol) {
    return std::make_unique<protocol::gemini::StreamDecoder>();
  }
  if (protocol_ == protocol::openai_responses::kResponsesProtocol) {
    return std::make_unique<protocol::openai_responses::StreamDecoder>();
  }
  return std::make_unique<protocol::openai_chat::StreamDecoder>();
}

}  // namespace sluice::providers
