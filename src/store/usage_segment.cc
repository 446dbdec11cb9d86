#include "store/usage_segment.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "store/usage_fields.h"

namespace sluice::store {
namespace {

template <class T>
constexpr char type_code() {
  if constexpr (std::is_same_v<T, std::string>) {
    return 's';
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return 'l';
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    return 'u';
  } else if constexpr (std::is_same_v<T, int>) {
    static_assert(sizeof(int) == 4);
    return 'i';
  } else if constexpr (std::is_same_v<T, bool>) {
    return 'b';
  } else {
    static_assert(std::is_same_v<T, std::vector<AttemptRecord>>, "a field type with no code");
    return 'a';
  }
}

struct LayoutWriter {
  std::string& out;
  template <class T>
  void operator()(std::string_view name, const T&) {
    if (!out.empty() && out.back() != '(') {
      out += ',';
    }
    out += name;
    out += ':';
    out += type_code<T>();
    if constexpr (std::is_same_v<T, std::vector<AttemptRecord>>) {
      out += '(';
      const AttemptRecord sample;
      visit_attempt_fields(sample, *this);
      out += ')';
    }
  }
};

// The names of a visitable struct's fields, in order.
struct NameCollector {
  std::vector<std::string_view>& names;
  template <class T>
  void operator()(std::string_view name, const T&) {
    names.push_back(name);
  }
};

}  // namespace

const std::string& usage_segment_layout() {
  static const std::string layout = [] {
    std::string out;
    const UsageRecord sample;
    visit_usage_fields(sample, LayoutWriter{out});
    return out;
  }();
  return layout;
}

// A layout: each stored field's type and where it goes (-1: nowhere).
struct SegmentLayout::Fields {
  struct Field {
    char type = 0;
    int target = -1;            // index in visit_usage_fields / visit_attempt_fields order
    std::vector<Field> nested;  // type 'a': the attempt's fields
  };
  std::vector<Field> record;
  std::size_t record_targets = 0;  // fields this build has
  std::size_t attempt_targets = 0;
  std::size_t attempt_fields = 0;  // fields an attempt has in this layout
};

namespace {

constexpr std::size_t kAttemptSlots = 48;  // SegmentEncoder: attempt fields' first slot

// Writes at `out`, which has room: ten bytes for any varint.
char* put_varint(char* out, std::uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v);
  return out;
}

constexpr std::size_t kMaxVarint = 10;

bool get_varint(std::string_view& in, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      return true;
    }
  }
  return false;
}

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}

std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// How many bytes `a` and `b` have in common from the front (forward) or from the back, up to
// `limit`; eight at a time while they can.
std::size_t common_prefix(const char* a, const char* b, std::size_t limit) {
  std::size_t n = 0;
  for (; n + 8 <= limit; n += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a + n, 8);
    std::memcpy(&y, b + n, 8);
    if (x != y) {
      break;
    }
  }
  while (n < limit && a[n] == b[n]) {
    ++n;
  }
  return n;
}

std::size_t common_suffix(const char* a_end, const char* b_end, std::size_t limit) {
  std::size_t n = 0;
  for (; n + 8 <= limit; n += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a_end - n - 8, 8);
    std::memcpy(&y, b_end - n - 8, 8);
    if (x != y) {
      break;
    }
  }
  while (n < limit &&
         a_end[-1 - static_cast<std::ptrdiff_t>(n)] == b_end[-1 - static_cast<std::ptrdiff_t>(n)]) {
    ++n;
  }
  return n;
}

// `value` as the prefix and suffix it shares with `previous` and the bytes between, at `out`
// (room for 3 * kMaxVarint + value.size() bytes).
char* put_text(char* out, std::string_view value, std::string_view previous) {
  const std::size_t limit = std::min(value.size(), previous.size());
  const std::size_t prefix = common_prefix(value.data(), previous.data(), limit);
  const std::size_t suffix =
      common_suffix(value.data() + value.size(), previous.data() + previous.size(), limit - prefix);
  const std::size_t middle = value.size() - prefix - suffix;
  out = put_varint(out, prefix);
  out = put_varint(out, suffix);
  out = put_varint(out, middle);
  std::memcpy(out, value.data() + prefix, middle);
  return out + middle;
}

// The most bytes a record's encoding can take.
struct Bound {
  std::size_t bytes = 0;
  void operator()(std::string_view, const std::string& v) { bytes += 3 * kMaxVarint + v.size(); }
  void operator()(std::string_view, const std::vector<AttemptRecord>& attempts) {
    bytes += kMaxVarint;
    for (const AttemptRecord& a : attempts) {
      visit_attempt_fields(a, *this);
    }
  }
  template <class T>
  void operator()(std::string_view, const T&) {
    bytes += kMaxVarint;
  }
};

struct Encoder {
  char*& out;
  std::array<std::string_view, SegmentEncoder::kSlots>& previous;
  std::size_t slot;  // of the next field

  void operator()(std::string_view name, const std::string& v) {
    std::string_view& before = previous[slot++];
    // The request id whole (no prefix or suffix shared): find_usage searches the bytes for it.
    out = put_text(out, v, name == "request_id" ? std::string_view() : before);
    before = v;
  }
  void operator()(std::string_view, const std::vector<AttemptRecord>& attempts) {
    ++slot;
    out = put_varint(out, attempts.size());
    for (const AttemptRecord& a : attempts) {
      visit_attempt_fields(a, Encoder{out, previous, kAttemptSlots});
    }
  }
  void operator()(std::string_view, const std::uint64_t& v) {
    ++slot;
    out = put_varint(out, v);
  }
  void operator()(std::string_view, const bool& v) {
    ++slot;
    *out++ = static_cast<char>(v ? 1 : 0);
  }
  template <class T>
  void operator()(std::string_view, const T& v) {
    static_assert(std::is_same_v<T, std::int64_t> || std::is_same_v<T, int>);
    ++slot;
    out = put_varint(out, zigzag(v));
  }
};

// The names of the record's fields and of an attempt's, in visiting order.
struct FieldNames {
  std::vector<std::string_view> record;
  std::vector<std::string_view> attempt;
};
const FieldNames& field_names() {
  static const FieldNames names = [] {
    FieldNames out;
    const UsageRecord record;
    visit_usage_fields(record, NameCollector{out.record});
    const AttemptRecord attempt;
    visit_attempt_fields(attempt, NameCollector{out.attempt});
    return out;
  }();
  return names;
}

}  // namespace

std::string segment_request_id_bytes(std::string_view request_id) {
  std::string out(3 * kMaxVarint + request_id.size(), '\0');
  out.resize(static_cast<std::size_t>(put_text(out.data(), request_id, {}) - out.data()));
  return out;
}

void SegmentEncoder::start(std::string& body) {
  body.clear();
  previous_.fill(std::string_view());
}

void SegmentEncoder::append(std::string& body, const UsageRecord& record) {
  static const bool fits = field_names().record.size() <= kAttemptSlots &&
                           kAttemptSlots + field_names().attempt.size() <= kSlots;
  if (!fits) {
    std::abort();  // a field added beyond the slots: raise kAttemptSlots / kSlots
  }
  Bound bound;
  visit_usage_fields(record, bound);
  const std::size_t at = body.size();
  body.resize(at + bound.bytes);
  char* out = body.data() + at;
  visit_usage_fields(record, Encoder{out, previous_, 0});
  body.resize(static_cast<std::size_t>(out - body.data()));
}

namespace {

using Field = SegmentLayout::Fields::Field;

// One stored value on its way to the field of the same name.
struct Slot {
  bool set = false;
  char type = 0;
  std::string_view text;
  std::int64_t number = 0;
  std::vector<AttemptRecord> attempts;
};

// Assigns the slots to a struct's fields, visiting them in order. A slot whose type does not
// fit the field (a field whose type changed) leaves the field at its default.
struct Assigner {
  std::vector<Slot>& slots;
  std::size_t index = 0;

  template <class T>
  void operator()(std::string_view, T& field) {
    Slot& slot = slots[index++];
    if (!slot.set) {
      return;
    }
    if constexpr (std::is_same_v<T, std::string>) {
      if (slot.type == 's') {
        field.assign(slot.text.data(), slot.text.size());
      }
    } else if constexpr (std::is_same_v<T, std::vector<AttemptRecord>>) {
      if (slot.type == 'a') {
        field = std::move(slot.attempts);
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      if (slot.type != 's' && slot.type != 'a') {
        field = slot.number != 0;
      }
    } else {
      if (slot.type != 's' && slot.type != 'a') {
        field = static_cast<T>(slot.number);
      }
    }
  }
};

// Decodes fields in layout order; string state in `previous` from `first_state` on.
struct FieldDecoder {
  std::string_view& in;
  std::vector<std::string>& previous;
  std::size_t attempt_state;  // previous[] index of an attempt's first field
  std::vector<Slot>& nested;  // an attempt's slots
  std::string& scratch;       // where a string is put together (its buffer kept)

  bool fields(const std::vector<Field>& list, std::size_t first_state, std::vector<Slot>& slots) {
    Slot skipped;
    for (std::size_t k = 0; k < list.size(); ++k) {
      const Field& f = list[k];
      Slot& slot = f.target >= 0 ? slots[static_cast<std::size_t>(f.target)] : skipped;
      if (!value(f, previous[first_state + k], slot)) {
        return false;
      }
      slot.set = f.target >= 0;
    }
    return true;
  }

  bool value(const Field& f, std::string& before, Slot& slot) {
    slot.type = f.type;
    std::uint64_t v = 0;
    switch (f.type) {
      case 's': {
        std::uint64_t prefix = 0, suffix = 0, middle = 0;
        if (!get_varint(in, prefix) || !get_varint(in, suffix) || !get_varint(in, middle) ||
            prefix > before.size() || suffix > before.size() - prefix || middle > in.size()) {
          return false;
        }
        scratch.assign(before, 0, prefix);
        scratch.append(in.data(), middle);
        scratch.append(before, before.size() - suffix, suffix);
        in.remove_prefix(middle);
        before.swap(scratch);
        slot.text = before;
        return true;
      }
      case 'l':
      case 'i':
        if (!get_varint(in, v)) {
          return false;
        }
        slot.number = unzigzag(v);
        return true;
      case 'u':
        if (!get_varint(in, v)) {
          return false;
        }
        slot.number = static_cast<std::int64_t>(v);
        return true;
      case 'b':
        if (in.empty()) {
          return false;
        }
        slot.number = in.front() != 0 ? 1 : 0;
        in.remove_prefix(1);
        return true;
      case 'a': {
        // Each attempt takes at least a byte: a count beyond what is left is a torn body.
        if (!get_varint(in, v) || v > in.size()) {
          return false;
        }
        slot.attempts.clear();
        for (std::uint64_t i = 0; i < v; ++i) {
          for (Slot& s : nested) {
            s.set = false;
          }
          if (!fields(f.nested, attempt_state, nested)) {
            return false;
          }
          visit_attempt_fields(slot.attempts.emplace_back(), Assigner{nested});
        }
        return true;
      }
    }
    return false;
  }
};

// Parses "name:t,name:a(name:t,...),..." up to the end or a ')'.
Result<std::vector<SegmentLayout::Fields::Field>> parse_fields(
    std::string_view& text, const std::vector<std::string_view>& names,
    const std::vector<std::string_view>* attempt_names) {
  std::vector<SegmentLayout::Fields::Field> fields;
  while (!text.empty() && text.front() != ')') {
    if (!fields.empty()) {
      if (text.front() != ',') {
        return Error(ErrorKind::kInternal, "segment layout: expected ','");
      }
      text.remove_prefix(1);
    }
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 >= text.size()) {
      return Error(ErrorKind::kInternal, "segment layout: expected name:type");
    }
    SegmentLayout::Fields::Field f;
    const std::string_view name = text.substr(0, colon);
    f.type = text[colon + 1];
    text.remove_prefix(colon + 2);
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) {
        f.target = static_cast<int>(i);
      }
    }
    if (f.type == 'a') {
      if (attempt_names == nullptr || text.empty() || text.front() != '(') {
        return Error(ErrorKind::kInternal, "segment layout: attempts without their fields");
      }
      text.remove_prefix(1);
      auto nested = parse_fields(text, *attempt_names, nullptr);
      if (!nested) {
        return nested.error();
      }
      if (text.empty() || text.front() != ')') {
        return Error(ErrorKind::kInternal, "segment layout: expected ')'");
      }
      text.remove_prefix(1);
      f.nested = std::move(*nested);
    } else if (std::string_view("sluib").find(f.type) == std::string_view::npos) {
      return Error(ErrorKind::kInternal,
                   fmt::format("segment layout: field {} has type '{}', which this build cannot "
                               "read (written by a newer Sluice?)",
                               name, f.type));
    }
    fields.push_back(std::move(f));
  }
  return fields;
}

}  // namespace

SegmentLayout::SegmentLayout(std::unique_ptr<Fields> fields) : fields_(std::move(fields)) {}
SegmentLayout::SegmentLayout(SegmentLayout&&) noexcept = default;
SegmentLayout& SegmentLayout::operator=(SegmentLayout&&) noexcept = default;
SegmentLayout::~SegmentLayout() = default;

Result<SegmentLayout> SegmentLayout::parse(std::string_view text) {
  const FieldNames& names = field_names();
  std::string_view rest = text;
  auto fields = parse_fields(rest, names.record, &names.attempt);
  if (!fields) {
    return fields.error();
  }
  if (!rest.empty() || fields->empty()) {
    return Error(ErrorKind::kInternal, "segment layout: unexpected text at the end");
  }
  auto parsed = std::make_unique<Fields>();
  for (const Field& f : *fields) {
    if (f.type == 'a') {
      if (parsed->attempt_fields != 0 && parsed->attempt_fields != f.nested.size()) {
        return Error(ErrorKind::kInternal, "segment layout: two attempt lists");
      }
      parsed->attempt_fields = f.nested.size();
    }
  }
  parsed->record = std::move(*fields);
  parsed->record_targets = names.record.size();
  parsed->attempt_targets = names.attempt.size();
  return SegmentLayout(std::move(parsed));
}

// What a reader reuses from record to record.
struct SegmentReader::Scratch {
  std::vector<Slot> slots;
  std::vector<Slot> nested;
  std::string text;
};

SegmentReader::SegmentReader(const SegmentLayout& layout, std::string_view body)
    : fields_(layout.fields()),
      body_(body),
      previous_(fields_.record.size() + fields_.attempt_fields),
      scratch_(std::make_unique<Scratch>()) {
  scratch_->slots.resize(fields_.record_targets);
  scratch_->nested.resize(fields_.attempt_targets);
}

SegmentReader::~SegmentReader() = default;

bool SegmentReader::next(UsageRecord& record) {
  for (Slot& slot : scratch_->slots) {
    slot.set = false;
  }
  FieldDecoder decoder{body_, previous_, fields_.record.size(), scratch_->nested, scratch_->text};
  if (!decoder.fields(fields_.record, 0, scratch_->slots)) {
    body_ = {};
    return false;
  }
  visit_usage_fields(record, Assigner{scratch_->slots});
  return true;
}

RecordSequence split_record_id(std::string_view id) {
  constexpr std::size_t kMaxDigits = 18;  // fits in int64
  std::size_t start = id.size();
  while (start > 0 && id.size() - start < kMaxDigits && id[start - 1] >= '0' &&
         id[start - 1] <= '9') {
    --start;
  }
  if (start == id.size()) {
    return {id, -1};
  }
  while (start + 1 < id.size() && id[start] == '0') {
    ++start;  // "007": the zeros stay in the prefix, so the id is prefix + "7"
  }
  std::int64_t sequence = 0;
  for (std::size_t i = start; i < id.size(); ++i) {
    sequence = sequence * 10 + (id[i] - '0');
  }
  return {id.substr(0, start), sequence};
}

}  // namespace sluice::store
