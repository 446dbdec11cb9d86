#include "request_body.h"

#include <boost/json/parse.hpp>

namespace sluice::mock {
namespace json = boost::json;

Error bad_request(std::string message, std::string param) {
  Error e(ErrorKind::kBadRequest, std::move(message));
  if (!param.empty()) {
    std::move(e).with_param(std::move(param));
  }
  return e;
}

Result<json::value> parse_request_object(std::string_view body, json::monotonic_resource& mr,
                                         std::size_t max_depth) {
  json::parse_options opts;
  opts.max_depth = max_depth;
  boost::system::error_code ec;
  json::value root = json::parse(json::string_view(body.data(), body.size()), ec, &mr, opts);
  if (ec) {
    return bad_request("We could not parse the JSON body of your request. (mock: " + ec.message() +
                       ")");
  }
  if (!root.is_object()) {
    return bad_request("The request body must be a JSON object.");
  }
  return root;
}

Result<std::string> read_model(const json::object& obj) {
  const auto* model = obj.if_contains("model");
  if (!model) {
    return bad_request("you must provide a model parameter", "model");
  }
  if (!model->is_string()) {
    return bad_request("Invalid type for 'model': expected a string.", "model");
  }
  return std::string(model->get_string());
}

}  // namespace sluice::mock
