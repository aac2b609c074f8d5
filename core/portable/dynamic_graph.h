// SPDX-License-Identifier: Apache-2.0
// DynamicGraph: a graph IR blob whose dimensions vary (ir_version 2 symbols), run at
// the shapes of each call's inputs.
//
// A call's input shapes give the symbols' values: a graph input dimension whose
// expression is a symbol alone is that symbol's size. They are checked against the
// symbols' ranges and the inputs' other dimensions. The graph is compiled for those
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
#include "plugrt/sdk/dim_expr.h"

namespace plugrt::portable {

/// Whether the graph IR buffer declares symbols (its dimensions may vary). False for a
/// buffer that is not a readable graph.
bool has_symbols(const void* data, size_t size);

class DynamicGraph {
 public:
  /// The compiled graphs kept, one per set of symbol values.
  static constexpr size_t kMaxSpecializations = 8;

  /// Checks the graph in `data` (which must stay valid while the result lives) and
  /// compiles it at its upper bounds. On failure returns null and sets `error`.
  static std::unique_ptr<DynamicGraph> create(const void* data, size_t size, std::string* error,
                                              CompileFailure* failure);

  /// Runs the graph at the inputs' shapes; the outputs must have the shapes those give.
  /// On failure writes the reason (naming the input, dimension and bound for a shape out
  /// of range) into `error`.
  bool run(const DLTensor* const* inputs, size_t num_inputs, const DLTensor* const* outputs, size_t num_outputs,
           char* error, size_t error_capacity);

  size_t num_specializations() const { return compiled_.size(); }

 private:
  DynamicGraph() = default;

  /// A graph input's dimensions: static, a symbol's size, or another expression.
  struct InputDims {
    std::string name;
    std::vector<int64_t> bounds;                // the shape's entries
    std::vector<int64_t> symbol;                // per axis: the symbol it gives, or -1
    std::vector<std::vector<int64_t>> varying;  // per axis: expression words, empty when static
  };
  struct Specialization {
    std::vector<int64_t> symbol_values;
    std::unique_ptr<CompiledGraph> graph;
    uint64_t last_use = 0;
  };

  /// Sets symbol_values_ from the inputs' shapes and checks them.
  bool bind_symbols(const DLTensor* const* inputs, size_t num_inputs, char* error, size_t error_capacity);
  /// The graph compiled for symbol_values_, compiled now if it is not kept.
  CompiledGraph* specialization(char* error, size_t error_capacity);

  const void* data_ = nullptr;
  size_t size_ = 0;
  std::vector<std::string> symbol_names_;
  std::vector<sdk::DimRange> symbol_ranges_;
  std::vector<InputDims> inputs_;
  std::vector<int64_t> symbol_values_;  // this call's
  std::vector<Specialization> compiled_;
  uint64_t calls_ = 0;
};

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_DYNAMIC_GRAPH_H_
