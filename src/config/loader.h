#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/yaml_field.h"

// What the top-level walk (config.cc) gives the section loaders it calls: the limits and small
// field readers several sections share, and LoadState, through which a section refers to what
// the sections before it declared. Internal to src/config; defined in config.cc.
namespace sluice::config {

inline constexpr std::uint64_t kMaxMillis = 86'400'000;  // one day
inline constexpr std::uint64_t kMaxU32 = 0xffffffffULL;
inline constexpr std::size_t kMinKeyLength = 16;
inline constexpr std::size_t kMaxNameLength = 256;

std::string to_lower(std::string_view text);
std::string in_quotes(std::string_view text);
std::string join(const std::vector<std::string>& parts, std::string_view separator = ", ");
// Lists at most a handful of candidates so a typo in a large config stays readable.
std::string known_list(const std::vector<std::string>& names);
// A decimal number in [min, max] ("0.25").
double ratio(const YamlField& field, double min, double max);
// host:port (scalars.h parse_listen_address), failing at `field`.
ListenAddress listen_address(const YamlField& field);

// A plaintext secret that must not outlive hashing.
class Wiped {
 public:
  explicit Wiped(std::string value) : value_(std::move(value)) {}
  ~Wiped();
  Wiped(const Wiped&) = delete;
  Wiped& operator=(const Wiped&) = delete;
  const std::string& get() const { return value_; }

 private:
  std::string value_;
};

// A requires_env variable that is unset (or set but empty).
struct UnmetEnv {
  std::string name;
  bool empty = false;
};

// "A is not set, B is empty" (verb " is ", provider notes) or "A not set, B empty" (verb " ",
// route notes).
std::string describe(const std::vector<UnmetEnv>& unmet, std::string_view verb);

// A provider as the file declares it, skipped or not: routes and limits may name either.
struct DeclaredProvider {
  std::string id;
  std::string where;
  std::vector<UnmetEnv> unmet;  // empty = active
  Timeouts timeout;             // the active provider's, what its routes' timeouts start from
  bool active() const { return unmet.empty(); }
};

// An alias as the file declares it, its route skipped or not.
struct DeclaredAlias {
  std::string path;  // "routes[2]"
  std::string where;
};

// What one load shares between sections besides the Config it builds: every provider and
// alias declared so far (skipped ones included, so a reference is checked the same way
// whatever the environment) and the notes for the operator, in the order they arose. The
// cross-reference checks below fail at the referring field with the message a user sees.
struct LoadState {
  std::vector<DeclaredProvider> providers;  // in file order
  std::map<std::string, DeclaredAlias, std::less<>> aliases;
  std::vector<std::string> alias_order;  // as written, for "known: ..." lists
  std::vector<std::string> notes;

  const DeclaredProvider* find_provider(std::string_view id) const;
  bool has_alias(std::string_view alias) const { return aliases.contains(alias); }

  // The provider `id` that `field` names; fails "unknown provider" listing the declared ones.
  const DeclaredProvider& resolve_provider(const YamlField& field, const std::string& id) const;
  // Declares the alias at `item` for the route at `route`; fails when another route has it.
  void declare_alias(const YamlField& item, const std::string& alias, const YamlField& route);
  // Fails at `item` unless some route (skipped ones included) declares `alias`.
  void require_alias(const YamlField& item, const std::string& alias) const;
};

}  // namespace sluice::config
