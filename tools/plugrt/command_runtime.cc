// SPDX-License-Identifier: Apache-2.0
#include "command_runtime.h"

namespace plugrt::tools {

namespace {

/// The environment's settings, or the defaults when it holds an error (main() reports it).
const RuntimeOptions& defaults() {
  static const RuntimeOptions options = environment_options().is_ok() ? *environment_options() : RuntimeOptions{};
  return options;
}

/// A time limit in milliseconds, from 0 (none) to a day.
CLI::Option* add_time_limit(CLI::App& command, const std::string& flag, int& value, const std::string& help) {
  return command.add_option(flag, value, help)->check(CLI::Range(0, 24 * 3600 * 1000))->type_name("MS");
}

}  // namespace

const Result<RuntimeOptions>& environment_options() {
  static const Result<RuntimeOptions> options = RuntimeOptions::from_environment();
  return options;
}

void add_plugin_search_options(CLI::App& command, PluginSearchOptions& options) {
  options.allow_list = defaults().plugins.allow_list;
  command.add_option("--plugin-dir", options.plugin_dirs, "Directory to search for plugins first (repeatable)")
      ->type_name("DIR");
  command
      .add_option("--plugin-allow-list", options.allow_list,
                  "File of SHA-256 digests (sha256sum's output works): only the plugins it lists may load "
                  "(default: PLUGRT_PLUGIN_ALLOW_LIST)")
      ->type_name("FILE");
  command.add_flag("--allow-untrusted-plugins", options.allow_untrusted,
                   "Also load plugin files owned by another user or writable by others");
}

void add_isolation_options(CLI::App& command, PluginSearchOptions& options) {
  options.isolate = defaults().plugins.isolate;
  command
      .add_option("--isolate", options.isolate,
                  "Run these backends (comma-separated, or 'all' for every plugin) in separate plugrt-backend-host "
                  "processes: a crash or hang there falls back to portable instead of taking this process down "
                  "(default: PLUGRT_ISOLATE)")
      ->delimiter(',')
      ->type_name("NAME[,NAME]|all");
  add_time_limit(command, "--execute-timeout-ms", options.execute_timeout_ms,
                 "Time limit of one call: past it the call stops with an error, within a backend that checks (such "
                 "as portable's loops) or before its next part; an isolated backend's process is killed and its part "
                 "runs on the portable fallback, and the parts after it do not run (0: none)")
      ->capture_default_str();
  add_time_limit(command, "--init-timeout-ms", options.init_timeout_ms,
                 "Time limit of starting an isolated backend's process and its init; past it the process is "
                 "killed and the partition runs on the portable fallback (0: none)")
      ->capture_default_str();
}

void add_load_options(CLI::App& command, LoadSettings& settings) {
  settings = defaults().load;
  command
      .add_option("--threads", settings.threads,
                  "The method's thread budget, which its backends take turns on (default: PLUGRT_NUM_THREADS, "
                  "else the cores this process may run on)")
      ->check(CLI::Range(size_t{0}, size_t{1024}));
  command
      .add_option("--backends", settings.backends,
                  "Only these backends may run (comma-separated); other parts run on their portable fallback")
      ->delimiter(',');
  command
      .add_option("--placement", settings.placement,
                  "auto: place the program again over the backends present, reusing its blobs and the blob cache; "
                  "as-compiled: run each part where the program says, or on its portable fallback (default: "
                  "PLUGRT_PLACEMENT, else auto)")
      ->check(CLI::IsMember({"auto", "as-compiled"}))
      ->type_name("auto|as-compiled");
  command
      .add_option("--cache-dir", settings.cache_dir,
                  "Directory of the compiled-blob cache (default: PLUGRT_CACHE_DIR, else $XDG_CACHE_HOME/plugrt, "
                  "else ~/.cache/plugrt)")
      ->type_name("DIR");
  command.add_flag("--no-cache", settings.no_cache, "With --placement auto, neither read nor write the blob cache");
  command
      .add_option("--measure-seconds", settings.measure_seconds,
                  "With --placement auto: where two or more backends take a node and this machine's cost profile "
                  "has no figure for one of them, measure it first, for at most this many seconds in all, and keep "
                  "the figures in the profile (next to the blob cache); 0: never, and an unmeasured backend then "
                  "loses to a measured one (default 5)")
      ->check(CLI::NonNegativeNumber);
  command.add_flag("--verify", settings.verify,
                   "Run each delegated partition once at load on seeded inputs against its portable fallback, and "
                   "keep it on the fallback when they disagree; verdicts are kept in the blob cache (default: "
                   "PLUGRT_VERIFY)");
  command.add_option("--backend-option", settings.backend_options,
                     "NAME.KEY=VALUE: a runtime option for backend NAME, given to its init (repeatable; the backend "
                     "defines its keys)");
}

Result<std::unique_ptr<Runtime>> make_runtime(const PluginSearchOptions& plugins) {
  RuntimeOptions options = defaults();
  options.plugins = plugins;
  return Runtime::create(options);
}

}  // namespace plugrt::tools
