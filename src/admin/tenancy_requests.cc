#include "admin/tenancy_requests.h"

#include <limits>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "admin/json_fields.h"
#include "core/time_zone.h"

namespace sluice::admin {

namespace {

namespace json = boost::json;

constexpr std::size_t kMaxDescription = 1024;
constexpr std::size_t kMaxAliases = 256;

Result<const json::object*> as_object(const json::value& body, std::string_view what) {
  if (!body.is_object()) {
    return invalid_request(fmt::format("{} must be a JSON object", what));
  }
  return &body.as_object();
}

// The body as a JSON object; `storage` holds the parsed value.
Result<const json::object*> body_object(std::string_view body, json::value& storage) {
  boost::system::error_code ec;
  storage = json::parse(body, ec);
  if (ec) {
    return Error(ErrorKind::kBadRequest, 400, "the body is not JSON: " + ec.message())
        .with_code("invalid_json");
  }
  return as_object(storage, "the body");
}

Result<std::optional<tenancy::BudgetFields>> read_budget(const json::value& value) {
  if (value.is_null()) {
    return std::optional<tenancy::BudgetFields>();
  }
  auto object = as_object(value, "budget");
  if (!object) {
    return object.error();
  }
  JsonFields f(**object, "budget.");
  tenancy::BudgetFields b;
  if (auto amount = f.integer("amount_micros", 1)) {
    b.amount_micros = *amount;
  }
  if (auto period = f.string("period")) {
    b.period = store::parse_budget_period(*period);
    if (!b.period) {
      f.fail("period", "expected monthly or cumulative");
    }
  }
  if (auto mode = f.string("mode")) {
    b.mode = store::parse_budget_mode(*mode);
    if (!b.mode) {
      f.fail("mode", "expected hard or advisory");
    }
  }
  if (auto zone = f.string("time_zone")) {
    if (auto loaded = TimeZone::load(*zone); !loaded) {
      f.fail("time_zone", loaded.error().message());
    }
    b.time_zone = std::move(*zone);
  }
  if (auto starts = f.time("starts_at")) {
    b.starts_at_ms = *starts;
  }
  if (auto done = f.finish(); !done) {
    return done.error();
  }
  return std::optional<tenancy::BudgetFields>(std::move(b));
}

// The fields of a group object other than its name (and, on create, its keys).
Result<void> read_group_fields(JsonFields& f, tenancy::GroupFields& g) {
  g.description = f.string("description");
  if (g.description && g.description->size() > kMaxDescription) {
    f.fail("description", fmt::format("at most {} bytes", kMaxDescription));
  }
  if (const json::value* budget = f.get("budget")) {
    auto read = read_budget(*budget);
    if (!read) {
      return read.error();
    }
    g.budget = std::move(*read);
  }
  g.rpm = f.count("rpm");
  g.tpm = f.count("tpm");
  if (auto concurrency = f.count("concurrency", std::numeric_limits<std::uint32_t>::max())) {
    g.concurrency = static_cast<std::uint32_t>(*concurrency);
  }
  g.allowed_aliases = f.string_list("allowed_aliases", kMaxAliases);
  g.disabled = f.boolean("disabled");
  return {};
}

// The fields of a key object; `status` only on update (a new key is active).
void read_key_fields(JsonFields& f, tenancy::KeyFields& k, bool update) {
  k.name = f.string("name");
  if (update) {
    if (auto status = f.string("status")) {
      k.status = store::parse_key_status(*status);
      if (!k.status) {
        f.fail("status", "expected active, disabled or revoked");
      }
    }
  }
  k.expires_at_ms = f.time("expires_at");
  k.allowed_aliases = f.string_list("allowed_aliases", kMaxAliases);
  k.allocation_micros = f.integer("allocation_micros", 0);
  k.rpm = f.count("rpm");
  k.tpm = f.count("tpm");
}

// Reads `body`, a JSON object, into an Out through `fill(JsonFields&, Out&) -> Result<void>`;
// the fields `fill` did not read are refused after it.
template <class Out, class Fill>
Result<Out> read_object(std::string_view body, Fill&& fill) {
  json::value parsed;
  auto object = body_object(body, parsed);
  if (!object) {
    return object.error();
  }
  JsonFields f(**object, "");
  Out out;
  if (auto filled = fill(f, out); !filled) {
    return filled.error();
  }
  if (auto done = f.finish(); !done) {
    return done.error();
  }
  return out;
}

}  // namespace

Result<GroupRequest> read_group_create(std::string_view body) {
  return read_object<GroupRequest>(body, [](JsonFields& f, GroupRequest& out) -> Result<void> {
    out.name = f.string("name").value_or("");
    if (auto read = read_group_fields(f, out.fields); !read) {
      return read;
    }
    const json::value* keys = f.get("keys");
    if (keys == nullptr) {
      return {};
    }
    if (!keys->is_array()) {
      return invalid_request("keys: expected an array of key objects");
    }
    out.with_keys = true;
    for (std::size_t i = 0; i < keys->as_array().size(); ++i) {
      const std::string where = fmt::format("keys[{}]", i);
      auto key = as_object(keys->as_array()[i], where);
      if (!key) {
        return key.error();
      }
      JsonFields kf(**key, where + ".");
      read_key_fields(kf, out.keys.emplace_back(), false);
      if (auto done = kf.finish(); !done) {
        return done;
      }
    }
    return {};
  });
}

Result<tenancy::GroupFields> read_group_update(std::string_view body) {
  return read_object<tenancy::GroupFields>(
      body, [](JsonFields& f, tenancy::GroupFields& out) -> Result<void> {
        if (f.has("name")) {
          return invalid_request("name: a key group cannot be renamed (usage records name it)");
        }
        return read_group_fields(f, out);
      });
}

Result<KeyRequest> read_key_create(std::string_view body) {
  return read_object<KeyRequest>(body, [](JsonFields& f, KeyRequest& out) -> Result<void> {
    const json::value* group = f.get("group");
    if (group == nullptr || !group->is_string()) {
      return invalid_request("group: required, the name of a key group");
    }
    out.group = std::string(group->as_string());
    read_key_fields(f, out.fields, false);
    return {};
  });
}

Result<tenancy::KeyFields> read_key_update(std::string_view body) {
  return read_object<tenancy::KeyFields>(
      body, [](JsonFields& f, tenancy::KeyFields& out) -> Result<void> {
        if (f.has("group")) {
          return invalid_request("group: a key cannot move to another group");
        }
        read_key_fields(f, out, true);
        return {};
      });
}

}  // namespace sluice::admin
