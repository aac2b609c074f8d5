// SPDX-License-Identifier: Apache-2.0
// What a Runtime is built from: where plugins are looked for and which may load, which
// run isolated, and how methods load (placement, blob cache, threads). One struct for
// the library, the C API, Python and the `plugrt` command, with the same defaults, and
// the one place that reads the PLUGRT_* variables that set them.
#ifndef PLUGRT_RUNTIME_RUNTIME_OPTIONS_H_
#define PLUGRT_RUNTIME_RUNTIME_OPTIONS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "plugrt/isolation/isolated_plugin.h"
#include "plugrt/status.h"

namespace plugrt {

/// Where plugins are looked for and which of them may load.
struct PluginSearchOptions {
  std::vector<std::string> plugin_dirs;  // searched before PLUGRT_PLUGIN_PATH
  /// Look in plugin_dirs, PLUGRT_PLUGIN_PATH and the install's directories; false: load
  /// only plugin_files (a tool that checks one plugin, so that no other stands in for it).
  bool search = true;
  /// Plugin files loaded by path when the runtime is created, under the same checks.
  std::vector<std::string> plugin_files;
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

/// How a method loads.
struct LoadSettings {
  /// Only these backends may run; empty: any ("portable" always may).
  std::vector<std::string> backends;
  /// The thread budget; 0: the cores this process may run on.
  size_t threads = 0;
  /// Calls may run on one thread while one runs the method faster (MethodOptions::adapt_threads).
  bool adapt_threads = true;
  /// "auto" (placed again over the backends present) or "as-compiled".
  std::string placement = "auto";
  /// The blob cache's directory; empty: the default (placement/blob_cache.h).
  std::string cache_dir;
  bool no_cache = false;
  /// With placement auto: seconds it may spend measuring what the cost profile (in
  /// cache_dir, read and written even with no_cache) lacks to choose between backends; 0: never.
  double measure_seconds = 5;
  /// Check each delegated partition against its portable fallback at load (MethodOptions::verify).
  bool verify = false;
  /// Runtime options for one backend each, "NAME.KEY=VALUE" (MethodOptions::backend_options):
  /// a malformed one, or one naming a backend the runtime does not know, fails the load.
  std::vector<std::string> backend_options;
};

/// Everything a Runtime is built from. The defaults are the `plugrt` command's.
///
/// The environment variables, all read by from_environment() except where noted:
///   PLUGRT_PLUGIN_ALLOW_LIST  plugins.allow_list
///   PLUGRT_ISOLATE            plugins.isolate (comma-separated, or "all")
///   PLUGRT_PLACEMENT          load.placement ("auto" or "as-compiled")
///   PLUGRT_CACHE_DIR          load.cache_dir (also the cost profile's directory)
///   PLUGRT_VERIFY             load.verify (1/true/yes/on or 0/false/no/off)
///   PLUGRT_NUM_THREADS        load.threads (0: the cores this process may run on)
///   PLUGRT_LOG                log (set: plugins' log lines go to stderr)
/// Read where they act, as they apply to every process whatever built its runtime:
///   PLUGRT_PLUGIN_PATH        directories searched after plugins.plugin_dirs (search_path.h)
///   PLUGRT_CACHE_MAX_MB       the blob cache's size limit (placement/blob_cache.h)
///   PLUGRT_SPIN_US            how long idle OpenMP workers spin (plugins/worker_spin.h)
struct RuntimeOptions {
  PluginSearchOptions plugins;
  LoadSettings load;
  /// Register the built-in portable backend; false: only the plugins' backends (a plugin
  /// that provides "portable" is then the one used).
  bool builtin_backends = true;
  /// Plugins' log lines go to stderr; otherwise they are dropped.
  bool log = false;

  /// The defaults, changed by the variables above that are set. Errors name the variable
  /// and say what it may hold.
  static Result<RuntimeOptions> from_environment();
};

}  // namespace plugrt

#endif  // PLUGRT_RUNTIME_RUNTIME_OPTIONS_H_
