#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "core/error.h"
#include "ir/stream_event.h"
#include "protocol/drift.h"
#include "protocol/stream.h"

namespace sluice::protocol {

// The common part of the stream decoders whose upstream events each carry one JSON object
// (anthropic/, openai_responses/, bedrock_converse/): the per-event parse arena, the schema
// drift count, the finished state and the one way a stream fails. A derived decoder keeps its
// own event mapping. Not thread-safe; not copyable or movable (it owns the arena). Header-only:
// sluice_protocol_api does not link Boost.JSON, the codec libraries that derive from it do.
class JsonStreamDecoder : public StreamDecoder {
 public:
  JsonStreamDecoder(const JsonStreamDecoder&) = delete;
  JsonStreamDecoder& operator=(const JsonStreamDecoder&) = delete;

  // kDone or kError has been produced.
  bool finished() const override { return finished_; }
  // Schema drift counted in drift_ (the derived decoder says which levels it reads).
  std::uint32_t unknown_fields() const override { return drift_.count(); }

 protected:
  JsonStreamDecoder() = default;
  ~JsonStreamDecoder() override = default;

  static ir::StreamEvent make(ir::StreamEventKind kind) {
    ir::StreamEvent e;
    e.kind = kind;
    return e;
  }

  // Appends a `kind` event with `text` and `index`, unless `text` is empty (an empty fragment
  // carries nothing).
  static void emit(ir::StreamEventKind kind, std::string_view text, std::uint32_t index,
                   std::vector<ir::StreamEvent>& out) {
    if (text.empty()) {
      return;
    }
    ir::StreamEvent e = make(kind);
    e.index = index;
    e.text.assign(text);
    out.push_back(std::move(e));
  }

  // Parses `data` (nesting limit codec::kMaxJsonDepth) into the decoder's arena and calls
  // `on_object(const boost::json::object&)`; data that is not a JSON object ends the stream with
  // kError (kUpstreamProtocol, "cannot translate event '<event_name>': data is not a JSON
  // object"). The arena is released afterwards: nothing may keep views into the object.
  template <class OnObject>
  void parse_event(std::string_view event_name, std::string_view data,
                   std::vector<ir::StreamEvent>& out, OnObject&& on_object) {
    boost::system::error_code ec;
    {
      boost::json::value doc = codec::parse_json(data, ec, boost::json::storage_ptr(&mr_));
      if (ec || !doc.is_object()) {
        fail("cannot translate event '" + std::string(event_name) + "': data is not a JSON object",
             out);
      } else {
        std::forward<OnObject>(on_object)(doc.get_object());
      }
    }
    mr_.release();
  }

  // Ends the stream with kError `error`: nothing follows it.
  void fail(Error error, std::vector<ir::StreamEvent>& out) {
    ir::StreamEvent e = make(ir::StreamEventKind::kError);
    e.error = std::move(error);
    out.push_back(std::move(e));
    finished_ = true;
  }
  // fail with ErrorKind::kUpstreamProtocol and `message`.
  void fail(std::string message, std::vector<ir::StreamEvent>& out) {
    fail(Error(ErrorKind::kUpstreamProtocol, std::move(message)), out);
  }

  Drift drift_;
  bool finished_ = false;

 private:
  unsigned char arena_[8192];
  boost::json::monotonic_resource mr_{arena_, sizeof arena_};
};

}  // namespace sluice::protocol
