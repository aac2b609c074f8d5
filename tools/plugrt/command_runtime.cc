// SPDX-License-Identifier: Apache-2.0
#include "command_runtime.h"

#include <cstdlib>

#include "plugrt/builtin_backends.h"
#include "plugrt/placement/load_placer.h"
#include "plugrt/plugins/plugin_trust.h"
#include "text.h"

namespace plugrt::tools {

namespace {

std::shared_ptr<HostEnvironment> command_environment() {
  auto environment = std::make_shared<HostEnvironment>();
  if (std::getenv("PLUGRT_LOG") == nullptr) environment->set_log_sink(nullptr);
  return environment;
}

plugins::SearchPathOptions search_options(const PluginSearchOptions& options) {
  plugins::SearchPathOptions search;
  search.application_directories = options.plugin_dirs;
  search.allow_list = options.allow_list;
  search.allow_untrusted_files = options.allow_untrusted;
  search.isolated_backends = options.isolate;
  search.isolation.execute_timeout_ms = options.execute_timeout_ms;
  search.isolation.init_timeout_ms = options.init_timeout_ms;
  return search;
}

// The loader would refuse every plugin over a list it cannot read; the command says so
// up front instead.
Status check_allow_list(const std::string& path) {
  if (path.empty()) return Status::ok();
  Result<plugins::AllowList> list = plugins::AllowList::read(path);
  if (!list.is_ok()) return list.status().with_context("--plugin-allow-list");
  return Status::ok();
}

/// A time limit in milliseconds, from 0 (none) to a day.
CLI::Option* add_time_limit(CLI::App& command, const std::string& flag, int& value, const std::string& help) {
  return command.add_option(flag, value, help)->check(CLI::Range(0, 24 * 3600 * 1000))->type_name("MS");
}

}  // namespace

void add_plugin_search_options(CLI::App& command, PluginSearchOptions& options) {
  command.add_option("--plugin-dir", options.plugin_dirs, "Directory to search for plugins first (repeatable)")
      ->type_name("DIR");
  command
      .add_option("--plugin-allow-list", options.allow_list,
                  "File of SHA-256 digests (sha256sum's output works): only the plugins it lists may load")
      ->envname("PLUGRT_PLUGIN_ALLOW_LIST")
      ->type_name("FILE");
  command.add_flag("--allow-untrusted-plugins", options.allow_untrusted,
                   "Also load plugin files owned by another user or writable by others");
}

void add_isolation_options(CLI::App& command, PluginSearchOptions& options) {
  command
      .add_option("--isolate", options.isolate,
                  "Run these backends (comma-separated, or 'all' for every plugin) in separate plugrt-backend-host "
                  "processes: a crash or hang there falls back to portable instead of taking this process down")
      ->envname("PLUGRT_ISOLATE")
      ->delimiter(',')
      ->type_name("NAME[,NAME]|all");
  add_time_limit(command, "--execute-timeout-ms", options.execute_timeout_ms,
                 "Time limit of one call on an isolated backend; past it the process is killed and the call runs "
                 "on the portable fallback (0: none)")
      ->capture_default_str();
  add_time_limit(command, "--init-timeout-ms", options.init_timeout_ms,
                 "Time limit of starting an isolated backend's process and its init; past it the process is "
                 "killed and the partition runs on the portable fallback (0: none)")
      ->capture_default_str();
}

CommandRuntime::CommandRuntime(const PluginSearchOptions& options)
    : options_(options),
      status_(check_allow_list(options.allow_list)),
      registry_(command_environment()),
      loader_(registry_, search_options(options)) {
  Status builtins = register_builtin_backends(registry_);
  (void)builtins;  // the built-in tables are checked by the tests; this cannot fail
  loader_.discover();
}

void CommandRuntime::load_all() { loader_.load_accepted(); }

void add_placement_options(CLI::App& command, LoadSettings& settings) {
  command
      .add_option("--placement", settings.placement,
                  "auto: place the program again over the backends present, reusing its blobs and the blob cache; "
                  "as-compiled: run each part where the program says, or on its portable fallback (default: auto)")
      ->envname("PLUGRT_PLACEMENT")
      ->check(CLI::IsMember({"auto", "as-compiled"}))
      ->type_name("auto|as-compiled");
  command
      .add_option("--cache-dir", settings.cache_dir,
                  "Directory of the compiled-blob cache (default: $XDG_CACHE_HOME/plugrt, else ~/.cache/plugrt)")
      ->envname("PLUGRT_CACHE_DIR")
      ->type_name("DIR");
  command.add_flag("--no-cache", settings.no_cache, "With --placement auto, neither read nor write the blob cache");
  command
      .add_flag("--verify", settings.verify,
                "Run each delegated partition once at load on seeded inputs against its portable fallback, and "
                "keep it on the fallback when they disagree; verdicts are kept in the blob cache")
      ->envname("PLUGRT_VERIFY");
}

Result<Method> CommandRuntime::load_method(const Program& program, const std::string& method_name,
                                           const LoadSettings& settings) {
  MethodOptions options;
  options.num_threads = settings.threads;
  options.adapt_threads = settings.adapt_threads;
  options.allowed_backends = split(settings.backends, ',');
  placement::LoadPlacerOptions placer_options;
  if (settings.no_cache) {
    placer_options.cache_directory.clear();
  } else if (!settings.cache_dir.empty()) {
    placer_options.cache_directory = settings.cache_dir;
  }
  placement::LoadPlacer placer(placer_options);
  if (settings.placement == "auto") {
    options.placement = PlacementPolicy::kAuto;
    options.placer = &placer;
  }
  options.verify = settings.verify;
  if (placer.cache() != nullptr) options.verdicts = &placer;
  return Method::load(program, method_name, registry_, options);
}

}  // namespace plugrt::tools
