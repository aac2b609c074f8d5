// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: an ONNX model's bytes through the importer (protobuf parse, the
// checks of what plugrt handles, ONNX's checker, shape inference node by node with the
// guards of onnx_inference.cc, constant folding, writing the graph IR). Must never crash,
// hang or exhaust memory: a bad model fails with kInvalidArgument or kNotSupported, and
// a model that imports gives a graph IR that the portable backend's checks accept.
//
// A model refused for a named symbolic dimension (an input's dim_param) is imported
// again with bounds for it, as `plugrt compile --dim` gives them, so the symbolic shape
// rules (onnx_symbolic.cc) and the varying-shape graph IR are fuzzed too. The bounds
// come from the model's bytes, so a mutation reaches small, large and single-value ranges.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "onnx_importer.h"
#include "plugrt/builtin_backends.h"

namespace {

using plugrt::compiler::DimBounds;
using plugrt::compiler::ImportOptions;
using plugrt::compiler::InputShapeProblem;

// Symbols given bounds per model, at most: each one costs a whole import.
constexpr size_t kMaxBoundedSymbols = 4;

// Bounds for the n-th symbol, read from the model's last bytes.
DimBounds bounds_for(const uint8_t* data, size_t size, size_t n) {
  const uint8_t a = size > 2 * n ? data[size - 1 - 2 * n] : 0;
  const uint8_t b = size > 2 * n + 1 ? data[size - 2 - 2 * n] : 0;
  const int64_t min = a % 4;  // 0 too: an empty sequence is a valid length
  return DimBounds{min, min + b};
}

// Whether an import failed the way a bad or unsupported model may; anything else means
// the importer itself went wrong.
bool expected_failure(plugrt::Error code) {
  return code == plugrt::Error::kInvalidArgument || code == plugrt::Error::kNotSupported ||
         code == plugrt::Error::kMemoryAllocationFailed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ImportOptions options;
  InputShapeProblem problem;
  options.input_shape_problem = &problem;
  for (;;) {
    problem = InputShapeProblem();
    plugrt::Result<plugrt::compiler::ImportedModel> model =
        plugrt::compiler::import_onnx_bytes(plugrt::Span<const uint8_t>(data, size), "fuzz.onnx", options);
    if (!model.is_ok()) {
      if (!expected_failure(model.code())) std::abort();
      const bool named_symbol = problem.kind == InputShapeProblem::Kind::kShapeNeeded && !problem.symbol.empty();
      if (!named_symbol || options.dims.count(problem.symbol) != 0 || options.dims.size() == kMaxBoundedSymbols) {
        return 0;
      }
      options.dims[problem.symbol] = bounds_for(data, size, options.dims.size());
      continue;
    }
    // What the importer writes is what every backend reads: it must be a valid graph
    // (one whose dimensions vary is checked at their bounds).
    const std::vector<uint8_t>& graph = model->graph;
    if (!plugrt::portable_node_support(plugrt::Span<const uint8_t>(graph.data(), graph.size())).is_ok()) {
      std::abort();
    }
    return 0;
  }
}
