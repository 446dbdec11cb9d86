#include "ir/response.h"

namespace sluice::ir {

std::string_view to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::kUnset:
      return "";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kToolCalls:
      return "tool_calls";
    case FinishReason::kStopSequence:
      return "stop_sequence";
    case FinishReason::kContentFilter:
      return "content_filter";
    case FinishReason::kPauseTurn:
      return "pause_turn";
    case FinishReason::kRefusal:
      return "refusal";
    case FinishReason::kOther:
      return "other";
  }
  return "";
}

}  // namespace sluice::ir
