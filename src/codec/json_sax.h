#pragma once

#include <cstddef>

#include <boost/json/string_view.hpp>
#include <boost/system/error_code.hpp>

// What every boost::json::basic_parser handler of the project that reads a few fields of a
// document (stream chunks) shares: no size limits beyond the parser's own depth limit, and
// nothing to do at the document's bounds, for number fragments and for comments. A handler
// derives from it and adds the callbacks it reads. Header-only for the same reason as
// json_read.h.
namespace sluice::codec {

struct SaxHandlerBase {
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_number_part(boost::json::string_view, boost::system::error_code&) { return true; }
  bool on_comment_part(boost::json::string_view, boost::system::error_code&) { return true; }
  bool on_comment(boost::json::string_view, boost::system::error_code&) { return true; }
};

}  // namespace sluice::codec
