// SPDX-License-Identifier: Apache-2.0
// The registry a `plugrt` subcommand works with: the built-in backends, and a plugin
// loader over the search path that has read every plugin file's metadata (plugins load
// when a backend of theirs is first needed). Also the plugin options the subcommands
// that load plugins share.
#ifndef PLUGRT_TOOLS_PLUGRT_COMMAND_RUNTIME_H_
#define PLUGRT_TOOLS_PLUGRT_COMMAND_RUNTIME_H_

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "plugrt/method.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "plugrt/registry.h"
#include "plugrt/status.h"

namespace plugrt::tools {

/// Where plugins are looked for and which of them may load.
struct PluginSearchOptions {
  std::vector<std::string> plugin_dirs;  // searched before PLUGRT_PLUGIN_PATH
  /// A file of SHA-256 digests (sha256sum's output works): only plugins it lists load.
  std::string allow_list;
  /// Load plugin files owned by another user or writable by others.
  bool allow_untrusted = false;
  /// Backends to run isolated in plugrt-backend-host processes ("all": every plugin).
  std::vector<std::string> isolate;
  /// Time limit of one isolated execute call; 0: none.
  int execute_timeout_ms = isolation::IsolationOptions{}.execute_timeout_ms;
  /// Time limit of starting an isolated backend's process and its init; 0: none.
  int init_timeout_ms = isolation::IsolationOptions{}.init_timeout_ms;
};

/// Adds --plugin-dir, --plugin-allow-list (or PLUGRT_PLUGIN_ALLOW_LIST) and
/// --allow-untrusted-plugins to `command`.
void add_plugin_search_options(CLI::App& command, PluginSearchOptions& options);

/// Adds --isolate NAME[,NAME]|all (or PLUGRT_ISOLATE), --execute-timeout-ms and
/// --init-timeout-ms to `command` (run, bench, doctor).
void add_isolation_options(CLI::App& command, PluginSearchOptions& options);

/// How `plugrt run` and `plugrt bench` load a method.
struct LoadSettings {
  /// Only these backends may run (comma-separated); empty: any.
  std::string backends;
  /// The thread budget; 0: the cores this process may run on.
  size_t threads = 0;
  /// Calls may run on one thread while one runs the method faster (MethodOptions::adapt_threads).
  bool adapt_threads = true;
  /// "auto" (placed again over the backends present) or "as-compiled".
  std::string placement = "auto";
  /// The blob cache's directory; empty: the default (placement/blob_cache.h).
  std::string cache_dir;
  bool no_cache = false;
  /// Check each delegated partition against its portable fallback at load (MethodOptions::verify).
  bool verify = false;
};

/// Adds --placement auto|as-compiled (or PLUGRT_PLACEMENT), --cache-dir DIR (or
/// PLUGRT_CACHE_DIR), --no-cache and --verify (or PLUGRT_VERIFY) to `command`.
void add_placement_options(CLI::App& command, LoadSettings& settings);

class CommandRuntime {
 public:
  /// Plugin log lines are dropped unless PLUGRT_LOG is set.
  explicit CommandRuntime(const PluginSearchOptions& options);

  /// Not ok when the options cannot be used (an allow-list that cannot be read or is
  /// malformed); the command should stop with this message.
  const Status& status() const { return status_; }

  Registry& registry() { return registry_; }
  plugins::PluginLoader& loader() { return loader_; }
  const PluginSearchOptions& options() const { return options_; }
  /// Loads every accepted plugin, so that all their backends are registered.
  void load_all();
  /// Loads `method_name` of `program` as `settings` say. With placement auto the placer
  /// considers every backend of the plugins found (and so loads them).
  Result<Method> load_method(const Program& program, const std::string& method_name, const LoadSettings& settings);

 private:
  PluginSearchOptions options_;
  Status status_;
  Registry registry_;
  plugins::PluginLoader loader_;
};

}  // namespace plugrt::tools

#endif  // PLUGRT_TOOLS_PLUGRT_COMMAND_RUNTIME_H_
