#include "core/thread_name.h"

#include <algorithm>
#include <array>
#include <cstring>

#include <pthread.h>

namespace sluice {

void name_this_thread(std::string_view name) {
  std::array<char, 16> buf{};
  const std::size_t n = std::min(name.size(), buf.size() - 1);
  std::memcpy(buf.data(), name.data(), n);
  pthread_setname_np(pthread_self(), buf.data());
}

}  // namespace sluice
