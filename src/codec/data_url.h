#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "codec/json_writer.h"

// Inline images as OpenAI's APIs carry them (Chat Completions image_url.url, Responses
// input_image.image_url): a URL, or the image itself as an RFC 2397 base64 data URL.
namespace sluice::codec {

struct Base64DataUrl {
  std::string_view media_type;
  std::string_view payload;
};

// `data:<media type>;base64,<payload>` -> its parts (views into `url`); nullopt for any other URL.
inline std::optional<Base64DataUrl> parse_base64_data_url(std::string_view url) {
  constexpr std::string_view kScheme = "data:";
  constexpr std::string_view kBase64 = ";base64";
  const std::size_t comma = url.find(',');
  if (!url.starts_with(kScheme) || comma == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view meta = url.substr(kScheme.size(), comma - kScheme.size());
  if (!meta.ends_with(kBase64)) {
    return std::nullopt;
  }
  meta.remove_suffix(kBase64.size());
  return Base64DataUrl{meta, url.substr(comma + 1)};
}

// Appends, JSON-escaped and without quotes, `source` when it is a URL (`is_url`), else the data
// URL `data:<media_type>;base64,<source>`.
inline void append_image_url_escaped(std::string& out, bool is_url, std::string_view source,
                                     std::string_view media_type) {
  if (!is_url) {
    out.append("data:");
    append_json_escaped(out, media_type);
    out.append(";base64,");
  }
  append_json_escaped(out, source);
}

}  // namespace sluice::codec
