// SPDX-License-Identifier: Apache-2.0
// Running one ONNX backend test through the whole pipeline: import the model, compile
// it for the chosen backends, load the program, run every data set, compare.
#ifndef PLUGRT_TOOLS_CONFORMANCE_RUNNER_H_
#define PLUGRT_TOOLS_CONFORMANCE_RUNNER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "plugrt/registry.h"
#include "test_data.h"

namespace plugrt::conformance {

enum class Verdict {
  kPass,
  /// A wrong result (the first mismatch, with both values), a wrong input or output
  /// name, dtype or shape, an error from load or execute, any error other than
  /// kNotSupported from import or compile, or test data that cannot be read.
  kFail,
  /// The importer or the compiler answered kNotSupported (the reason is their message),
  /// or the model declares inputs, outputs or values that are not tensors (sequences,
  /// maps, optionals): their test data is not TensorProto files.
  kUnsupported,
};

std::string_view to_string(Verdict verdict);

struct TestResult {
  Verdict verdict = Verdict::kFail;
  std::string reason;  ///< empty for a pass; one line
  /// The inputs that were frozen into constants for this result (RunOptions::
  /// freeze_parameters); empty when the test ran as it is.
  std::vector<std::string> frozen_inputs;
};

struct RunOptions {
  /// CompileOptions::backends, and the backends the method may use.
  std::vector<std::string> backends;
  /// MethodOptions::num_threads.
  size_t method_threads = 0;
  /// When the test as it is comes out unsupported, run it again with its parameter
  /// inputs (ModelInfo: read only at a node's input 1 or later, like Reshape's shape)
  /// made constants holding each data set's values, and report that run when it passes
  /// or fails. A backend may need such parameters constant; this checks what it computes
  /// with them.
  bool freeze_parameters = true;
  /// When set, the test must run on this backend alone: it is unsupported when the
  /// backend's partition does not take every node (the reason names the others) or when
  /// the compiled program runs anything elsewhere (a graph folded to constants).
  std::string only_backend;
  /// Where the method is loaded, when not from the registry the test compiles with (the
  /// contract kit's --isolate: compiled in process, run isolated).
  Registry* method_registry = nullptr;
};

/// Runs `test`, whose model.onnx `model` describes. Never throws: an exception is a fail
/// naming it. Safe to call from several threads with one registry.
TestResult run_test(const TestCase& test, const ModelInfo& model, Registry& registry, const RunOptions& options);

}  // namespace plugrt::conformance

#endif  // PLUGRT_TOOLS_CONFORMANCE_RUNNER_H_
