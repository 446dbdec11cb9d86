#pragma once

// Fakes of what the pipeline talks to, for its unit tests: a request head, a Downstream that
// records what the caller would receive, scripted upstream exchanges and their connector, a
// host, and an observer that records the calls it gets.

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/parse.hpp>

#include "codec/request_head.h"
#include "pipeline/downstream.h"
#include "pipeline/observer.h"
#include "pipeline/pipeline.h"
#include "pipeline/upstream_connector.h"
#include "providers/adapter.h"
#include "providers/exchange.h"

namespace sluice::pipeline::fakes {

namespace json = boost::json;

class FakeHead final : public codec::RequestHead {
 public:
  FakeHead(std::string method, std::string target,
           std::vector<std::pair<std::string, std::string>> headers)
      : method_(std::move(method)), target_(std::move(target)), headers_(std::move(headers)) {}

  std::string_view method() const override { return method_; }
  std::string_view target() const override { return target_; }
  std::string_view header(std::string_view name) const override {
    for (const auto& [n, v] : headers_) {
      if (providers::iequals(n, name)) {
        return v;
      }
    }
    return {};
  }
  bool has_header(std::string_view name) const override {
    for (const auto& [n, v] : headers_) {
      if (providers::iequals(n, name)) {
        return true;
      }
    }
    return false;
  }
  void for_each_header(FunctionRef<void(std::string_view, std::string_view)> visit) const override {
    for (const auto& [n, v] : headers_) {
      visit(n, v);
    }
  }

 private:
  std::string method_;
  std::string target_;
  std::vector<std::pair<std::string, std::string>> headers_;
};

// What the caller received.
class FakeDownstream final : public Downstream {
 public:
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string body;
  bool streamed = false;
  bool ended = false;
  std::vector<std::string> writes;
  // Fires the disconnect watch just before the write with this index (stream writes).
  int disconnect_before_write = -1;

  ResponseHead& new_head() override {
    head_storage_.clear();
    return head_storage_;
  }
  Awaitable<bool> send(RequestContext& ctx, const ResponseHead& head,
                       std::string_view bytes) override {
    record(ctx, head);
    body.assign(bytes);
    co_return true;
  }
  Awaitable<bool> begin_stream(RequestContext& ctx, const ResponseHead& head) override {
    record(ctx, head);
    streamed = true;
    co_return true;
  }
  Awaitable<bool> write(RequestContext& ctx, std::string_view bytes) override {
    if (static_cast<int>(writes.size()) == disconnect_before_write) {
      disconnect();
      co_return false;
    }
    writes.emplace_back(bytes);
    body.append(bytes);
    ctx.bytes_out += bytes.size();
    co_return true;
  }
  Awaitable<bool> end_stream(RequestContext&) override {
    ended = true;
    co_return true;
  }
  void watch_disconnect(std::function<void()> on_gone) override { on_gone_ = std::move(on_gone); }
  void unwatch() override { on_gone_ = nullptr; }
  bool client_gone() const override { return gone_; }

  void disconnect() {
    gone_ = true;
    if (auto f = std::move(on_gone_)) {
      on_gone_ = nullptr;
      f();
    }
  }
  json::value json_body() const { return json::parse(body); }

 private:
  void record(RequestContext& ctx, const ResponseHead& head) {
    status = head.status;
    ctx.status = head.status;
    headers["content-type"] = std::string(head.content_type);
    for (const auto& [n, v] : head.headers.view()) {
      std::string name(n);
      for (char& c : name) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      headers[name] = std::string(v);
    }
  }

  std::function<void()> on_gone_;
  bool gone_ = false;
  ResponseHead head_storage_;
};

// One scripted upstream response: status, headers, and the body in reads; `fail_at` ends the
// body with an error instead.
struct Script {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers = {{"content-type", "application/json"}};
  std::deque<std::string> reads;
  std::optional<Error> fail;  // returned after `reads` run out
};

class FakeExchange final : public providers::Exchange {
 public:
  // `aborted_flag` outlives the exchange (the pipeline destroys it when the attempt ends).
  FakeExchange(Script script, bool* aborted_flag)
      : script_(std::move(script)), aborted_flag_(aborted_flag) {
    timings_.acquire = std::chrono::microseconds(7);
    timings_.first_byte = std::chrono::microseconds(11);
  }
  bool aborted = false;

  int status() const override { return script_.status; }
  std::string_view header(std::string_view name) const override {
    for (const auto& [n, v] : script_.headers) {
      if (providers::iequals(n, name)) {
        return v;
      }
    }
    return {};
  }
  void for_each_header(FunctionRef<void(std::string_view, std::string_view)> visit) const override {
    for (const auto& [n, v] : script_.headers) {
      visit(n, v);
    }
  }
  const providers::ExchangeTimings& timings() const override { return timings_; }
  Awaitable<Result<std::size_t>> read_some(std::string& out) override {
    if (aborted) {
      co_return Error(ErrorKind::kClientGone, "client disconnected");
    }
    if (!script_.reads.empty()) {
      std::string next = std::move(script_.reads.front());
      script_.reads.pop_front();
      out.append(next);
      co_return next.size();
    }
    if (script_.fail) {
      co_return *script_.fail;
    }
    co_return std::size_t{0};
  }
  Awaitable<Result<std::string>> read_all(std::size_t limit) override {
    std::string body;
    for (;;) {
      auto n = co_await read_some(body);
      if (!n) {
        co_return n.error();
      }
      if (*n == 0) {
        co_return body;
      }
    }
  }
  void abort() override {
    aborted = true;
    *aborted_flag_ = true;
  }

 private:
  Script script_;
  bool* aborted_flag_;
  providers::ExchangeTimings timings_;
};

class FakeConnector final : public UpstreamConnector {
 public:
  std::deque<Result<Script>> scripts;
  std::vector<FramedRequest> sent;
  bool last_aborted = false;  // the most recent exchange was aborted

  Awaitable<Result<std::unique_ptr<providers::Exchange>>> open(const FramedRequest& request,
                                                               providers::Cancellation&) override {
    FramedRequest copy;
    copy.provider = request.provider;
    copy.operation = request.operation;
    copy.stream = request.stream;
    copy.head = request.head;
    copy.body = request.body;
    sent.push_back(std::move(copy));
    Result<Script> next = std::move(scripts.front());
    scripts.pop_front();
    if (!next) {
      co_return next.error();
    }
    last_aborted = false;
    auto exchange = std::make_unique<FakeExchange>(std::move(*next), &last_aborted);
    co_return std::unique_ptr<providers::Exchange>(std::move(exchange));
  }
};

class FakeHost final : public Host {
 public:
  std::shared_ptr<const Snapshot> snapshot;
  bool is_draining = false;
  std::shared_ptr<const Snapshot> current_snapshot() const override { return snapshot; }
  bool draining() const override { return is_draining; }
};

class RecordingObserver final : public RequestObserver {
 public:
  std::vector<std::string> calls;
  void on_attempt(const RequestContext&, const Attempt& a) override {
    calls.push_back("attempt:" + std::to_string(a.status));
  }
  void on_usage(const RequestContext&, const ir::Usage& u) override {
    calls.push_back("usage:" + std::to_string(u.input_tokens) + "/" +
                    std::to_string(u.output_tokens));
  }
  void on_finish(const RequestContext& ctx) override {
    calls.push_back("finish:" + std::to_string(ctx.status));
  }
};

}  // namespace sluice::pipeline::fakes
