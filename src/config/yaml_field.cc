#include "config/yaml_field.h"

#include <algorithm>
#include <limits>

#include "config/scalars.h"

namespace sluice::config {

namespace {

// Levenshtein distance, for "did you mean" hints on unknown fields.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string unknown_field_message(std::string_view name, std::span<const std::string_view> known) {
  std::string_view best;
  std::size_t best_distance = 3;
  for (std::string_view candidate : known) {
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  if (!best.empty()) {
    return "unknown field; did you mean \"" + std::string(best) + "\"?";
  }
  std::string out = "unknown field (expected one of: ";
  bool first = true;
  for (std::string_view candidate : known) {
    if (!first) {
      out += ", ";
    }
    first = false;
    out += candidate;
  }
  out += ")";
  return out;
}

}  // namespace

YamlField::YamlField(YAML::Node node, YAML::Mark mark, std::string path, const LoadContext& context)
    : node_(std::move(node)), mark_(mark), path_(std::move(path)), context_(&context) {}

YamlField YamlField::root(const YAML::Node& node, const LoadContext& context) {
  return YamlField(node, node.Mark(), "", context);
}

std::string YamlField::where() const {
  return context_->source_name + ":" + std::to_string(std::max(mark_.line, 0) + 1);
}

void YamlField::fail(std::string_view problem) const { fail_as(path_, problem); }

void YamlField::fail_as(std::string_view path, std::string_view problem) const {
  std::string message = context_->source_name;
  message += ":" + std::to_string(std::max(mark_.line, 0) + 1);
  message += ":" + std::to_string(std::max(mark_.column, 0) + 1);
  message += ": ";
  if (!path.empty()) {
    message.append(path);
    message += ": ";
  }
  message.append(problem);
  throw ConfigError(message);
}

std::string YamlField::child_path(std::string_view name) const {
  if (path_.empty()) {
    return std::string(name);
  }
  return path_ + "." + std::string(name);
}

std::string YamlField::type_name() const {
  switch (node_.Type()) {
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

const YAML::Node& YamlField::scalar_node(std::string_view expected) const {
  if (!node_.IsScalar()) {
    fail("expected " + std::string(expected) + ", got " + type_name());
  }
  return node_;
}

std::string YamlField::literal_text() const { return scalar_node("a string").Scalar(); }

std::string YamlField::text() const {
  auto value = interpolate(scalar_node("a string").Scalar(), context_->getenv);
  if (!value) {
    fail(value.error().message());
  }
  return std::move(*value);
}

namespace {

std::string range_problem(std::uint64_t min, std::uint64_t max, std::uint64_t got,
                          std::string_view unit) {
  std::string out;
  if (max == std::numeric_limits<std::uint64_t>::max()) {
    out = "must be at least " + std::to_string(min);
  } else if (min == 0) {
    out = "must be at most " + std::to_string(max);
  } else {
    out = "must be between " + std::to_string(min) + " and " + std::to_string(max);
  }
  out.append(unit);
  out += " (got " + std::to_string(got) + ")";
  return out;
}

}  // namespace

std::uint64_t YamlField::unsigned_in(std::uint64_t min, std::uint64_t max) const {
  scalar_node("an integer");
  auto value = parse_unsigned(text());
  if (!value) {
    fail(value.error().message());
  }
  if (*value < min || *value > max) {
    fail(range_problem(min, max, *value, ""));
  }
  return *value;
}

std::uint64_t YamlField::size_in(std::uint64_t min, std::uint64_t max) const {
  scalar_node("a size");
  auto value = parse_size(text());
  if (!value) {
    fail(value.error().message());
  }
  if (*value < min || *value > max) {
    fail(range_problem(min, max, *value, " bytes"));
  }
  return *value;
}

Millis YamlField::millis_in(std::uint64_t min, std::uint64_t max) const {
  return Millis(static_cast<Millis::rep>(unsigned_in(min, max)));
}

bool YamlField::boolean() const {
  scalar_node("true or false");
  auto value = parse_bool(text());
  if (!value) {
    fail(value.error().message());
  }
  return *value;
}

YamlField YamlField::child(const YAML::Node& key, const YAML::Node& value, std::string path) const {
  return YamlField(value, value.IsNull() ? key.Mark() : value.Mark(), std::move(path), *context_);
}

std::vector<YamlField> YamlField::items() const {
  std::vector<YamlField> out;
  if (node_.IsNull()) {
    return out;
  }
  if (!node_.IsSequence()) {
    fail("expected a list, got " + type_name());
  }
  std::size_t index = 0;
  for (const YAML::Node& item : node_) {
    const YAML::Mark mark = item.IsNull() ? mark_ : item.Mark();
    out.emplace_back(item, mark, path_ + "[" + std::to_string(index) + "]", *context_);
    ++index;
  }
  return out;
}

std::vector<YamlField> YamlField::one_or_many() const {
  if (node_.IsScalar()) {
    return {*this};
  }
  if (node_.IsNull()) {
    fail("expected a string or a list of strings, got null");
  }
  if (!node_.IsSequence()) {
    fail("expected a string or a list of strings, got " + type_name());
  }
  return items();
}

YamlMap YamlField::map(std::initializer_list<std::string_view> known) const {
  return map(std::span<const std::string_view>(known.begin(), known.size()));
}

YamlMap YamlField::map(std::span<const std::string_view> known) const {
  std::vector<std::pair<std::string, YamlField>> fields;
  if (node_.IsNull()) {
    return YamlMap(*this, std::move(fields));
  }
  if (!node_.IsMap()) {
    fail("expected a mapping, got " + type_name());
  }
  for (const auto& [key_node, value_node] : entries()) {
    const std::string name = key_node.literal_text();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      key_node.fail(unknown_field_message(name, known));
    }
    fields.emplace_back(name, value_node);
  }
  return YamlMap(*this, std::move(fields));
}

std::vector<std::pair<YamlField, YamlField>> YamlField::entries() const {
  std::vector<std::pair<YamlField, YamlField>> out;
  if (node_.IsNull()) {
    return out;
  }
  if (!node_.IsMap()) {
    fail("expected a mapping, got " + type_name());
  }
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    // Copies: yaml-cpp's operator-> returns a proxy that dies at the end of the statement.
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    if (!key.IsScalar()) {
      YamlField(key, key.Mark(), path_, *context_).fail("field names must be plain strings");
    }
    const std::string path = child_path(key.Scalar());
    for (const auto& [seen_key, seen_value] : out) {
      if (seen_key.node_.Scalar() == key.Scalar()) {
        YamlField(key, key.Mark(), path, *context_)
            .fail("duplicate field (first set on line " + std::to_string(seen_key.line()) + ")");
      }
    }
    out.emplace_back(YamlField(key, key.Mark(), path, *context_), child(key, value, path));
  }
  return out;
}

bool YamlMap::has(std::string_view name) const { return get(name).has_value(); }

std::optional<YamlField> YamlMap::get(std::string_view name) const {
  for (const auto& [field_name, field] : fields_) {
    if (field_name == name) {
      return field;
    }
  }
  return std::nullopt;
}

YamlField YamlMap::required(std::string_view name) const {
  if (auto field = get(name)) {
    return *field;
  }
  self_.fail_as(self_.child_path(name), "missing required field");
}

}  // namespace sluice::config
