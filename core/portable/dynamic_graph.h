// SPDX-License-Identifier: Apache-2.0
// DynamicGraph: a graph IR blob whose dimensions vary (ir_version 2 symbols), run at
// the shapes of each call's inputs.
//
// The host passes a call's symbol values (ABI 1.6); without them, the input shapes give
// them: a graph input dimension whose expression is a symbol alone is that symbol's
// size. They are checked against the symbols' ranges and every input dimension. The graph is compiled for those
// values the first time they are seen and kept, up to kMaxSpecializations, the least
// recently used evicted first. A call at shapes already seen allocates nothing; a call
// at new shapes compiles, which allocates.
#ifndef PLUGRT_PORTABLE_DYNAMIC_GRAPH_H_
#define PLUGRT_PORTABLE_DYNAMIC_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "compiled_graph.h"
#include "plugrt/sdk/symbol_binder.h"

namespace plugrt::portable {

class DynamicGraph {
 public:
  /// The compiled graphs kept, one per set of symbol values.
  static constexpr size_t kMaxSpecializations = 8;

  /// Checks the graph in `data` (which must stay valid while the result lives) and
  /// compiles it at its upper bounds. On failure returns null and sets `error`.
  static std::unique_ptr<DynamicGraph> create(const void* data, size_t size, std::string* error,
                                              CompileFailure* failure);

  /// Runs the graph at the symbols' `values` (one per symbol, as the host passes them;
  /// null: read from the inputs' shapes); the inputs and outputs must have the shapes
  /// those give. On failure writes the reason (naming the input, dimension and bound for
  /// a shape out of range) into `error`.
  bool run(const DLTensor* const* inputs, size_t num_inputs, const DLTensor* const* outputs, size_t num_outputs,
           const int64_t* values, size_t num_values, char* error, size_t error_capacity);
  /// Runs the graph at the symbols' values its inputs' shapes give.
  bool run(const DLTensor* const* inputs, size_t num_inputs, const DLTensor* const* outputs, size_t num_outputs,
           char* error, size_t error_capacity) {
    return run(inputs, num_inputs, outputs, num_outputs, nullptr, 0, error, error_capacity);
  }

  size_t num_specializations() const { return compiled_.size(); }

 private:
  DynamicGraph() = default;

  struct Specialization {
    std::vector<int64_t> symbol_values;
    std::unique_ptr<CompiledGraph> graph;
    uint64_t last_use = 0;
  };

  /// The graph compiled for the bound symbols' values, compiled now if it is not kept.
  CompiledGraph* specialization(char* error, size_t error_capacity);

  const void* data_ = nullptr;
  size_t size_ = 0;
  sdk::SymbolBinder symbols_;
  std::vector<Specialization> compiled_;
  uint64_t calls_ = 0;
};

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_DYNAMIC_GRAPH_H_
