// SPDX-License-Identifier: Apache-2.0
#include "backend_coverage.h"

#include <flatbuffers/flatbuffers.h>

#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::conformance {

namespace {

constexpr size_t kNamedRefusals = 8;

// "node 'conv1' (Conv)", or "Conv" for an unnamed node; the conformance report masks the name.
std::string node_label(const ir::Node& node) {
  if (node.name() == nullptr || node.name()->size() == 0) return node.op_type()->str();
  return "node '" + node.name()->str() + "' (" + node.op_type()->str() + ")";
}

}  // namespace

std::string Coverage::describe() const {
  const size_t total = taken.size() + refused.size();
  std::string text = "took " + std::to_string(taken.size()) + " of " + std::to_string(total) + " nodes";
  if (refused.empty()) return text;
  text += "; not: ";
  for (size_t i = 0; i < refused.size() && i < kNamedRefusals; ++i) text += (i == 0 ? "" : ", ") + refused[i];
  if (refused.size() > kNamedRefusals) text += ", ... (" + std::to_string(refused.size() - kNamedRefusals) + " more)";
  return text;
}

Result<Coverage> partition_coverage(Registry& registry, const std::string& backend, Span<const uint8_t> graph,
                                    Span<const plugrt_option> compile_specs) {
  flatbuffers::Verifier verifier(graph.data(), graph.size());
  if (graph.empty() || !ir::VerifyGraphBuffer(verifier)) {
    return Status(Error::kInvalidArgument, "not a graph IR buffer");
  }
  const ir::Graph& root = *ir::GetGraph(graph.data());
  const size_t num_nodes = root.nodes() == nullptr ? 0 : root.nodes()->size();
  PLUGRT_ASSIGN_OR_RETURN(RegisteredBackend found, registry.find_backend(backend));
  Coverage coverage;
  if (num_nodes == 0) return coverage;
  PLUGRT_ASSIGN_OR_RETURN(std::vector<bool> taken, found.partition(graph, num_nodes, compile_specs));
  for (size_t n = 0; n < num_nodes; ++n) {
    const std::string label = node_label(*root.nodes()->Get(static_cast<flatbuffers::uoffset_t>(n)));
    (n < taken.size() && taken[n] ? coverage.taken : coverage.refused).push_back(label);
  }
  return coverage;
}

std::string placed_elsewhere(const compiler::CompileSummary& summary, const std::string& backend) {
  std::string text;
  for (const compiler::PartitionSummary& partition : summary.partitions) {
    if (partition.backend == backend) continue;
    for (const auto& [op, count] : partition.op_counts) {
      text += (text.empty() ? "" : ", ") + op + " x" + std::to_string(count) + " on " + partition.backend;
    }
  }
  return text;
}

}  // namespace plugrt::conformance
