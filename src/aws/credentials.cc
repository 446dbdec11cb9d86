#include "aws/credentials.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "aws/container_credentials.h"
#include "aws/instance_metadata.h"

namespace sluice::aws {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

Error missing_half(std::string_view where) {
  return Error(ErrorKind::kBadRequest,
               "AWS credentials in " + std::string(where) +
                   " have an access key id without a secret access key, or the reverse");
}

// A complete set, nothing, or an error for half of one.
Result<std::optional<Credentials>> complete(std::string id, std::string secret, std::string token,
                                            std::string_view where) {
  if (id.empty() && secret.empty()) {
    return std::optional<Credentials>();
  }
  if (id.empty() || secret.empty()) {
    return missing_half(where);
  }
  return std::optional<Credentials>(
      Credentials{std::move(id), std::move(secret), std::move(token)});
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string file_of(const EnvLookup& env, std::string_view variable, std::string_view home_path) {
  if (std::optional<std::string> set = env(variable); set && !set->empty()) {
    return *set;
  }
  std::optional<std::string> home = env("HOME");
  return (home ? *home : std::string()) + std::string(home_path);
}

}  // namespace

EnvLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    return value == nullptr ? std::nullopt : std::optional<std::string>(value);
  };
}

std::optional<ProfileKeys> read_profile(std::string_view text, std::string_view section) {
  std::optional<ProfileKeys> keys;
  bool inside = false;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty() || line.front() == '#' || line.front() == ';') {
      continue;
    }
    if (line.front() == '[') {
      const std::size_t close = line.find(']');
      inside = close != std::string_view::npos && trim(line.substr(1, close - 1)) == section;
      if (inside && !keys) {
        keys.emplace();
      }
      continue;
    }
    const std::size_t eq = line.find('=');
    if (!inside || eq == std::string_view::npos) {
      continue;
    }
    const std::string_view name = trim(line.substr(0, eq));
    const std::string value(trim(line.substr(eq + 1)));
    if (name == "aws_access_key_id") {
      keys->access_key_id = value;
    } else if (name == "aws_secret_access_key") {
      keys->secret_access_key = value;
    } else if (name == "aws_session_token") {
      keys->session_token = value;
    } else if (name == "role_arn") {
      keys->role_arn = value;
    } else if (name == "web_identity_token_file") {
      keys->web_identity_token_file = value;
    } else if (name == "role_session_name") {
      keys->role_session_name = value;
    }
  }
  return keys;
}

Result<FoundCredentials> find_credentials(const CredentialSettings& settings,
                                          const EnvLookup& env) {
  Result<std::optional<Credentials>> configured =
      complete(settings.access_key_id, settings.secret_access_key, settings.session_token,
               "the provider's config");
  if (!configured) {
    return configured.error();
  }
  if (*configured) {
    return FoundCredentials{std::move(**configured), std::nullopt, "config"};
  }
  const auto session_name = [&](const std::string& named) {
    std::string name = named.empty() ? env("AWS_ROLE_SESSION_NAME").value_or("") : named;
    return name.empty() ? std::string("sluice") : name;
  };
  if (!settings.role_arn.empty()) {
    std::string token_file = settings.web_identity_token_file;
    if (token_file.empty()) {
      token_file = env("AWS_WEB_IDENTITY_TOKEN_FILE").value_or("");
    }
    if (token_file.empty()) {
      return Error(ErrorKind::kBadRequest,
                   "bedrock.role_arn needs a web identity token file "
                   "(bedrock.web_identity_token_file or AWS_WEB_IDENTITY_TOKEN_FILE)");
    }
    return FoundCredentials{
        {},
        WebIdentity{settings.role_arn, token_file, session_name(settings.role_session_name)},
        "config (web identity)"};
  }
  Result<std::optional<Credentials>> environment =
      complete(env("AWS_ACCESS_KEY_ID").value_or(""), env("AWS_SECRET_ACCESS_KEY").value_or(""),
               env("AWS_SESSION_TOKEN").value_or(""), "the environment (AWS_ACCESS_KEY_ID)");
  if (!environment) {
    return environment.error();
  }
  if (*environment) {
    return FoundCredentials{std::move(**environment), std::nullopt, "environment"};
  }
  const std::string env_role = env("AWS_ROLE_ARN").value_or("");
  const std::string env_token_file = env("AWS_WEB_IDENTITY_TOKEN_FILE").value_or("");
  if (!env_role.empty() && !env_token_file.empty()) {
    return FoundCredentials{{},
                            WebIdentity{env_role, env_token_file, session_name({})},
                            "environment (AWS_ROLE_ARN, web identity)"};
  }
  std::string profile = settings.profile;
  if (profile.empty()) {
    profile = env("AWS_PROFILE").value_or("");
  }
  if (profile.empty()) {
    profile = "default";
  }
  const std::string credentials_file =
      file_of(env, "AWS_SHARED_CREDENTIALS_FILE", "/.aws/credentials");
  const std::string config_file = file_of(env, "AWS_CONFIG_FILE", "/.aws/config");
  const std::string config_section = profile == "default" ? profile : "profile " + profile;
  const struct {
    const std::string& path;
    const std::string& section;
  } files[] = {{credentials_file, profile}, {config_file, config_section}};
  for (const auto& file : files) {
    std::optional<std::string> text = read_text(file.path);
    std::optional<ProfileKeys> keys = text ? read_profile(*text, file.section) : std::nullopt;
    if (!keys) {
      continue;
    }
    const std::string where = file.path + " [" + file.section + "]";
    Result<std::optional<Credentials>> found =
        complete(keys->access_key_id, keys->secret_access_key, keys->session_token, where);
    if (!found) {
      return found.error();
    }
    if (*found) {
      return FoundCredentials{std::move(**found), std::nullopt, where};
    }
    if (!keys->role_arn.empty() && !keys->web_identity_token_file.empty()) {
      return FoundCredentials{{},
                              WebIdentity{keys->role_arn, keys->web_identity_token_file,
                                          session_name(keys->role_session_name)},
                              where + " (web identity)"};
    }
    if (!keys->role_arn.empty()) {
      return Error(ErrorKind::kBadRequest,
                   where +
                       " names a role (role_arn) without web_identity_token_file: only web "
                       "identity roles are assumed yet; give keys, a token file, or run with the "
                       "role's keys in the environment");
    }
  }
  Result<std::optional<ContainerEndpoint>> container = container_endpoint(env);
  if (!container) {
    return container.error();
  }
  if (*container) {
    return FoundCredentials{.credentials = {},
                            .web_identity = std::nullopt,
                            .source = "container credentials (" + (*container)->url + ")",
                            .container = std::move(**container)};
  }
  if (std::optional<InstanceMetadata> imds = instance_metadata(env)) {
    return FoundCredentials{.credentials = {},
                            .web_identity = std::nullopt,
                            .source = "the instance metadata service (" + imds->endpoint + ")",
                            .container = std::nullopt,
                            .instance = std::move(*imds)};
  }
  return Error(ErrorKind::kBadRequest,
               "no AWS credentials: none in the provider's config (bedrock.access_key_id, "
               "bedrock.secret_access_key), the environment (AWS_ACCESS_KEY_ID, "
               "AWS_SECRET_ACCESS_KEY, AWS_CONTAINER_CREDENTIALS_FULL_URI) or profile '" +
                   profile + "' of " + credentials_file + " and " + config_file +
                   ", and the instance metadata service is disabled (AWS_EC2_METADATA_DISABLED)");
}

}  // namespace sluice::aws
