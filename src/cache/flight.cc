#include "cache/flight.h"

#include <cstring>

namespace sluice::cache {

void Flight::wake_all(std::unique_lock<std::mutex>& lock) {
  std::vector<std::pair<const void*, std::function<void()>>> wakers;
  wakers.swap(wakers_);
  lock.unlock();  // a waker posts to another worker: never under the lock
  for (auto& [who, wake] : wakers) {
    wake();
  }
}

void Flight::publish(std::span<const ir::StreamEvent> events) {
  std::unique_lock lock(mu_);
  if (state_ != State::kLive) {
    return;
  }
  for (const ir::StreamEvent& e : events) {
    bytes_ += sizeof(ir::StreamEvent) + e.text.size() + e.id.size() + e.name.size();
  }
  if (bytes_ > max_bytes_) {
    state_ = State::kFailed;  // followers stop here; nothing unbounded is kept for them
  } else {
    events_.insert(events_.end(), events.begin(), events.end());
  }
  wake_all(lock);
}

void Flight::set_origin(std::string_view provider, std::string_view model,
                        const std::optional<ir::Usage>& usage) {
  {
    std::lock_guard lock(mu_);
    if (origin_ != nullptr && origin_->provider == provider && origin_->model == model &&
        origin_->usage == usage) {
      return;  // the usual case: unchanged since the last batch of events
    }
  }
  auto made = std::make_shared<const Origin>(
      Origin{std::string(provider), std::string(model), usage});  // built outside the lock
  std::lock_guard lock(mu_);
  if (state_ == State::kLive) {
    origin_ = std::move(made);
  }
}

std::shared_ptr<const Flight::Origin> Flight::origin() const {
  std::lock_guard lock(mu_);
  return origin_;
}

void Flight::finish(bool whole, std::string provider, std::string model,
                    std::optional<ir::Usage> usage) {
  std::shared_ptr<const Origin> made;
  if (whole) {
    made = std::make_shared<const Origin>(Origin{std::move(provider), std::move(model), usage});
  }
  std::unique_lock lock(mu_);
  if (state_ == State::kLive) {
    state_ = whole ? State::kDone : State::kFailed;
    if (made != nullptr) {
      origin_ = std::move(made);
    }
  }
  wake_all(lock);
}

Flight::State Flight::read(std::size_t& cursor, std::vector<ir::StreamEvent>& out) const {
  std::lock_guard lock(mu_);
  if (cursor < events_.size()) {
    out.insert(out.end(), events_.begin() + static_cast<std::ptrdiff_t>(cursor), events_.end());
    cursor = events_.size();
  }
  return state_;
}

bool Flight::wait(std::size_t cursor, const void* who, std::function<void()> wake) {
  std::lock_guard lock(mu_);
  if (cursor < events_.size() || state_ != State::kLive) {
    return false;
  }
  for (auto& [registered, registered_wake] : wakers_) {
    if (registered == who) {
      registered_wake = std::move(wake);  // the newest timer to cancel
      return true;
    }
  }
  wakers_.emplace_back(who, std::move(wake));
  return true;
}

std::size_t Flights::KeyHash::operator()(const Key& key) const {
  std::size_t h = 0;
  std::memcpy(&h, key.data(), sizeof h);
  return h;
}

Flights::Boarding Flights::board(const Key& key, std::size_t max_bytes, const Key& digest) {
  Shard& shard = shards_[key[30] % kShards];
  std::lock_guard lock(shard.mu);
  auto [it, inserted] = shard.flights.try_emplace(key);
  if (!inserted) {
    it->second->join();
    return {it->second, false};
  }
  it->second = std::make_shared<Flight>(max_bytes, digest);
  return {it->second, true};
}

void Flights::land(const Key& key, const Flight& flight) {
  Shard& shard = shards_[key[30] % kShards];
  std::shared_ptr<Flight> landed;  // released after the lock
  std::lock_guard lock(shard.mu);
  const auto it = shard.flights.find(key);
  if (it != shard.flights.end() && it->second.get() == &flight) {
    landed = std::move(it->second);
    shard.flights.erase(it);
  }
}

std::size_t Flights::in_air() const {
  std::size_t n = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard lock(shard.mu);
    n += shard.flights.size();
  }
  return n;
}

}  // namespace sluice::cache
