// SPDX-License-Identifier: Apache-2.0
// The estimate of what a node costs, used when no measured profile has a figure for it.
// It knows no backend by name: an accelerated backend (any but the reference fallback)
// is assumed to sustain the same throughput, the fallback a fixed factor less.
// placement/README.md documents the figures and why.
#ifndef PLUGRT_PLACEMENT_COST_MODEL_H_
#define PLUGRT_PLACEMENT_COST_MODEL_H_

#include <cstddef>
#include <string>

namespace plugrt::ir {
struct Graph;
}

namespace plugrt::placement {

struct EstimateParameters {
  double gflops = 50;                 ///< arithmetic an accelerated backend sustains on one core
  double gbytes_per_s = 20;           ///< memory traffic it sustains
  double node_us = 0.5;               ///< fixed cost of one node (dispatch, setup)
  double fallback_factor = 8;         ///< how much slower the reference fallback is
  double partition_us = 5;            ///< one delegate call: hand-off, argument views, synchronisation
  double crossing_us = 2;             ///< an edge between backends: hand-off and layout change
  double crossing_gbytes_per_s = 10;  ///< ... and copying its bytes
};

/// The arithmetic and memory traffic of one node, from its op type and static shapes.
struct NodeWork {
  double flops = 0;
  double bytes = 0;  ///< every input (constants included) and output, once
};

/// Work of node `node` of a verified graph IR. Convolutions, matrix products and pools
/// count their multiply-adds; other ops a few operations per output element.
NodeWork node_work(const ir::Graph& graph, size_t node);

/// Estimated microseconds of `work` on an accelerated backend, or on the fallback.
double estimated_node_us(const NodeWork& work, bool fallback, const EstimateParameters& parameters);

/// What identifies a node's cost on one backend: op type, opset, input and output
/// dtypes and shapes, and attributes ("Conv/17(f32[1,3,224,224],f32[32,3,3,3])->..." then
/// a hash of the attributes). Equal signatures cost the same, so a profile is keyed by it.
std::string op_signature(const ir::Graph& graph, size_t node);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_COST_MODEL_H_
