// SPDX-License-Identifier: Apache-2.0
// The flags of the `plugrt` subcommands that build a plugrt::Runtime: the plugin search,
// isolation and how methods load. Each flag starts from what the PLUGRT_* variables say
// (RuntimeOptions::from_environment), so the command and the library agree.
#ifndef PLUGRT_TOOLS_PLUGRT_COMMAND_RUNTIME_H_
#define PLUGRT_TOOLS_PLUGRT_COMMAND_RUNTIME_H_

#include <CLI/CLI.hpp>

#include <memory>

#include "plugrt/runtime/runtime.h"
#include "plugrt/status.h"

namespace plugrt::tools {

/// What the PLUGRT_* variables say; not ok when one holds what it may not.
const Result<RuntimeOptions>& environment_options();

/// Adds --plugin-dir, --plugin-allow-list and --allow-untrusted-plugins to `command`.
void add_plugin_search_options(CLI::App& command, PluginSearchOptions& options);

/// Adds --isolate NAME[,NAME]|all, --execute-timeout-ms and --init-timeout-ms to
/// `command` (run, bench, doctor).
void add_isolation_options(CLI::App& command, PluginSearchOptions& options);

/// Adds --threads, --backends, --placement auto|as-compiled, --cache-dir DIR, --no-cache
/// and --verify to `command`.
void add_load_options(CLI::App& command, LoadSettings& settings);

/// The runtime over `plugins`, with the rest of the settings from the environment.
Result<std::unique_ptr<Runtime>> make_runtime(const PluginSearchOptions& plugins);

}  // namespace plugrt::tools

#endif  // PLUGRT_TOOLS_PLUGRT_COMMAND_RUNTIME_H_
