// SPDX-License-Identifier: Apache-2.0
// Which node tests the portable-backend gate (--ops-from-portable) runs.
//
// The rule: a node test is in scope when its model's main graph has at least one node,
// every node is of the default ONNX domain, and every op type is one the portable
// backend has a kernel for, except Constant, which the importer turns into a constant
// value (onnx_importer.h) and so needs no kernel. Nested graphs need If, Loop or Scan,
// which have no portable kernel, so they never come in.
//
// Which op types the portable backend has a kernel for is asked of the backend itself,
// not written down here: portable_node_support() on a one-node graph of that op type
// answers "the portable backend has no kernel for op type '<op>'" exactly when it has
// none (core/portable/compiled_graph.cc); any other answer, including the kernel
// refusing the probe's made-up inputs, means a kernel exists. A made-up op type is
// probed first, so that if that wording ever changes the gate stops with an error
// instead of quietly taking every op as claimed.
//
// In-scope tests are then classified as every test is (runner.h): the gate fails on a
// wrong result, on an error from load or execute, on any import or compile error other
// than kNotSupported. kNotSupported stays "unsupported": the importer declining an
// opset, dtype or attribute it documents it does not read, or a portable kernel
// refusing a case its README lists as not covered (float16, integer Conv, ...). Those
// are declared limits, not wrong answers, and they show in the reason table. Tests of
// op types the portable backend never claimed are not run and not counted.
#ifndef PLUGRT_TOOLS_CONFORMANCE_PORTABLE_SCOPE_H_
#define PLUGRT_TOOLS_CONFORMANCE_PORTABLE_SCOPE_H_

#include <map>
#include <string>
#include <vector>

#include "plugrt/status.h"

namespace plugrt::conformance {

class PortableOpSet {
 public:
  /// Checks that the probe can tell a missing kernel apart. Errors: kInternal when the
  /// portable backend's answer for a made-up op type is not the expected one.
  static Result<PortableOpSet> create();

  /// Whether the portable backend has a kernel for `op_type` (default domain).
  bool has_kernel(const std::string& op_type);

  /// Whether a node test whose model has `op_types` (ModelInfo::op_types) is in scope.
  bool in_scope(const std::vector<std::string>& op_types);

 private:
  PortableOpSet() = default;
  std::map<std::string, bool> known_;
};

}  // namespace plugrt::conformance

#endif  // PLUGRT_TOOLS_CONFORMANCE_PORTABLE_SCOPE_H_
