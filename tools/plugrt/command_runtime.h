// The registry a `plugrt` subcommand works with: the built-in backends, and a plugin
// loader over the search path that has read every plugin file's metadata (plugins load
// when a backend of theirs is first needed).
#ifndef PLUGRT_TOOLS_PLUGRT_COMMAND_RUNTIME_H_
#define PLUGRT_TOOLS_PLUGRT_COMMAND_RUNTIME_H_

#include <memory>
#include <string>
#include <vector>

#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/registry.h"

namespace plugrt::tools {

class CommandRuntime {
 public:
  /// `plugin_dirs` are searched before PLUGRT_PLUGIN_PATH. Plugin log lines are
  /// dropped unless PLUGRT_LOG is set.
  explicit CommandRuntime(const std::vector<std::string>& plugin_dirs);

  Registry& registry() { return registry_; }
  plugins::PluginLoader& loader() { return loader_; }
  /// Loads every accepted plugin, so that all their backends are registered.
  void load_all();

 private:
  Registry registry_;
  plugins::PluginLoader loader_;
};

}  // namespace plugrt::tools

#endif  // PLUGRT_TOOLS_PLUGRT_COMMAND_RUNTIME_H_
