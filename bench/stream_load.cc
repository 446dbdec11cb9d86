// sluice-stream-load: holds N concurrent streaming chat requests open against one HTTP/1.1
// endpoint and measures, per stream, time to first byte, time to first SSE event and the
// largest gap between consecutive events. Used by bench/run.sh for the 10k-streams goal.
//
// Model: N "slots", each a coroutine owning one keep-alive connection that runs streams back
// to back until --duration-s has passed, so concurrency stays at N for the whole plateau.
// Slots start evenly over --ramp-s to avoid a connect storm. After the duration no new
// stream starts; in-flight streams get --grace-s to finish, then everything is closed.
//
// Output: one JSON object on stdout (see print_summary). With --rss-pid the tool also samples
// VmRSS of that process (the gateway) before the first connect ("idle") and during the
// plateau, and the process's CPU time over the run.
//
// Single-threaded by default (one io_context); --threads K runs K independent shards, each
// with its own io_context and N/K slots, merged at the end.

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <unistd.h>

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

struct Options {
  std::string host = "127.0.0.1";
  std::string port;
  std::string path = "/v1/chat/completions";
  std::vector<std::string> headers;
  std::string body;
  int concurrency = 100;
  double duration_s = 10;
  double ramp_s = 2;
  double grace_s = 10;
  double idle_timeout_s = 15;
  double gap_limit_ms = 200;
  int min_events = 1;
  int threads = 1;
  int rss_pid = 0;
  std::string label;
};

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "error: %s\n"
               "usage: sluice-stream-load --port P [--host H] [--path /v1/chat/completions]\n"
               "  [--header 'Name: value']... [--body JSON | --body-file FILE]\n"
               "  [--concurrency N] [--duration-s S] [--ramp-s S] [--grace-s S]\n"
               "  [--idle-timeout-s S] [--gap-limit-ms MS] [--min-events K] [--threads T]\n"
               "  [--rss-pid PID] [--label TEXT]\n",
               msg);
  std::exit(2);
}

std::string read_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    usage(("cannot read " + file).c_str());
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Options parse_options(int argc, char** argv) {
  Options o;
  o.body =
      R"({"model":"bench-model","stream":true,"messages":[{"role":"user","content":"Count."}]})";
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage(("missing value for " + std::string(a)).c_str());
      }
      return argv[++i];
    };
    if (a == "--host") {
      o.host = next();
    } else if (a == "--port") {
      o.port = next();
    } else if (a == "--path") {
      o.path = next();
    } else if (a == "--header") {
      o.headers.push_back(next());
    } else if (a == "--body") {
      o.body = next();
    } else if (a == "--body-file") {
      o.body = read_file(next());
    } else if (a == "--concurrency") {
      o.concurrency = std::atoi(next().c_str());
    } else if (a == "--duration-s") {
      o.duration_s = std::atof(next().c_str());
    } else if (a == "--ramp-s") {
      o.ramp_s = std::atof(next().c_str());
    } else if (a == "--grace-s") {
      o.grace_s = std::atof(next().c_str());
    } else if (a == "--idle-timeout-s") {
      o.idle_timeout_s = std::atof(next().c_str());
    } else if (a == "--gap-limit-ms") {
      o.gap_limit_ms = std::atof(next().c_str());
    } else if (a == "--min-events") {
      o.min_events = std::atoi(next().c_str());
    } else if (a == "--threads") {
      o.threads = std::max(1, std::atoi(next().c_str()));
    } else if (a == "--rss-pid") {
      o.rss_pid = std::atoi(next().c_str());
    } else if (a == "--label") {
      o.label = next();
    } else {
      usage(("unknown option " + std::string(a)).c_str());
    }
  }
  if (o.port.empty()) {
    usage("--port is required");
  }
  if (o.concurrency < 1) {
    usage("--concurrency must be >= 1");
  }
  o.threads = std::min(o.threads, o.concurrency);
  return o;
}

// /proc/PID/status field in kB, or -1.
long proc_status_kb(int pid, std::string_view field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, field.size(), field) == 0 && line.size() > field.size() &&
        line[field.size()] == ':') {
      return std::atol(line.c_str() + field.size() + 1);
    }
  }
  return -1;
}

// utime + stime of PID in seconds, or -1.
double proc_cpu_s(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = all.rfind(')');
  if (close == std::string::npos) {
    return -1;
  }
  std::istringstream fields(all.substr(close + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
  for (int n = 3; n <= 15 && (fields >> f); ++n) {
    if (n == 14) {
      utime = std::strtoull(f.c_str(), nullptr, 10);
    } else if (n == 15) {
      stime = std::strtoull(f.c_str(), nullptr, 10);
    }
  }
  return double(utime + stime) / double(sysconf(_SC_CLK_TCK));
}

double us_since(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

// Incremental decoder for one HTTP/1.1 response carrying an SSE body: status line and
// headers, then Content-Length, chunked or close-delimited framing, then SSE events
// (an event ends at a blank line; only events with a data field count).
class StreamResponse {
 public:
  enum class State { kHead, kBody, kDone, kError };

  // Consumes bytes; returns the number of complete SSE events they finished.
  int feed(const char* p, size_t n) {
    int events = 0;
    size_t i = 0;
    while (i < n && state_ != State::kDone && state_ != State::kError) {
      if (state_ == State::kHead) {
        i += feed_head(p + i, n - i);
      } else {
        i += feed_body(p + i, n - i, events);
      }
    }
    return events;
  }

  // Close-delimited bodies end at EOF.
  void on_eof() {
    if (state_ == State::kBody && framing_ == Framing::kClose) {
      state_ = State::kDone;
    } else if (state_ != State::kDone) {
      state_ = State::kError;
    }
  }

  State state() const { return state_; }
  int status() const { return status_; }
  bool keep_alive() const { return keep_alive_ && framing_ != Framing::kClose; }
  bool saw_done_marker() const { return done_marker_; }

 private:
  enum class Framing { kLength, kChunked, kClose };
  enum class Chunk { kSize, kSizeExt, kSizeLf, kData, kDataCr, kDataLf, kTrailer };

  size_t feed_head(const char* p, size_t n) {
    size_t used = 0;
    while (used < n) {
      char c = p[used++];
      head_.push_back(c);
      if (head_.size() > 64 * 1024) {
        state_ = State::kError;
        return used;
      }
      if (c == '\n' && head_.size() >= 4 && head_.compare(head_.size() - 4, 4, "\r\n\r\n") == 0) {
        parse_head();
        head_.clear();
        return used;
      }
    }
    return used;
  }

  static bool iequals_prefix(std::string_view line, std::string_view name) {
    if (line.size() < name.size()) {
      return false;
    }
    for (size_t k = 0; k < name.size(); ++k) {
      if (std::tolower(static_cast<unsigned char>(line[k])) != name[k]) {
        return false;
      }
    }
    return true;
  }

  static std::string lower_value(std::string_view line, size_t from) {
    std::string v;
    for (size_t k = from; k < line.size(); ++k) {
      char c = line[k];
      if (c != ' ' && c != '\t' && c != '\r') {
        v.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      }
    }
    return v;
  }

  void parse_head() {
    std::string_view h = head_;
    if (h.size() < 12 || h.compare(0, 5, "HTTP/") != 0) {
      state_ = State::kError;
      return;
    }
    status_ = std::atoi(head_.c_str() + 9);
    keep_alive_ = h.compare(5, 3, "1.1") == 0;
    framing_ = Framing::kClose;
    size_t pos = h.find("\r\n") + 2;
    while (pos < h.size()) {
      size_t end = h.find("\r\n", pos);
      std::string_view line = h.substr(pos, end - pos);
      pos = end + 2;
      if (iequals_prefix(line, "content-length:")) {
        framing_ = Framing::kLength;
        remaining_ = std::strtoull(std::string(line.substr(15)).c_str(), nullptr, 10);
      } else if (iequals_prefix(line, "transfer-encoding:")) {
        if (lower_value(line, 18).find("chunked") != std::string::npos) {
          framing_ = Framing::kChunked;
        }
      } else if (iequals_prefix(line, "connection:")) {
        std::string v = lower_value(line, 11);
        if (v.find("close") != std::string::npos) {
          keep_alive_ = false;
        } else if (v.find("keep-alive") != std::string::npos) {
          keep_alive_ = true;
        }
      }
    }
    state_ = State::kBody;
    if (framing_ == Framing::kLength && remaining_ == 0) {
      state_ = State::kDone;
    }
  }

  size_t feed_body(const char* p, size_t n, int& events) {
    if (framing_ == Framing::kLength) {
      size_t take = std::min<uint64_t>(n, remaining_);
      events += feed_sse(p, take);
      remaining_ -= take;
      if (remaining_ == 0) {
        state_ = State::kDone;
      }
      return take;
    }
    if (framing_ == Framing::kClose) {
      events += feed_sse(p, n);
      return n;
    }
    // Chunked (RFC 9112 section 7.1): size in hex, optional extensions, CRLF, data, CRLF;
    // a zero size ends the body after optional trailer lines and a blank line.
    size_t i = 0;
    while (i < n && state_ == State::kBody) {
      char c = p[i];
      switch (chunk_) {
        case Chunk::kSize:
          if (std::isxdigit(static_cast<unsigned char>(c))) {
            remaining_ = remaining_ * 16 + (std::isdigit(static_cast<unsigned char>(c))
                                                ? c - '0'
                                                : (std::tolower(c) - 'a' + 10));
            ++i;
          } else if (c == ';' || c == ' ' || c == '\t') {
            chunk_ = Chunk::kSizeExt;
            ++i;
          } else if (c == '\r') {
            chunk_ = Chunk::kSizeLf;
            ++i;
          } else {
            state_ = State::kError;
          }
          break;
        case Chunk::kSizeExt:
          if (c == '\r') {
            chunk_ = Chunk::kSizeLf;
          }
          ++i;
          break;
        case Chunk::kSizeLf:
          if (c != '\n') {
            state_ = State::kError;
            break;
          }
          ++i;
          if (remaining_ == 0) {
            chunk_ = Chunk::kTrailer;
            trailer_line_len_ = 0;
          } else {
            chunk_ = Chunk::kData;
          }
          break;
        case Chunk::kData: {
          size_t take = std::min<uint64_t>(n - i, remaining_);
          events += feed_sse(p + i, take);
          remaining_ -= take;
          i += take;
          if (remaining_ == 0) {
            chunk_ = Chunk::kDataCr;
          }
          break;
        }
        case Chunk::kDataCr:
          if (c != '\r') {
            state_ = State::kError;
            break;
          }
          chunk_ = Chunk::kDataLf;
          ++i;
          break;
        case Chunk::kDataLf:
          if (c != '\n') {
            state_ = State::kError;
            break;
          }
          chunk_ = Chunk::kSize;
          ++i;
          break;
        case Chunk::kTrailer:
          ++i;
          if (c == '\n') {
            if (trailer_line_len_ == 0) {
              state_ = State::kDone;
            }
            trailer_line_len_ = 0;
          } else if (c != '\r') {
            ++trailer_line_len_;
          }
          break;
      }
    }
    return i;
  }

  // SSE (WHATWG HTML, "event stream interpretation"): lines end in LF, CRLF or CR is not
  // produced by any gateway we test, so CR is dropped; a blank line dispatches the event.
  int feed_sse(const char* p, size_t n) {
    int events = 0;
    for (size_t k = 0; k < n; ++k) {
      char c = p[k];
      if (c == '\r') {
        continue;
      }
      if (c != '\n') {
        if (line_.size() < 16) {
          line_.push_back(c);
        }
        ++line_len_;
        continue;
      }
      if (line_len_ == 0) {
        if (event_has_data_) {
          ++events;
          event_has_data_ = false;
        }
      } else if (line_.compare(0, 5, "data:") == 0) {
        event_has_data_ = true;
        std::string_view v = std::string_view(line_).substr(5);
        if (!v.empty() && v.front() == ' ') {
          v.remove_prefix(1);
        }
        if (v == "[DONE]") {
          done_marker_ = true;
        }
      }
      line_.clear();
      line_len_ = 0;
    }
    return events;
  }

  State state_ = State::kHead;
  std::string head_;
  int status_ = 0;
  bool keep_alive_ = true;
  Framing framing_ = Framing::kClose;
  Chunk chunk_ = Chunk::kSize;
  uint64_t remaining_ = 0;
  int trailer_line_len_ = 0;
  std::string line_;
  size_t line_len_ = 0;
  bool event_has_data_ = false;
  bool done_marker_ = false;
};

struct Stats {
  uint64_t started = 0;
  uint64_t completed = 0;
  uint64_t stall_free = 0;
  uint64_t non_200 = 0;
  uint64_t too_few_events = 0;
  uint64_t connect_errors = 0;
  uint64_t io_errors = 0;
  uint64_t protocol_errors = 0;
  uint64_t timeouts = 0;
  uint64_t unfinished = 0;
  uint64_t events = 0;
  uint64_t ttft_over_1s = 0;
  std::vector<double> ttfb_us;
  std::vector<double> ttft_us;
  std::vector<double> max_gap_us;

  void merge(const Stats& o) {
    started += o.started;
    completed += o.completed;
    stall_free += o.stall_free;
    non_200 += o.non_200;
    too_few_events += o.too_few_events;
    connect_errors += o.connect_errors;
    io_errors += o.io_errors;
    protocol_errors += o.protocol_errors;
    timeouts += o.timeouts;
    unfinished += o.unfinished;
    events += o.events;
    ttft_over_1s += o.ttft_over_1s;
    ttfb_us.insert(ttfb_us.end(), o.ttfb_us.begin(), o.ttfb_us.end());
    ttft_us.insert(ttft_us.end(), o.ttft_us.begin(), o.ttft_us.end());
    max_gap_us.insert(max_gap_us.end(), o.max_gap_us.begin(), o.max_gap_us.end());
  }
};

// The watchdog reads these to close sockets of slots that went quiet for too long.
struct Slot {
  tcp::socket socket;
  Clock::time_point last_activity{};
  bool in_stream = false;
  bool timed_out = false;
  explicit Slot(asio::io_context& io) : socket(io) {}
};

struct Shared {
  Options opt;
  std::string request;
  tcp::endpoint endpoint;
  Clock::time_point t0;
  Clock::time_point stop_starting;  // no stream starts after this
  Clock::time_point hard_stop;      // everything is closed at this point
};

class Shard {
 public:
  Shard(const Shared& shared, int first_slot, int slots)
      : shared_(shared), first_slot_(first_slot) {
    slots_.reserve(slots);
    for (int i = 0; i < slots; ++i) {
      slots_.push_back(std::make_unique<Slot>(io_));
    }
  }

  void run() {
    for (size_t i = 0; i < slots_.size(); ++i) {
      asio::co_spawn(io_, run_slot(i), asio::detached);
    }
    asio::co_spawn(io_, watchdog(), asio::detached);
    io_.run();
  }

  Stats& stats() { return stats_; }

 private:
  asio::awaitable<void> run_slot(size_t index) {
    Slot& slot = *slots_[index];
    const Options& o = shared_.opt;
    int global_index = first_slot_ + static_cast<int>(index);
    auto offset = std::chrono::duration<double>(o.ramp_s * global_index / o.concurrency);
    asio::steady_timer timer(io_);
    timer.expires_at(shared_.t0 + std::chrono::duration_cast<Clock::duration>(offset));
    co_await timer.async_wait(kTuple);

    std::vector<char> buf(8192);
    while (Clock::now() < shared_.stop_starting) {
      if (!slot.socket.is_open()) {
        auto [ec] = co_await slot.socket.async_connect(shared_.endpoint, kTuple);
        if (ec) {
          ++stats_.connect_errors;
          boost::system::error_code ignored;
          slot.socket.close(ignored);
          timer.expires_after(std::chrono::milliseconds(100));
          co_await timer.async_wait(kTuple);
          continue;
        }
        boost::system::error_code opt_ec;
        slot.socket.set_option(tcp::no_delay(true), opt_ec);
      }
      ++stats_.started;
      slot.in_stream = true;
      slot.timed_out = false;
      const auto start = Clock::now();
      slot.last_activity = start;
      auto [wec, wn] =
          co_await asio::async_write(slot.socket, asio::buffer(shared_.request), kTuple);
      if (wec) {
        ++stats_.io_errors;
        close(slot);
        continue;
      }

      StreamResponse resp;
      bool have_first_byte = false;
      int events = 0;
      Clock::time_point last_event{};
      double max_gap = 0;
      double ttft = -1;
      bool io_failed = false;
      while (resp.state() == StreamResponse::State::kHead ||
             resp.state() == StreamResponse::State::kBody) {
        auto [rec, n] = co_await slot.socket.async_read_some(asio::buffer(buf), kTuple);
        const auto now = Clock::now();
        slot.last_activity = now;
        if (rec == asio::error::eof) {
          resp.on_eof();
          break;
        }
        if (rec) {
          io_failed = true;
          break;
        }
        if (!have_first_byte) {
          have_first_byte = true;
          stats_.ttfb_us.push_back(us_since(start, now));
        }
        int done = resp.feed(buf.data(), n);
        if (done > 0) {
          if (events == 0) {
            ttft = us_since(start, now);
          } else {
            max_gap = std::max(max_gap, us_since(last_event, now));
          }
          events += done;
          last_event = now;
        }
      }
      slot.in_stream = false;
      stats_.events += events;
      if (ttft >= 0) {
        stats_.ttft_us.push_back(ttft);
        if (ttft > 1e6) {
          ++stats_.ttft_over_1s;
        }
      }
      if (io_failed || resp.state() != StreamResponse::State::kDone) {
        if (slot.timed_out) {
          ++stats_.timeouts;
        } else if (io_failed && Clock::now() >= shared_.hard_stop) {
          ++stats_.unfinished;
        } else if (io_failed) {
          ++stats_.io_errors;
        } else {
          ++stats_.protocol_errors;
        }
        close(slot);
        continue;
      }
      if (resp.status() != 200) {
        ++stats_.non_200;
      } else if (events < o.min_events) {
        ++stats_.too_few_events;
      } else {
        ++stats_.completed;
        stats_.max_gap_us.push_back(max_gap);
        if (max_gap <= o.gap_limit_ms * 1000.0) {
          ++stats_.stall_free;
        }
      }
      if (!resp.keep_alive()) {
        close(slot);
      }
    }
    close(slot);
  }

  static void close(Slot& slot) {
    boost::system::error_code ignored;
    slot.socket.shutdown(tcp::socket::shutdown_both, ignored);
    slot.socket.close(ignored);
  }

  // Closes sockets idle for longer than --idle-timeout-s while a stream is in flight, and
  // every socket at the hard stop; ends when all slots are done.
  asio::awaitable<void> watchdog() {
    asio::steady_timer timer(io_);
    const auto idle = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(shared_.opt.idle_timeout_s));
    while (true) {
      timer.expires_after(std::chrono::milliseconds(100));
      co_await timer.async_wait(kTuple);
      const auto now = Clock::now();
      bool any_open = false;
      for (auto& s : slots_) {
        if (!s->socket.is_open()) {
          continue;
        }
        any_open = true;
        if (now >= shared_.hard_stop) {
          close(*s);
        } else if (s->in_stream && now - s->last_activity > idle) {
          s->timed_out = true;
          close(*s);
        }
      }
      if (now >= shared_.hard_stop || (!any_open && now >= shared_.stop_starting)) {
        co_return;
      }
    }
  }

  const Shared& shared_;
  int first_slot_;
  asio::io_context io_{1};
  std::vector<std::unique_ptr<Slot>> slots_;
  Stats stats_;
};

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) {
    return -1;
  }
  std::sort(v.begin(), v.end());
  size_t idx = static_cast<size_t>(p / 100.0 * double(v.size() - 1) + 0.5);
  return v[std::min(idx, v.size() - 1)];
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char tmp[8];
      std::snprintf(tmp, sizeof tmp, "\\u%04x", c);
      out += tmp;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Shared shared;
  shared.opt = parse_options(argc, argv);
  const Options& o = shared.opt;

  asio::io_context resolver_io;
  tcp::resolver resolver(resolver_io);
  boost::system::error_code ec;
  auto results = resolver.resolve(o.host, o.port, ec);
  if (ec || results.empty()) {
    std::fprintf(stderr, "cannot resolve %s:%s: %s\n", o.host.c_str(), o.port.c_str(),
                 ec.message().c_str());
    return 2;
  }
  shared.endpoint = results.begin()->endpoint();

  std::string req = "POST " + o.path + " HTTP/1.1\r\nHost: " + o.host + ":" + o.port +
                    "\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n"
                    "Content-Length: " +
                    std::to_string(o.body.size()) + "\r\n";
  for (const auto& h : o.headers) {
    req += h + "\r\n";
  }
  req += "\r\n" + o.body;
  shared.request = std::move(req);

  const long rss_idle_kb = o.rss_pid ? proc_status_kb(o.rss_pid, "VmRSS") : -1;
  const double cpu_start = o.rss_pid ? proc_cpu_s(o.rss_pid) : -1;

  auto secs = [](double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  shared.t0 = Clock::now() + std::chrono::milliseconds(50);
  shared.stop_starting = shared.t0 + secs(o.duration_s);
  shared.hard_stop = shared.stop_starting + secs(o.grace_s);

  std::vector<std::unique_ptr<Shard>> shards;
  int per = o.concurrency / o.threads;
  int extra = o.concurrency % o.threads;
  int first = 0;
  for (int t = 0; t < o.threads; ++t) {
    int n = per + (t < extra ? 1 : 0);
    shards.push_back(std::make_unique<Shard>(shared, first, n));
    first += n;
  }

  // The plateau runs from the end of the ramp (plus one stream's worth of settling) to the
  // point where new streams stop; RSS is sampled there.
  std::atomic<bool> sampling_done{false};
  long rss_plateau_max_kb = -1;
  long rss_plateau_samples = 0;
  double rss_plateau_sum_kb = 0;
  std::thread sampler;
  if (o.rss_pid) {
    sampler = std::thread([&] {
      const auto from = shared.t0 + secs(o.ramp_s + std::min(2.0, o.duration_s * 0.1));
      while (!sampling_done.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
        auto now = Clock::now();
        if (now >= from && now < shared.stop_starting) {
          long kb = proc_status_kb(o.rss_pid, "VmRSS");
          if (kb > 0) {
            rss_plateau_max_kb = std::max(rss_plateau_max_kb, kb);
            rss_plateau_sum_kb += double(kb);
            ++rss_plateau_samples;
          }
        }
      }
    });
  }

  std::vector<std::thread> workers;
  for (auto& s : shards) {
    workers.emplace_back([&s] { s->run(); });
  }
  for (auto& w : workers) {
    w.join();
  }
  const auto t_end = Clock::now();
  sampling_done = true;
  if (sampler.joinable()) {
    sampler.join();
  }
  const long hwm_kb = o.rss_pid ? proc_status_kb(o.rss_pid, "VmHWM") : -1;
  const double cpu_end = o.rss_pid ? proc_cpu_s(o.rss_pid) : -1;

  Stats total;
  for (auto& s : shards) {
    total.merge(s->stats());
  }
  const double wall_s = std::chrono::duration<double>(t_end - shared.t0).count();
  const double stall_free_pct =
      total.started ? 100.0 * double(total.stall_free) / double(total.started) : 0;
  const double rss_plateau_avg_kb =
      rss_plateau_samples ? rss_plateau_sum_kb / double(rss_plateau_samples) : -1;

  std::printf(
      "{\"label\":\"%s\",\"concurrency\":%d,\"duration_s\":%.1f,\"wall_s\":%.2f,"
      "\"streams_started\":%" PRIu64 ",\"streams_completed\":%" PRIu64
      ",\"streams_stall_free\":%" PRIu64
      ",\"stall_free_pct\":%.3f,"
      "\"non_200\":%" PRIu64 ",\"too_few_events\":%" PRIu64 ",\"connect_errors\":%" PRIu64
      ",\"io_errors\":%" PRIu64 ",\"protocol_errors\":%" PRIu64 ",\"timeouts\":%" PRIu64
      ",\"unfinished\":%" PRIu64 ",\"ttft_over_1s\":%" PRIu64 ",\"events\":%" PRIu64
      ",\"events_per_s\":%.0f,"
      "\"ttfb_p50_ms\":%.3f,\"ttft_p50_ms\":%.3f,\"ttft_p99_ms\":%.3f,"
      "\"max_gap_p50_ms\":%.3f,\"max_gap_p99_ms\":%.3f,\"max_gap_max_ms\":%.3f,"
      "\"rss_idle_kb\":%ld,\"rss_plateau_max_kb\":%ld,\"rss_plateau_avg_kb\":%.0f,"
      "\"hwm_kb\":%ld,\"cpu_s\":%.3f}\n",
      json_escape(o.label).c_str(), o.concurrency, o.duration_s, wall_s, total.started,
      total.completed, total.stall_free, stall_free_pct, total.non_200, total.too_few_events,
      total.connect_errors, total.io_errors, total.protocol_errors, total.timeouts,
      total.unfinished, total.ttft_over_1s, total.events, double(total.events) / wall_s,
      percentile(total.ttfb_us, 50) / 1000, percentile(total.ttft_us, 50) / 1000,
      percentile(total.ttft_us, 99) / 1000, percentile(total.max_gap_us, 50) / 1000,
      percentile(total.max_gap_us, 99) / 1000, percentile(total.max_gap_us, 100) / 1000,
      rss_idle_kb, rss_plateau_max_kb, rss_plateau_avg_kb, hwm_kb,
      (cpu_end >= 0 && cpu_start >= 0) ? cpu_end - cpu_start : -1.0);
  return 0;
}
