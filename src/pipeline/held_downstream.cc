#include "pipeline/held_downstream.h"

namespace sluice::pipeline {

Awaitable<bool> HeldDownstream::send(RequestContext& ctx, const ResponseHead& head,
                                     std::string_view body) {
  // co_await stays out of conditional expressions: GCC 12 miscompiles some of those.
  bool written = false;
  if (!caller_.client_gone()) {
    written = co_await caller_.send(ctx, head, body);
  }
  co_return carry_on(written);
}

Awaitable<bool> HeldDownstream::begin_stream(RequestContext& ctx, const ResponseHead& head) {
  // co_await stays out of conditional expressions: GCC 12 miscompiles some of those.
  bool written = false;
  if (!caller_.client_gone()) {
    written = co_await caller_.begin_stream(ctx, head);
  }
  co_return carry_on(written);
}

Awaitable<bool> HeldDownstream::write(RequestContext& ctx, std::string_view bytes) {
  // co_await stays out of conditional expressions: GCC 12 miscompiles some of those.
  bool written = false;
  if (!caller_.client_gone()) {
    written = co_await caller_.write(ctx, bytes);
  }
  co_return carry_on(written);
}

Awaitable<bool> HeldDownstream::end_stream(RequestContext& ctx) {
  // co_await stays out of conditional expressions: GCC 12 miscompiles some of those.
  bool written = false;
  if (!caller_.client_gone()) {
    written = co_await caller_.end_stream(ctx);
  }
  co_return carry_on(written);
}

void HeldDownstream::watch_disconnect(std::function<void()> on_gone) {
  caller_.watch_disconnect([this, on_gone = std::move(on_gone)] {
    if (!wanted()) {
      on_gone();
    }
  });
}

}  // namespace sluice::pipeline
