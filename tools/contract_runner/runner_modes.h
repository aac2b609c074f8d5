// SPDX-License-Identifier: Apache-2.0
// The contract kit's two correctness modes, beside the contract checks themselves:
//   --model M.onnx --input NAME=FILE.npy ... --expect NAME=FILE.npy ...
//       one author's model through the plugin alone (partition, preprocess, init,
//       execute), its outputs compared with the expected ones;
//   --conformance
//       every ONNX node test (Debian's libonnx-testdata) whose nodes the plugin's
//       partition takes, through that plugin alone, as a per-op table.
// Both drive the runtime as an application would (compile, load, execute), reusing the
// conformance runner's test data reading and comparison (tools/conformance/).
#ifndef PLUGRT_TOOLS_CONTRACT_RUNNER_RUNNER_MODES_H_
#define PLUGRT_TOOLS_CONTRACT_RUNNER_RUNNER_MODES_H_

#include <cstddef>
#include <string>
#include <vector>

namespace plugrt::contract_runner {

struct ModelCheckOptions {
  std::string plugin_path;
  std::string backend;  ///< one of the plugin's backends; empty: each of them
  std::string model;
  std::vector<std::string> inputs;    ///< NAME=FILE.npy, one per model input
  std::vector<std::string> expected;  ///< NAME=FILE.npy, at least one
  /// NAME=MIN..MAX or NAME=VALUE: the ONNX symbolic dimension NAME stays symbolic, within
  /// those bounds (as `plugrt compile --dim`); the inputs give each call's size
  std::vector<std::string> dims;
  bool isolated = false;  ///< run the plugin in plugrt-backend-host processes
  /// NAME.KEY=VALUE each (--compile-spec, --runtime-option), as the contract checks take them
  std::vector<std::string> compile_specs;
  std::vector<std::string> runtime_options;
};

struct ConformanceOptions {
  std::string plugin_path;
  std::string backend;  ///< one of the plugin's backends; empty: each of them
  std::string data;     ///< the ONNX test data directory; empty: the default
  std::string json;     ///< write the conformance runner's JSON report here (one backend)
  size_t threads = 1;
  bool isolated = false;  ///< run the plugin in plugrt-backend-host processes
};

/// Exit codes: 0 when every expected output matched, 1 otherwise (the reason printed),
/// 2 for a usage error.
int run_model_check(const ModelCheckOptions& options);

/// Exit codes: 0 when no test failed, 1 when one did, 2 for a usage error.
int run_conformance(const ConformanceOptions& options);

}  // namespace plugrt::contract_runner

#endif  // PLUGRT_TOOLS_CONTRACT_RUNNER_RUNNER_MODES_H_
