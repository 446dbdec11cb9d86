#include "metering/spool.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include <boost/crc.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metering/record_json.h"

namespace sluice::metering {

namespace {

constexpr std::array<char, 4> kMagic = {'S', 'L', 'S', 'P'};
constexpr std::size_t kHeader = 12;
// A record is a few KB at most (its attempts are bounded by the route's plan); anything
// claiming more is damage, not data.
constexpr std::uint32_t kMaxPayload = 16 * 1024 * 1024;

Error io_error(std::string_view what, const std::string& path) {
  return Error(ErrorKind::kInternal, std::string(what) + " " + path + ": " + std::strerror(errno));
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) {
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
}

std::uint32_t get_u32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) {
    v = (v << 8) | static_cast<unsigned char>(p[i]);
  }
  return v;
}

std::uint32_t crc32(std::string_view bytes) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

bool pread_all(int fd, char* buf, std::size_t n, std::uint64_t offset) {
  while (n > 0) {
    const ssize_t got = ::pread(fd, buf, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      return false;
    }
    buf += got;
    n -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

// The valid frame at `offset`: its payload, or nothing (short, wrong magic, bad checksum).
std::optional<std::string> frame_at(int fd, std::uint64_t offset, std::uint64_t size) {
  if (offset + kHeader > size) {
    return std::nullopt;
  }
  char head[kHeader];
  if (!pread_all(fd, head, kHeader, offset) || std::memcmp(head, kMagic.data(), 4) != 0) {
    return std::nullopt;
  }
  const std::uint32_t length = get_u32(head + 4);
  if (length > kMaxPayload || offset + kHeader + length > size) {
    return std::nullopt;
  }
  std::string payload(length, '\0');
  if (!pread_all(fd, payload.data(), length, offset + kHeader) ||
      crc32(payload) != get_u32(head + 8)) {
    return std::nullopt;
  }
  return payload;
}

// The offset of the next valid frame after `from`, or nothing.
std::optional<std::uint64_t> next_frame(int fd, std::uint64_t from, std::uint64_t size) {
  std::string window(64 * 1024, '\0');
  std::uint64_t at = from + 1;
  while (at + kHeader <= size) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(window.size(), size - at));
    if (!pread_all(fd, window.data(), n, at)) {
      return std::nullopt;
    }
    const std::string_view view(window.data(), n);
    for (std::size_t pos = view.find('S'); pos != std::string_view::npos;
         pos = view.find('S', pos + 1)) {
      if (frame_at(fd, at + pos, size)) {
        return at + pos;
      }
    }
    if (n < 4) {
      break;
    }
    at += n - 3;  // a magic split across windows is found in the next one
  }
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<Spool>> Spool::open(std::string path) {
  const bool existed = ::access(path.c_str(), F_OK) == 0;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return io_error("cannot open usage spool", path);
  }
  if (!existed) {
    // A new file's name is durable only once its directory is synced: without it, a power loss
    // could take the whole spool, acknowledged frames included.
    const std::string dir = std::filesystem::path(path).parent_path().string();
    const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }
  std::unique_ptr<Spool> spool(new Spool(std::move(path), fd));
  if (auto scanned = spool->scan(); !scanned) {
    return std::move(scanned).error();
  }
  return spool;
}

Spool::~Spool() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

Result<void> Spool::scan() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    return io_error("cannot stat usage spool", path_);
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  std::uint64_t offset = 0;
  std::uint64_t valid_end = 0;
  records_ = 0;
  while (offset < size) {
    if (auto payload = frame_at(fd_, offset, size)) {
      offset += kHeader + payload->size();
      valid_end = offset;
      ++records_;
      continue;
    }
    const std::optional<std::uint64_t> next = next_frame(fd_, offset, size);
    if (!next) {
      break;  // a torn last frame (or damage up to the end)
    }
    skipped_bytes_ += *next - offset;
    offset = *next;
  }
  if (valid_end < size) {
    // Cut the torn tail off, so frames appended from now on follow valid ones directly.
    skipped_bytes_ += size - valid_end;
    if (::ftruncate(fd_, static_cast<off_t>(valid_end)) != 0 || ::fsync(fd_) != 0) {
      return io_error("cannot cut the torn tail of usage spool", path_);
    }
  }
  bytes_ = valid_end;
  return {};
}

Result<void> Spool::append(std::span<const store::UsageRecord> records) {
  std::string out;
  for (const store::UsageRecord& r : records) {
    const std::string payload = record_to_json(r);
    out.append(kMagic.data(), kMagic.size());
    put_u32(out, static_cast<std::uint32_t>(payload.size()));
    put_u32(out, crc32(payload));
    out.append(payload);
  }
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pwrite(fd_, out.data() + done, out.size() - done, static_cast<off_t>(bytes_ + done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      Error error = io_error("cannot write usage spool", path_);
      [[maybe_unused]] int ignored = ::ftruncate(fd_, static_cast<off_t>(bytes_));
      return error;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd_) != 0) {
    Error error = io_error("cannot fdatasync usage spool", path_);
    [[maybe_unused]] int ignored = ::ftruncate(fd_, static_cast<off_t>(bytes_));
    return error;
  }
  bytes_ += out.size();
  records_ += records.size();
  return {};
}

Result<Spool::Chunk> Spool::read(std::uint64_t offset, std::size_t max_records) const {
  Chunk chunk;
  while (offset < bytes_ && chunk.records.size() < max_records) {
    std::optional<std::string> payload = frame_at(fd_, offset, bytes_);
    if (!payload) {
      const std::optional<std::uint64_t> next = next_frame(fd_, offset, bytes_);
      if (!next) {
        offset = bytes_;
        break;
      }
      offset = *next;
      continue;
    }
    offset += kHeader + payload->size();
    auto record = record_from_json(*payload);
    if (record) {
      chunk.records.push_back(std::move(*record));
    }
    // A frame whose checksum holds but whose JSON does not parse cannot be replayed by any
    // build that wrote it; skipping it keeps the rest replayable.
  }
  chunk.next_offset = offset;
  chunk.at_end = offset >= bytes_;
  return chunk;
}

Result<void> Spool::clear() {
  if (::ftruncate(fd_, 0) != 0 || ::fsync(fd_) != 0) {
    return io_error("cannot empty usage spool", path_);
  }
  bytes_ = 0;
  records_ = 0;
  return {};
}

}  // namespace sluice::metering
