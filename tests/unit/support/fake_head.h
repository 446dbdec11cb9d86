#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codec/request_head.h"

namespace sluice::test {

// A caller's request head over a list of fields, for tests of what codecs and filters read
// from it. Names compare case-insensitively, as RequestHead promises.
class FakeHead final : public codec::RequestHead {
 public:
  using Fields = std::vector<std::pair<std::string, std::string>>;

  explicit FakeHead(std::string target, Fields headers = {}, std::string method = "POST")
      : method_(std::move(method)), target_(std::move(target)), headers_(std::move(headers)) {}

  std::string_view method() const override { return method_; }
  std::string_view target() const override { return target_; }
  std::string_view header(std::string_view name) const override {
    for (const auto& [n, v] : headers_) {
      if (same_name(n, name)) {
        return v;
      }
    }
    return {};
  }
  bool has_header(std::string_view name) const override {
    for (const auto& [n, v] : headers_) {
      if (same_name(n, name)) {
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
  static bool same_name(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      const auto lower = [](char c) {
        return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
      };
      if (lower(a[i]) != lower(b[i])) {
        return false;
      }
    }
    return true;
  }

  std::string method_;
  std::string target_;
  Fields headers_;
};

}  // namespace sluice::test
