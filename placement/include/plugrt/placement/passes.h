// SPDX-License-Identifier: Apache-2.0
// Graph passes: backend-agnostic simplifications of a graph IR, run before placement so
// that every backend sees the same, smaller graph. Each keeps the graph's results equal.
// Constant folding stays in the ONNX importer (tools/compiler/onnx_folding.cc), which
// folds while it imports.
#ifndef PLUGRT_PLACEMENT_PASSES_H_
#define PLUGRT_PLACEMENT_PASSES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt::placement {

struct PassResult {
  std::vector<uint8_t> graph;             ///< the simplified graph IR
  std::map<std::string, size_t> changes;  ///< pass name -> nodes it removed or merged
};

/// Runs, until none changes anything: "no_op" (Identity, Dropout in inference, Reshape and
/// Cast to the same shape and type, Transpose with the identity permutation, Pad by
/// zeros), "transpose_chain" and "reshape_chain" (two in a row become one), "pad_fold"
/// (a constant zero Pad on spatial dimensions into the next Conv or AveragePool, a -inf Pad
/// into the next MaxPool), and "dead_node" (nodes whose outputs nothing reads). Graph
/// inputs and outputs keep their names, order and shapes. Errors: kInvalidArgument for a
/// graph that is not a valid graph IR buffer.
Result<PassResult> run_graph_passes(Span<const uint8_t> graph);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_PASSES_H_
