#include "aws/instance_metadata.h"

#include <boost/json/value.hpp>

#include "aws/container_credentials.h"
#include "codec/json_read.h"

namespace sluice::aws {

std::optional<InstanceMetadata> instance_metadata(const EnvLookup& env) {
  std::string disabled = env("AWS_EC2_METADATA_DISABLED").value_or("");
  for (char& c : disabled) {
    c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  if (disabled == "true") {
    return std::nullopt;
  }
  std::string endpoint = env("AWS_EC2_METADATA_SERVICE_ENDPOINT").value_or("");
  while (endpoint.ends_with('/')) {
    endpoint.pop_back();
  }
  return InstanceMetadata{endpoint.empty() ? std::string("http://169.254.169.254") : endpoint};
}

std::string first_role(std::string_view listing) {
  const std::size_t end = listing.find_first_of("\r\n");
  std::string_view role = listing.substr(0, end);
  while (!role.empty() && (role.back() == ' ' || role.back() == '\t')) {
    role.remove_suffix(1);
  }
  return std::string(role);
}

Result<TemporaryCredentials> parse_instance_answer(int status, std::string_view body) {
  if (status >= 200 && status < 300) {
    boost::system::error_code ec;
    boost::json::value doc = codec::parse_json(body, ec, {}, 8);
    const boost::json::object* o = !ec ? doc.if_object() : nullptr;
    const boost::json::value* code = o != nullptr ? o->if_contains("Code") : nullptr;
    if (code != nullptr && code->is_string() && code->get_string() != "Success") {
      return Error(ErrorKind::kUpstreamStatus,
                   "the instance metadata service refused the role's "
                   "keys: " +
                       std::string(code->get_string()))
          .with_code(std::string(code->get_string()));
    }
  }
  return parse_container_answer(status, body);
}

}  // namespace sluice::aws
