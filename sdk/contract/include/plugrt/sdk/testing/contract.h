// SPDX-License-Identifier: Apache-2.0
/// \file contract.h
/// The contract test kit: one GoogleTest suite that every plugrt plugin must pass,
/// parameterized over every backend the plugin provides. The runner
/// `plugrt-contract-test --plugin PATH [--blob FILE] [--isolate] [gtest flags]` is a thin main() over
/// run_contract_tests(); an author may also call it from a test program of their own.
///
/// The kit is the host side: it links the plugin loader and the core, loads the plugin
/// with dlopen, hands it GoogleMock host services (mock_host.h) and runs crash-prone
/// calls in a forked child, so a crash is reported as a failure and not fatal.
#ifndef PLUGRT_SDK_TESTING_CONTRACT_H_
#define PLUGRT_SDK_TESTING_CONTRACT_H_

#include <string>
#include <vector>

namespace plugrt::sdk::testing {

struct ContractConfig {
  /// The plugin file (libplugrt_<name>.so).
  std::string plugin_path;
  /// Optional: a blob file for the backend's init, used instead of (or when there is no)
  /// preprocess of the kit's sample graphs. Execute checks need a sample graph.
  std::string blob_path;
  /// Check the backends as the runtime runs them isolated (`--isolate`): the run-time calls
  /// (is_available, init, execute, destroy) go through the runtime's proxy table to the
  /// plugin in a plugrt-backend-host process; partition and preprocess, which run at
  /// compile time, stay in this process. Host-allocation checks are skipped there (the
  /// backend host's allocator is not the kit's).
  bool isolated = false;
  /// A backend that says it is unavailable fails the checks that need it
  /// (`--require-available`) instead of skipping them: for a vendor's CI on the device
  /// the backend is for, where unavailable means broken.
  bool require_available = false;
  /// How long one per-backend check may run in its child process (`--check-timeout`):
  /// past it the child is killed and the check fails as a hang.
  int check_timeout_seconds = 120;
  /// Play a host of an older ABI minor of this major (`--host-abi 1.N`): the args structs
  /// the backend gets have that minor's sizes (the bytes past them hold a pattern, not
  /// zeros), and what that host lacks is not offered (constants by name before 1.4,
  /// graphs with symbols before 1.5). -1: this kit's own minor. Not with `isolated`.
  int host_abi_minor = -1;
  /// "NAME.KEY=VALUE" each (`--compile-spec`, `--runtime-option`): backend NAME's
  /// partition and preprocess get its compile specs, its init its compile specs and
  /// runtime options, as `plugrt compile --backend-option` and `plugrt run
  /// --backend-option` pass them. A malformed one, or one naming a backend the plugin does
  /// not provide, is a usage error.
  std::vector<std::string> compile_specs;
  std::vector<std::string> runtime_options;
};

/// Parses --plugin, --blob, --isolate, --require-available, --check-timeout, --host-abi,
/// --compile-spec and --runtime-option
/// out of argv (and --help), sets up the suite, runs every test through GoogleTest (which
/// reads the remaining flags, e.g. --gtest_filter).
/// Returns the process exit code: 0 when every check passed.
int run_contract_tests(int argc, char** argv);

/// Runs the suite on `config`; `argc`/`argv` carry only GoogleTest's flags.
int run_contract_tests(const ContractConfig& config, int argc, char** argv);

}  // namespace plugrt::sdk::testing

#endif  // PLUGRT_SDK_TESTING_CONTRACT_H_
