// SPDX-License-Identifier: Apache-2.0
// plugrt: compile, run and inspect programs; list, inspect and diagnose backends.
#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char** argv) {
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
  CLI11_PARSE(app, argc, argv);
  return result.exit_code;
}
