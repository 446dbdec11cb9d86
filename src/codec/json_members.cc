#include "codec/json_members.h"

#include <charconv>

#include "codec/json_object_reader.h"

namespace sluice::codec {

namespace {

struct Found {
  std::vector<JsonObjectReader::Member> members;  // offsets into the whole body
  bool object = false;                            // the enclosing object exists
  std::size_t open = 0;                           // offset of its '{'
};

// The members named `name` of the object at `offset` in `body`.
Found members_named(std::string_view body, std::size_t offset, std::size_t end,
                    std::string_view name) {
  Found found;
  JsonObjectReader in(body.substr(offset, end - offset));
  in.ws();
  found.open = offset + in.at();
  found.object = in.members([&](const JsonObjectReader::Member& m) {
    if (m.ascii && m.key == name) {
      JsonObjectReader::Member at = m;
      at.key_begin += offset;
      at.key_end += offset;
      at.value_begin += offset;
      at.value_end += offset;
      found.members.push_back(at);
    }
  });
  return found;
}

bool is_object_at(std::string_view body, std::size_t begin) {
  return begin < body.size() && body[begin] == '{';
}

// The objects `path` lives in: the body itself, or the value of each `path.key` that is an
// object. `missing_outer` is set when the body has no `path.key` at all.
std::vector<ValueRange> containers(std::string_view body, MemberPath path, bool& missing_outer,
                                   bool& not_object) {
  std::vector<ValueRange> out;
  missing_outer = false;
  not_object = false;
  if (path.inner.empty()) {
    out.push_back({0, body.size()});
    return out;
  }
  const Found outer = members_named(body, 0, body.size(), path.key);
  if (!outer.object) {
    not_object = true;
    return out;
  }
  missing_outer = outer.members.empty();
  for (const JsonObjectReader::Member& m : outer.members) {
    if (is_object_at(body, m.value_begin)) {
      out.push_back({m.value_begin, m.value_end});
    } else if (body.substr(m.value_begin, m.value_end - m.value_begin) != "null") {
      not_object = true;
    }
  }
  missing_outer = missing_outer || out.empty();
  return out;
}

std::string_view leaf(MemberPath path) { return path.inner.empty() ? path.key : path.inner; }

// `"name":value`
void append_member(std::string& out, std::string_view name, std::string_view json) {
  out.push_back('"');
  out.append(name);
  out.append("\":");
  out.append(json);
}

}  // namespace

std::vector<ValueRange> find_member(std::string_view body, MemberPath path) {
  std::vector<ValueRange> out;
  bool missing_outer = false;
  bool not_object = false;
  for (const ValueRange& c : containers(body, path, missing_outer, not_object)) {
    for (const JsonObjectReader::Member& m :
         members_named(body, c.begin, c.end, leaf(path)).members) {
      out.push_back({m.value_begin, m.value_end});
    }
  }
  return out;
}

UnsignedMember read_unsigned_member(std::string_view body, MemberPath path) {
  UnsignedMember out;
  const std::vector<ValueRange> values = find_member(body, path);
  if (values.empty()) {
    return out;
  }
  const std::string_view text =
      body.substr(values.back().begin, values.back().end - values.back().begin);
  if (text == "null") {
    return out;
  }
  out.present = true;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    out.valid = false;  // a fraction, an exponent, a sign, a string, too large
    return out;
  }
  out.value = value;
  return out;
}

std::optional<std::string> set_member(std::string_view body, MemberPath path,
                                      std::string_view json) {
  bool missing_outer = false;
  bool not_object = false;
  const std::vector<ValueRange> objects = containers(body, path, missing_outer, not_object);
  if (not_object) {
    return std::nullopt;
  }
  std::vector<ValueRange> replace;
  std::optional<std::size_t> insert_after;  // the '{' a new member goes after
  std::string inserted;
  if (missing_outer) {
    const Found top = members_named(body, 0, body.size(), path.key);
    // An outer member that is null is replaced by an object holding the member.
    for (const JsonObjectReader::Member& m : top.members) {
      replace.push_back({m.value_begin, m.value_end});
    }
    std::string object = "{";
    append_member(object, path.inner, json);
    object.push_back('}');
    if (replace.empty()) {
      insert_after = top.open;
      append_member(inserted, path.key, object);
    } else {
      inserted = std::move(object);
    }
  } else {
    for (const ValueRange& c : objects) {
      const Found in = members_named(body, c.begin, c.end, leaf(path));
      if (!in.object) {
        return std::nullopt;
      }
      for (const JsonObjectReader::Member& m : in.members) {
        replace.push_back({m.value_begin, m.value_end});
      }
      if (in.members.empty() && !insert_after) {
        insert_after = in.open;
        append_member(inserted, leaf(path), json);
      }
    }
    if (!replace.empty()) {
      insert_after.reset();  // present in one of the objects: rewrite there only
    }
  }
  std::string out;
  out.reserve(body.size() + inserted.size() + json.size() * replace.size());
  std::size_t at = 0;
  if (insert_after) {
    const std::size_t open = *insert_after + 1;
    out.append(body.substr(0, open));
    out.append(inserted);
    JsonObjectReader rest(body.substr(open));
    const bool empty = rest.eat('}');
    if (!empty) {
      out.push_back(',');
    }
    at = open;
  }
  for (const ValueRange& r : replace) {
    out.append(body.substr(at, r.begin - at));
    out.append(missing_outer ? std::string_view(inserted) : json);
    at = r.end;
  }
  out.append(body.substr(at));
  return out;
}

std::string rename_member(std::string_view body, MemberPath path, std::string_view new_name) {
  std::vector<ValueRange> keys;
  bool missing_outer = false;
  bool not_object = false;
  for (const ValueRange& c : containers(body, path, missing_outer, not_object)) {
    for (const JsonObjectReader::Member& m :
         members_named(body, c.begin, c.end, leaf(path)).members) {
      keys.push_back({m.key_begin, m.key_end});
    }
  }
  std::string out;
  out.reserve(body.size() + keys.size() * new_name.size());
  std::size_t at = 0;
  for (const ValueRange& k : keys) {
    out.append(body.substr(at, k.begin - at));
    out.push_back('"');
    out.append(new_name);
    out.push_back('"');
    at = k.end;
  }
  out.append(body.substr(at));
  return out;
}

std::string remove_member(std::string_view body, std::string_view key) {
  if (members_named(body, 0, body.size(), key).members.empty()) {
    return std::string(body);
  }
  // The object written again from the bytes of the members it keeps: only the whitespace
  // between members is lost.
  std::string out;
  out.reserve(body.size());
  JsonObjectReader in(body);
  in.ws();
  out.append(body.substr(0, in.at()));
  out.push_back('{');
  bool first = true;
  std::size_t close = body.size();
  in.members([&](const JsonObjectReader::Member& m) {
    close = m.value_end;
    if (m.ascii && m.key == key) {
      return;
    }
    if (!first) {
      out.push_back(',');
    }
    first = false;
    out.append(body.substr(m.key_begin, m.value_end - m.key_begin));
  });
  const std::size_t brace = body.find('}', close);
  out.append(brace == std::string_view::npos ? std::string_view("}") : body.substr(brace));
  return out;
}

}  // namespace sluice::codec
