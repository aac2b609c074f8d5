// SPDX-License-Identifier: Apache-2.0
// CompiledGraph: a graph IR blob checked, planned and prepared for the portable kernels.
//
// Loading verifies the flatbuffer and every index, dtype, shape and constant size
// (with overflow-safe arithmetic), prepares one kernel per node, runs once the nodes
// whose inputs are all constants or whose outputs need none (Shape), and plans one arena
// for the intermediate values.
// Running it does no allocation, except where a node with parameters given at run time
// meets values it has not kept a kernel for (run_time_parameters.h).
#ifndef PLUGRT_PORTABLE_COMPILED_GRAPH_H_
#define PLUGRT_PORTABLE_COMPILED_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "kernel.h"

namespace plugrt::portable {

/// Checks a graph IR buffer (verifier, version, indices, dtypes, shapes, constants,
/// topological order) without preparing kernels. Empty when valid, else the reason.
std::string verify_graph(const void* data, size_t size);

/// Why a graph could not be compiled.
enum class CompileFailure {
  kIncompatible,  ///< not a graph IR buffer, or an IR version this build cannot read
  kInvalid,       ///< a graph IR buffer that breaks its rules
  kUnsupported,   ///< valid, but a node has no kernel or its kernel refuses it
};

/// For each node, why the portable kernels cannot run it (no kernel, or its kernel
/// refuses the node's attributes, dtypes or shapes); empty when they can. Returns no
/// entries, with `error` set, when the graph is invalid.
std::vector<std::string> node_support(const void* data, size_t size, std::string* error);

class CompiledGraph {
 public:
  /// Compiles the graph in `data`, which must stay valid while the result lives (its
  /// constants are used in place when aligned). Dimensions that vary take their values
  /// for `symbol_values` (one per graph symbol, each within its range), or their upper
  /// bounds when it is null. On failure returns null and sets `error`, and
  /// `failed_node` (when not null) to the node whose kernel refused, if one did.
  static std::unique_ptr<CompiledGraph> compile(const void* data, size_t size, std::string* error,
                                                CompileFailure* failure, const int64_t* symbol_values = nullptr,
                                                std::optional<size_t>* failed_node = nullptr);
  ~CompiledGraph();

  /// Runs the graph. Checks each argument's device, dtype, shape and layout; on a
  /// mismatch returns false and writes the reason into `error`. Allocates nothing on
  /// success.
  bool run(const DLTensor* const* inputs, size_t num_inputs, const DLTensor* const* outputs, size_t num_outputs,
           char* error, size_t error_capacity);

  size_t num_nodes() const;
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  const TensorInfo& input_info(size_t k) const;
  const TensorInfo& output_info(size_t k) const;
  size_t arena_bytes() const { return arena_size_; }

 private:
  CompiledGraph() = default;
  struct Step;
  struct ValueSlot;

  /// Runs a prepared step now when its outputs are small and all its inputs constants
  /// (or it reads none), making the outputs constants; true when it did (the step is
  /// then dropped).
  bool fold(Step& step);
  bool check(const DLTensor* tensor, const ValueSlot& slot, const char* role, size_t index, char* error,
             size_t error_capacity) const;
  bool bind(const DLTensor* tensor, const ValueSlot& slot, const char* role, size_t index, char* error,
            size_t error_capacity);

  std::vector<ValueSlot> values_;
  std::vector<Step> steps_;
  std::vector<int32_t> inputs_;   // value indices
  std::vector<int32_t> outputs_;  // value indices
  /// Values whose data pointer is set per run (graph inputs and outputs), in
  /// `value_data_` order.
  std::vector<void*> value_data_;
  /// Outputs that no node writes (a graph input or constant passed through): copied.
  std::vector<std::pair<size_t, int32_t>> output_copies_;  // (output index, source value)
  std::unique_ptr<std::byte[]> owned_blob_;                // an aligned copy of a misaligned blob
  std::vector<std::unique_ptr<std::byte[]>> owned_constants_;
  std::unique_ptr<std::byte[]> arena_storage_;
  std::byte* arena_ = nullptr;
  size_t arena_size_ = 0;
  std::byte* scratch_ = nullptr;
};

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_COMPILED_GRAPH_H_
