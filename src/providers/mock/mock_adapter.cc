#include "providers/mock/mock_adapter.h"

#include <array>

#include "protocol/openai_chat/chat_ingress.h"
#include "protocol/openai_chat/chat_request.h"
#include "protocol/openai_chat/ir_request.h"
#include "protocol/openai_chat/ir_response.h"
#include "protocol/openai_chat/ir_stream.h"
#include "providers/mock/mock_exchange.h"
#include "providers/mock/mock_provider.h"

namespace sluice::providers {

namespace {

constexpr std::array<config::AdapterOption, 2> kOptions = {{
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
  return std::unique_ptr<ProviderAdapter>(std::move(a));
}

protocol::ProtocolId MockAdapter::wire_protocol(protocol::Operation operation) const {
  return operation == protocol::Operation::kEmbeddings ? protocol::openai_chat::kEmbeddingsProtocol
                                                       : protocol::openai_chat::kChatProtocol;
}

Awaitable<Result<std::unique_ptr<Exchange>>> MockAdapter::call_in_process(
    boost::asio::any_io_executor executor, const InProcessRequest& request,
    Cancellation& cancel) const {
  if (cancel.cancelled()) {
    co_return Error(ErrorKind::kClientGone, "client disconnected");
  }
  // The body is what an upstream would receive; the mock reads it like one.
  const bool embeddings = request.operation == protocol::Operation::kEmbeddings;
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
  return protocol::openai_chat::encode_request(request, model, stream);
}

Result<ir::Response> MockAdapter::decode_response(std::string_view body) const {
  return protocol::openai_chat::decode_response(body);
}

std::unique_ptr<protocol::StreamDecoder> MockAdapter::make_stream_decoder() const {
  return std::make_unique<protocol::openai_chat::StreamDecoder>();
}

}  // namespace sluice::providers
