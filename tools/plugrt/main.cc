// SPDX-License-Identifier: Apache-2.0
// plugrt: compile, quantize, run and inspect programs; list, inspect and diagnose backends.
#include <CLI/CLI.hpp>

#include <iostream>

#include "command_runtime.h"
#include "commands.h"
#include "escaping_output.h"
#include "plugrt/trusted_path.h"

int main(int argc, char** argv) {
  const plugrt::tools::EscapingOutput escaping;  // no control byte from a file reaches the terminal
  // Set-uid or set-gid: no variable of the invoking user names a file this process uses.
  if (plugrt::secure_execution()) {
    for (const char* name : {"PLUGRT_CACHE_DIR", "PLUGRT_PLUGIN_PATH", "PLUGRT_PLUGIN_ALLOW_LIST", "XDG_CACHE_HOME"}) {
      unsetenv(name);
    }
  }
  if (const auto& environment = plugrt::tools::environment_options(); !environment.is_ok()) {
    std::cerr << "plugrt: " << environment.status().message() << "\n";
    return 2;
  }
  CLI::App app{"plugrt: a pluggable on-device inference runtime"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(PLUGRT_VERSION));
  plugrt::tools::CommandResult result;
  plugrt::tools::add_compile_command(app, result);
  plugrt::tools::add_run_command(app, result);
  plugrt::tools::add_bench_command(app, result);
  plugrt::tools::add_backends_command(app, result);
  plugrt::tools::add_doctor_command(app, result);
  plugrt::tools::add_inspect_command(app, result);
  plugrt::tools::add_new_backend_command(app, result);
  plugrt::tools::add_quantize_command(app, result);
  CLI11_PARSE(app, argc, argv);
  return result.exit_code;
}
