#include "guardrails/external.h"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "codec/json_writer.h"

namespace sluice::guardrails {

using Format = config::ExternalChecker::Format;

std::string checker_request(const config::ExternalChecker& checker, std::string_view text,
                            Direction direction) {
  std::string body;
  codec::JsonWriter w(body);
  switch (checker.format) {
    case Format::kPresidio:
      w.ch('{').key("text").string(text).next_key("language").string(checker.language).ch('}');
      break;
    case Format::kModeration:
      w.ch('{').key("input").string(text);
      if (!checker.model.empty()) w.next_key("model").string(checker.model);
      w.ch('}');
      break;
    case Format::kGeneric:
      w.ch('{')
          .key("text")
          .string(text)
          .next_key("direction")
          .string(direction == Direction::kInput ? "input" : "output")
          .ch('}');
      break;
  }
  return body;
}

namespace {

CheckerVerdict presidio(const boost::json::value& v, double min_score) {
  CheckerVerdict out;
  const boost::json::array* found = v.if_array();
  if (found == nullptr) return out;
  out.kind = CheckerVerdict::Kind::kClean;
  for (const boost::json::value& e : *found) {
    const boost::json::object* o = e.if_object();
    const boost::json::value* score = o != nullptr ? o->if_contains("score") : nullptr;
    if (score == nullptr || !score->is_number()) {
      out.kind = CheckerVerdict::Kind::kUnusable;
      return out;
    }
    if (score->to_number<double>() >= min_score) ++out.count;
  }
  if (out.count > 0) out.kind = CheckerVerdict::Kind::kFound;
  return out;
}

CheckerVerdict moderation(const boost::json::value& v) {
  CheckerVerdict out;
  const boost::json::object* o = v.if_object();
  const boost::json::value* results = o != nullptr ? o->if_contains("results") : nullptr;
  if (results == nullptr || !results->is_array() || results->as_array().empty()) return out;
  bool flagged = false;
  for (const boost::json::value& r : results->as_array()) {
    const boost::json::object* ro = r.if_object();
    const boost::json::value* f = ro != nullptr ? ro->if_contains("flagged") : nullptr;
    if (f == nullptr || !f->is_bool()) return out;
    flagged = flagged || f->as_bool();
  }
  out.kind = flagged ? CheckerVerdict::Kind::kFound : CheckerVerdict::Kind::kClean;
  out.count = flagged ? 1 : 0;
  return out;
}

CheckerVerdict generic(const boost::json::value& v) {
  CheckerVerdict out;
  const boost::json::object* o = v.if_object();
  const boost::json::value* verdict = o != nullptr ? o->if_contains("verdict") : nullptr;
  if (verdict == nullptr || !verdict->is_string()) return out;
  const std::string_view said = verdict->as_string();
  if (said == "allow") {
    out.kind = CheckerVerdict::Kind::kClean;
  } else if (said == "flag" || said == "block") {
    out.kind = CheckerVerdict::Kind::kFound;
    out.block = said == "block";
    out.count = 1;
  }
  return out;
}

}  // namespace

CheckerVerdict read_checker_answer(const config::ExternalChecker& checker, std::string_view body) {
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(body, ec);
  if (ec) return CheckerVerdict{};
  switch (checker.format) {
    case Format::kPresidio:
      return presidio(v, checker.min_score);
    case Format::kModeration:
      return moderation(v);
    case Format::kGeneric:
      return generic(v);
  }
  return CheckerVerdict{};
}

}  // namespace sluice::guardrails
