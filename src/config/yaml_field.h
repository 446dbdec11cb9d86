#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/interpolate.h"

// Strict, located access to a parsed YAML tree, used only inside src/config. Every
// accessor either returns a value of the expected type or throws ConfigError whose message
// is "<source>:<line>:<col>: <field path>: <problem>". The loader catches ConfigError at
// its boundary (load_from_string throws nothing).
namespace sluice::config {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What every field of one load shares. Outlives every YamlField made from it.
struct LoadContext {
  std::string source_name;
  EnvLookup getenv;
};

class YamlMap;

// One node of the document together with its location and its path for messages
// ("providers[0].pool.max_connections").
class YamlField {
 public:
  // `mark` is where messages point; for a null value that is the position of its key,
  // because yaml-cpp places empty values at the start of the next line.
  YamlField(YAML::Node node, YAML::Mark mark, std::string path, const LoadContext& context);

  static YamlField root(const YAML::Node& node, const LoadContext& context);

  const std::string& path() const { return path_; }
  // "<source>:<line>" (1-based), for the `source` fields of the config structs.
  std::string where() const;
  // 1-based line, for messages that refer back to another field.
  int line() const { return mark_.line + 1; }
  bool is_null() const { return node_.IsNull(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_map() const { return node_.IsMap(); }

  [[noreturn]] void fail(std::string_view problem) const;
  // Fails at this node's location but names another path (e.g. a missing child field).
  [[noreturn]] void fail_as(std::string_view path, std::string_view problem) const;
  std::string child_path(std::string_view name) const;

  // A scalar with ${VAR} interpolation applied. Messages never repeat the text, so this is
  // also the accessor for secrets.
  std::string text() const;
  // A scalar taken literally (no interpolation).
  std::string literal_text() const;
  // Interpolated scalars converted and range-checked (inclusive bounds).
  std::uint64_t unsigned_in(std::uint64_t min, std::uint64_t max) const;
  std::uint64_t size_in(std::uint64_t min, std::uint64_t max) const;
  Millis millis_in(std::uint64_t min, std::uint64_t max) const;
  bool boolean() const;

  // Elements of a sequence; a null value counts as an empty sequence.
  std::vector<YamlField> items() const;
  // A single scalar or a sequence (for fields like `alias: x` / `alias: [x, y]`).
  std::vector<YamlField> one_or_many() const;
  // A mapping whose keys must all be in `known`; unknown or repeated keys fail here, in
  // document order. A null value counts as an empty mapping.
  YamlMap map(std::initializer_list<std::string_view> known) const;
  YamlMap map(std::span<const std::string_view> known) const;
  // A mapping with free-form keys (e.g. header names): pairs of (key, value). Keys are
  // plain scalars, never interpolated; repeated keys fail.
  std::vector<std::pair<YamlField, YamlField>> entries() const;

 private:
  const YAML::Node& scalar_node(std::string_view expected) const;
  std::string type_name() const;
  YamlField child(const YAML::Node& key, const YAML::Node& value, std::string path) const;

  YAML::Node node_;
  YAML::Mark mark_;
  std::string path_;
  const LoadContext* context_;
};

// A validated mapping (see YamlField::map).
class YamlMap {
 public:
  YamlMap(YamlField self, std::vector<std::pair<std::string, YamlField>> fields)
      : self_(std::move(self)), fields_(std::move(fields)) {}

  const YamlField& self() const { return self_; }
  bool has(std::string_view name) const;
  // The field if present (null values included), else nullopt.
  std::optional<YamlField> get(std::string_view name) const;
  // The field, or fail at the mapping with "missing required field <name>".
  YamlField required(std::string_view name) const;

 private:
  YamlField self_;
  std::vector<std::pair<std::string, YamlField>> fields_;
};

}  // namespace sluice::config
