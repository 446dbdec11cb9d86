#include "codec/json_envelope.h"

#include <utility>
#include <vector>

#include "codec/json_object_reader.h"
#include "codec/json_writer.h"

namespace sluice::codec {

std::string splice_json_string(std::string_view body, std::size_t begin, std::size_t end,
                               std::string_view value) {
  std::string out;
  out.reserve(body.size() + value.size() + 2);
  out.append(body.substr(0, begin));
  JsonWriter(out).string(value);
  out.append(body.substr(end));
  return out;
}

std::optional<std::string> replace_models(std::string_view body, std::string_view model) {
  JsonObjectReader in(body);
  if (!in.eat('{')) {
    return std::nullopt;
  }
  std::vector<std::pair<std::size_t, std::size_t>> models;
  std::string key;
  if (!in.eat('}')) {
    do {
      if (!in.at_string()) {
        return std::nullopt;
      }
      const bool ascii = in.string(key);
      if (!in.eat(':')) {
        return std::nullopt;
      }
      const auto range = in.value();
      if (ascii && key == "model") {
        models.push_back(range);
      }
    } while (in.eat(','));
    if (!in.eat('}')) {
      return std::nullopt;
    }
  }
  std::string out;
  out.reserve(body.size() + models.size() * (model.size() + 2));
  std::size_t at = 0;
  for (const auto& [begin, end] : models) {
    out.append(body.substr(at, begin - at));
    JsonWriter(out).string(model);
    at = end;
  }
  out.append(body.substr(at));
  return out;
}

}  // namespace sluice::codec
