#pragma once

#include <cstdint>
#include <string_view>

#include "protocol/protocol_id.h"
#include "protocol/upstream.h"

namespace sluice::protocol::bedrock_embeddings {

// Wire format id: embeddings bodies of Bedrock's InvokeModel (POST /model/{modelId}/invoke),
// whose shape is the model family's own. Upstream side only: OpenAI embeddings callers are
// translated to it.
inline constexpr ProtocolId kEmbeddingsProtocol = "bedrock_embeddings";

// The embedding model families Bedrock serves, told apart by the model id (a foundation model
// id, a cross-region inference profile id such as "us.cohere.embed-v4:0", or an ARN naming
// either). Request and response bodies follow the Bedrock user guide's model parameter pages
// (model-parameters-titan-embed-text.html, model-parameters-embed-v3.html, -embed-v4.html).
enum class Family : std::uint8_t {
  kUnknown,
  kTitanTextV1,      // amazon.titan-embed-text-v1, amazon.titan-embed-g1-text-02: inputText only
  kTitanTextV2,      // amazon.titan-embed-text-v2:0: inputText, dimensions, normalize
  kTitanMultimodal,  // amazon.titan-embed-image-v1: inputText, embeddingConfig
  kCohereV3,         // cohere.embed-english-v3, cohere.embed-multilingual-v3: texts, input_type
  kCohereV4,         // cohere.embed-v4:0: the same, plus output_dimension
};

Family family_of(std::string_view model_id);

// Titan embeds one text per call; Cohere up to this many (the service's limit).
inline constexpr std::size_t kMaxCohereTexts = 96;

// Translated OpenAI embeddings calls to Bedrock's embedding models:
//
//   encode_request  ir::Embed -> Titan {"inputText", "dimensions", "normalize": true} (one
//                   input only: Titan has no batch call; more is a 400 too_many_inputs, never
//                   several upstream calls behind the caller's back), Titan multimodal
//                   {"inputText", "embeddingConfig": {"outputEmbeddingLength"}}, or Cohere
//                   {"texts", "input_type" (the caller's, else search_document: OpenAI's
//                   vectors serve documents and queries alike, Cohere's query vectors only
//                   queries), "output_dimension" (v4)}. `dimensions` for a model that has no
//                   such choice, more than 96 Cohere texts, and a model id of no known family
//                   are a 400 (param "dimensions" / "input" / "model").
//   decode_response Titan {"embedding", "inputTextTokenCount"} -> one vector, usage input =
//                   inputTextTokenCount; Cohere {"embeddings": [[...]]} or {"embeddings":
//                   {"float": [[...]]}} -> the vectors, no usage (Bedrock reports Cohere's
//                   token count only in the X-Amzn-Bedrock-Input-Token-Count header, which the
//                   adapter reads). Anything else, or a vector holding a non-number, is
//                   kUpstreamProtocol.
// No streams.
class EmbeddingsUpstream final : public UpstreamCodec {
 public:
  ProtocolId protocol() const override { return kEmbeddingsProtocol; }
  Operation operation() const override { return Operation::kEmbeddings; }
  Result<std::string> encode_request(const ir::Request& request,
                                     const EncodeTarget& target) const override;
  Result<ir::Response> decode_response(std::string_view body) const override;
  std::unique_ptr<protocol::StreamDecoder> make_stream_decoder() const override;
};

}  // namespace sluice::protocol::bedrock_embeddings
