#include "admin/admin_call.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <utility>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "admin/admin_client.h"

namespace sluice::admin {
namespace {

namespace json = boost::json;

constexpr std::chrono::milliseconds kTimeout{10000};

std::string text(const json::value* v) {
  if (v == nullptr) {
    return "-";
  }
  return v->is_string() ? std::string(v->as_string()) : json::serialize(*v);
}

}  // namespace

std::string default_admin_url() {
  const char* url = std::getenv("SLUICE_ADMIN_URL");
  return url != nullptr && *url != '\0' ? url : "http://127.0.0.1:8081";
}

int run_admin_call(const AdminCall& call,
                   const std::function<std::string(const json::value&)>& render) {
  const char* key = std::getenv("SLUICE_ADMIN_KEY");
  if (key == nullptr || *key == '\0') {
    std::cerr << "sluice " << call.command << ": set SLUICE_ADMIN_KEY to the admin key\n";
    return 2;
  }
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Authorization", std::string("Bearer ") + key}};
  if (!call.idempotency_key.empty()) {
    headers.emplace_back("Idempotency-Key", call.idempotency_key);
  }
  auto answer =
      admin_request(call.admin_url, call.method, call.target, call.body, headers, kTimeout);
  if (!answer) {
    std::cerr << "sluice " << call.command << ": " << answer.error().message() << "\n";
    return 1;
  }
  boost::system::error_code ec;
  const json::value parsed = json::parse(answer->body, ec);
  if (answer->status >= 300) {
    const json::object* error = nullptr;
    if (!ec && parsed.is_object()) {
      if (const json::value* e = parsed.as_object().if_contains("error")) {
        error = e->if_object();
      }
    }
    if (error != nullptr) {
      std::cerr << fmt::format("sluice {}: {} ({}, HTTP {})\n", call.command,
                               text(error->if_contains("message")),
                               text(error->if_contains("code")), answer->status);
    } else {
      std::cerr << fmt::format("sluice {}: HTTP {}\n", call.command, answer->status);
    }
    return 1;
  }
  if (ec) {
    std::cerr << "sluice " << call.command << ": the answer is not JSON\n";
    return 1;
  }
  std::cout << (call.json_output ? json::serialize(parsed) + "\n" : render(parsed));
  return 0;
}

}  // namespace sluice::admin
