#pragma once

#include <string_view>

#include "core/result.h"
#include "embeddings_responder.h"
#include "reply.h"

namespace sluice::mock {

// Whether a Bedrock model id names an embedding model (Titan or Cohere Embed), whose
// InvokeModel bodies respond_bedrock_embed answers rather than Claude's Messages bodies.
bool is_bedrock_embedding_model(std::string_view model_id);

// POST …/model/{modelId}/invoke for an embedding model, as Bedrock answers it:
//   Titan  {"inputText" (required), "dimensions" (v2: 256, 512, 1024; default 1024),
//          "normalize", "embeddingTypes"; multimodal: "embeddingConfig"
//          {"outputEmbeddingLength": 256, 384, 1024}} -> {"embedding", "embeddingsByType":
//          {"float"}, "inputTextTokenCount"}; v1 takes inputText alone (1536 dimensions);
//   Cohere {"texts" (1..96 strings, required), "input_type" (required), "truncate",
//          "embedding_types", v4 "output_dimension" (256, 512, 1024, 1536; default 1536;
//          v3 1024)} -> {"embeddings": [[...]], "id", "response_type": "embeddings_floats",
//          "texts"}, or {"embeddings": {"float": [[...]]}, "response_type":
//          "embeddings_by_type"} when embedding_types asks for float.
// Any other member, or a wrong type or value, is a 400 ValidationException in Bedrock's
// wording ("Malformed input request: ..."). Every answer carries
// X-Amzn-Bedrock-Input-Token-Count (characters / 4 + 1 per text), the only place Bedrock
// states Cohere's token count. Vectors are embedding_of(text_terms(text, mode)).
Result<Reply> respond_bedrock_embed(std::string_view body, std::string_view model_id,
                                    EmbeddingMode mode);

}  // namespace sluice::mock
