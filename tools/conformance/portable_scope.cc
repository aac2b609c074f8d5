// SPDX-License-Identifier: Apache-2.0
#include "portable_scope.h"

#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"

namespace plugrt::conformance {

namespace {

constexpr char kMadeUpOpType[] = "PlugrtConformanceProbeNoSuchOp";

// The portable backend's answer for a one-node graph of `op_type` (float32[1] -> float32[1]).
Result<std::string> probe(const std::string& op_type) {
  GraphBuilder graph;
  const ValueId x = graph.add_value("x", DType::kFloat32, {1});
  const ValueId y = graph.add_value("y", DType::kFloat32, {1});
  graph.add_node(op_type, "probe", {x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  const std::vector<uint8_t> bytes = graph.finish();
  Result<std::vector<std::string>> reasons = portable_node_support(bytes);
  if (!reasons.is_ok()) return reasons.status();
  if (reasons->size() != 1) {
    return Status(Error::kInternal, "portable_node_support answered for " + std::to_string(reasons->size()) +
                                        " nodes of a one-node graph");
  }
  return std::move((*reasons)[0]);
}

bool says_no_kernel(const std::string& reason, const std::string& op_type) {
  return reason == "the portable backend has no kernel for op type '" + op_type + "'";
}

}  // namespace

Result<PortableOpSet> PortableOpSet::create() {
  Result<std::string> reason = probe(kMadeUpOpType);
  if (!reason.is_ok()) return reason.status().with_context("probing the portable backend's op types");
  if (!says_no_kernel(*reason, kMadeUpOpType)) {
    return Status(Error::kInternal,
                  "cannot tell which op types the portable backend has kernels for: for the made-up op type '" +
                      std::string(kMadeUpOpType) + "' it answers \"" + *reason +
                      "\", not \"the portable backend has no kernel for op type '" + kMadeUpOpType +
                      "'\" (update tools/conformance/portable_scope.cc)");
  }
  return PortableOpSet();
}

bool PortableOpSet::has_kernel(const std::string& op_type) {
  auto it = known_.find(op_type);
  if (it != known_.end()) return it->second;
  bool claimed = false;
  if (op_type.find(':') == std::string::npos) {  // "domain:Op" is another domain's
    Result<std::string> reason = probe(op_type);
    claimed = reason.is_ok() && !says_no_kernel(*reason, op_type);
  }
  known_.emplace(op_type, claimed);
  return claimed;
}

bool PortableOpSet::in_scope(const std::vector<std::string>& op_types) {
  bool any_kernel = false;
  for (const std::string& op_type : op_types) {
    if (op_type == "Constant") continue;  // folded by the importer
    if (!has_kernel(op_type)) return false;
    any_kernel = true;
  }
  return any_kernel;
}

}  // namespace plugrt::conformance
