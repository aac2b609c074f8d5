// SPDX-License-Identifier: Apache-2.0
// The subcommands of `plugrt`. Each one adds itself to the CLI11 app and runs from a
// callback; failures print one line to stderr and set a non-zero exit code.
#ifndef PLUGRT_TOOLS_PLUGRT_COMMANDS_H_
#define PLUGRT_TOOLS_PLUGRT_COMMANDS_H_

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "command_runtime.h"

namespace plugrt::tools {

/// Options every subcommand that touches plugins shares.
struct PluginOptions {
  PluginSearchOptions search;
  bool json = false;
};

/// Where a command leaves its exit code.
struct CommandResult {
  int exit_code = 0;
};

void add_compile_command(CLI::App& app, CommandResult& result);
void add_run_command(CLI::App& app, CommandResult& result);
void add_bench_command(CLI::App& app, CommandResult& result);
void add_backends_command(CLI::App& app, CommandResult& result);
void add_doctor_command(CLI::App& app, CommandResult& result);
void add_inspect_command(CLI::App& app, CommandResult& result);
void add_new_backend_command(CLI::App& app, CommandResult& result);
void add_quantize_command(CLI::App& app, CommandResult& result);

/// True when `path` starts with a program file's magic.
bool is_program_file(const std::string& path);
/// `plugrt inspect` of a program file; returns the exit code.
int run_inspect_program(const std::string& path, bool as_json);

}  // namespace plugrt::tools

#endif  // PLUGRT_TOOLS_PLUGRT_COMMANDS_H_
