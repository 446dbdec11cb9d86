#include "server/guardrails_command.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "codec/json_writer.h"
#include "config/config.h"
#include "guardrails/policy.h"

namespace sluice::server {

std::function<int()> add_guardrails_command(CLI::App& app, config::ConfigFileCheck check) {
  struct Options {
    std::string path;
    std::vector<std::string> policies;
    std::string text;
    std::string text_file;
  };
  auto options = std::make_shared<Options>();
  CLI::App* group = app.add_subcommand("guardrails", "Try the config's guardrail policies");
  group->require_subcommand(1);
  CLI::App* command =
      group->add_subcommand("test", "Show what guardrail policies would do to a text");
  command->add_option("file", options->path, "YAML config file")->required();
  command->add_option("-p,--policy", options->policies, "A policy of the config (repeatable)")
      ->required();
  CLI::Option* text = command->add_option("-t,--text", options->text, "The text to inspect");
  CLI::Option* file =
      command->add_option("--text-file", options->text_file, "Read the text from a file");
  text->excludes(file);
  return [command, options, text, file, check = std::move(check)] {
    if (!*command) {
      return -1;
    }
    if (text->count() == 0 && file->count() == 0) {
      std::cerr << "guardrails test: --text or --text-file is required\n";
      return 1;
    }
    if (file->count() > 0) {
      std::ifstream in(options->text_file, std::ios::binary);
      if (!in) {
        std::cerr << "guardrails test: cannot read " << options->text_file << "\n";
        return 1;
      }
      std::ostringstream all;
      all << in.rdbuf();
      options->text = all.str();
    }
    auto cfg = check(options->path);
    if (!cfg) {
      std::cerr << cfg.error().message() << "\n";
      return 1;
    }
    guardrails::Policies policies;
    for (const std::string& name : options->policies) {
      const config::GuardrailPolicy* p = (*cfg)->guardrails.find(name);
      if (p == nullptr) {
        std::cerr << "guardrails test: no policy named \"" << name << "\" in " << options->path
                  << "\n";
        return 1;
      }
      auto compiled = guardrails::Policy::compile(*p);
      if (!compiled) {
        std::cerr << compiled.error().message() << "\n";
        return 1;
      }
      policies.push_back(std::move(*compiled));
    }
    guardrails::Inspector inspector(policies);
    const std::optional<std::string> redacted = inspector.inspect(options->text);
    const guardrails::Verdict& verdict = inspector.verdict();
    std::string out;
    codec::JsonWriter w(out);
    w.ch('{').key("blocked").boolean(inspector.blocked());
    if (const guardrails::Verdict::Hit* block = verdict.block()) {
      w.next_key("blocked_by").ch('{').key("policy").string(block->policy->name());
      w.next_key("detector").string(block->detector).ch('}');
    }
    w.next_key("finds").ch('[');
    bool first = true;
    for (const guardrails::Verdict::Hit& hit : verdict.hits) {
      if (!first) w.ch(',');
      first = false;
      w.ch('{').key("policy").string(hit.policy->name());
      w.next_key("detector").string(hit.detector);
      w.next_key("action").string(guardrails::to_string(hit.action));
      w.next_key("count").number(static_cast<std::uint64_t>(hit.count)).ch('}');
    }
    w.ch(']');
    if (!inspector.blocked()) {
      w.next_key("sent").string(redacted.value_or(options->text));
    }
    w.ch('}');
    std::cout << out << "\n";
    return 0;
  };
}

}  // namespace sluice::server
