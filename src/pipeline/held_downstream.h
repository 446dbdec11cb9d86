#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "pipeline/downstream.h"

namespace sluice::pipeline {

// The caller's side of a call whose answer others wait for as well (the leader of a shared
// call: pipeline/filters/cache_filter.h). Everything goes to the caller's downstream; once the
// caller has gone, and while `wanted()` says the answer is still awaited elsewhere, it carries
// on as if the caller were there (writes succeed, the disconnect watch stays quiet), so the
// upstream call runs to its end and the others get the whole answer. When nobody waits any
// more it reports the caller gone, as the caller's own downstream does, and the call stops.
class HeldDownstream final : public Downstream {
 public:
  HeldDownstream(Downstream& caller, std::function<bool()> wanted) : caller_(caller) {
    wanted_.push_back(std::move(wanted));
  }
  // Another party that may want the answer (an idempotent call that is also a cache leader):
  // the call stops only when none does.
  void also_wanted(std::function<bool()> wanted) { wanted_.push_back(std::move(wanted)); }

  // The real caller has gone (whatever this downstream tells the call).
  bool caller_left() const { return caller_.client_gone(); }

  ResponseHead& new_head() override { return caller_.new_head(); }
  Awaitable<bool> send(RequestContext& ctx, const ResponseHead& head,
                       std::string_view body) override;
  Awaitable<bool> begin_stream(RequestContext& ctx, const ResponseHead& head) override;
  Awaitable<bool> write(RequestContext& ctx, std::string_view bytes) override;
  Awaitable<bool> end_stream(RequestContext& ctx) override;
  void watch_disconnect(std::function<void()> on_gone) override;
  void unwatch() override { caller_.unwatch(); }
  bool client_gone() const override { return caller_.client_gone() && !wanted(); }

 private:
  bool wanted() const {
    for (const auto& w : wanted_) {
      if (w()) {
        return true;
      }
    }
    return false;
  }
  bool carry_on(bool written) const { return written || wanted(); }

  Downstream& caller_;
  std::vector<std::function<bool()>> wanted_;
};

}  // namespace sluice::pipeline
