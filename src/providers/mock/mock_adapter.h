#pragma once

#include <memory>

#include "providers/adapter.h"
#include "providers/mock/mock_provider.h"

namespace sluice::providers {

// `adapter: mock`: deterministic OpenAI-shaped answers computed in process (mock_provider.h),
// so the gateway works offline and its own tests and benchmarks need no network. It speaks the
// same wire protocols as the openai adapter, so everything the pipeline does around an upstream
// (passthrough, translation, metering) runs unchanged against it.
//
// Options: `mock.embedding_dimensions` (vector width, default 8), `mock.chunk_interval_ms`
// (pause between streamed chunks, default 0) and `mock.protocol` (the wire protocol its chat
// answers are in: openai_chat (default), anthropic_messages, gemini or openai_responses; a
// caller of the same protocol then gets passthrough, any other caller translation, exactly as
// with a real provider of that protocol). Embeddings are always OpenAI-shaped.
//
// In another protocol than openai_chat the mock plays that protocol's server with the
// protocol's own registered codecs: the caller side (protocol/registry.h ingress_of) reads the
// upstream request and writes the answer (mock_ir.h), while translated traffic towards it is
// written and read by the protocol's UpstreamCodec like for any adapter. Its answers depend
// only on the request, except the `created_at` a Responses stream states, which the Responses
// codec takes from the clock.
class MockAdapter final : public ProviderAdapter {
 public:
  static const config::AdapterSchema kSchema;
  static Result<std::unique_ptr<ProviderAdapter>> make(const config::Provider& provider);

  protocol::ProtocolId wire_protocol(protocol::Operation operation) const override;
  Awaitable<Result<std::unique_ptr<Exchange>>> call_in_process(
      boost::asio::any_io_executor executor, const InProcessRequest& request,
      Cancellation& cancel) const override;
  void write_request_head(const RequestSpec& spec, std::string_view body,
                          codec::HeadWriter& head) const override;

 private:
  explicit MockAdapter(const config::Provider& provider) : ProviderAdapter(provider) {}

  Result<MockReply> answer_in_protocol(std::string_view body, bool stream) const;

  std::uint32_t embedding_dimensions_ = 8;
  protocol::ProtocolId protocol_;  // of chat answers
  // The caller side of protocol_, which answers its chat requests; null for openai_chat, whose
  // answers are mock_provider.h's.
  const protocol::IngressCodec* answers_ = nullptr;
  std::chrono::milliseconds chunk_interval_{0};
};

}  // namespace sluice::providers
