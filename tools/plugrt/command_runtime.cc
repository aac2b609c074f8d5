#include "command_runtime.h"

#include <cstdlib>

#include "plugrt/builtin_backends.h"

namespace plugrt::tools {

namespace {

std::shared_ptr<HostEnvironment> command_environment() {
  auto environment = std::make_shared<HostEnvironment>();
  if (std::getenv("PLUGRT_LOG") == nullptr) environment->set_log_sink(nullptr);
  return environment;
}

plugins::SearchPathOptions search_options(const std::vector<std::string>& plugin_dirs) {
  plugins::SearchPathOptions search;
  search.application_directories = plugin_dirs;
  return search;
}

}  // namespace

CommandRuntime::CommandRuntime(const std::vector<std::string>& plugin_dirs)
    : registry_(command_environment()), loader_(registry_, search_options(plugin_dirs)) {
  Status builtins = register_builtin_backends(registry_);
  (void)builtins;  // the built-in tables are checked by the tests; this cannot fail
  loader_.discover();
}

void CommandRuntime::load_all() {
  for (const plugins::PluginReport& report : loader_.report()) {
    if (report.state == plugins::PluginReport::State::kAccepted) (void)loader_.load(report.path);
  }
}

}  // namespace plugrt::tools
