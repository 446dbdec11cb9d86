#include "metering/check_prices_command.h"

#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "core/text_file.h"
#include "metering/price_catalogue.h"

namespace sluice::metering {
namespace {

int check_prices(const std::string& path) {
  const auto text = read_text_file(path);
  if (!text) {
    std::cerr << text.error().message() << "\n";
    return 1;
  }
  auto catalogue = parse_price_catalogue(*text, path);
  if (!catalogue) {
    std::cerr << catalogue.error().message() << "\n";
    return 1;
  }
  std::cout << "OK: " << path << ": " << catalogue->summary();
  return 0;
}

}  // namespace

std::function<int()> add_check_prices_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand(
      "check-prices", "Validate a price catalogue (docs/metering.md, \"Pricing\") and exit");
  command->add_option("file", *path, "YAML price catalogue")->required();
  return [command, path] { return *command ? check_prices(*path) : -1; };
}

}  // namespace sluice::metering
