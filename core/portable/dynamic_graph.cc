// SPDX-License-Identifier: Apache-2.0
#include "dynamic_graph.h"

#include <algorithm>
#include <cstdio>

#include "plugrt/sdk/graph.h"

namespace plugrt::portable {

std::unique_ptr<DynamicGraph> DynamicGraph::create(const void* data, size_t size, std::string* error,
                                                   CompileFailure* failure) {
  // Compiling at the upper bounds checks the whole graph, expressions included, and
  // that every kernel takes it; the result is kept as the first specialization.
  std::unique_ptr<CompiledGraph> at_bounds = CompiledGraph::compile(data, size, error, failure);
  if (at_bounds == nullptr) return nullptr;
  std::unique_ptr<DynamicGraph> dynamic(new DynamicGraph());
  dynamic->data_ = data;
  dynamic->size_ = size;
  dynamic->symbols_ = sdk::symbol_binder_for(*ir::GetGraph(data));
  dynamic->compiled_.push_back(Specialization{dynamic->symbols_.values(), std::move(at_bounds), 0});
  return dynamic;
}

CompiledGraph* DynamicGraph::specialization(char* error, size_t error_capacity) {
  const std::vector<int64_t>& values = symbols_.values();
  for (Specialization& kept : compiled_) {
    if (kept.symbol_values == values) {
      kept.last_use = calls_;
      return kept.graph.get();
    }
  }
  std::string why;
  CompileFailure failure = CompileFailure::kInvalid;
  std::unique_ptr<CompiledGraph> graph = CompiledGraph::compile(data_, size_, &why, &failure, values.data());
  if (graph == nullptr) {
    std::string at;
    for (size_t s = 0; s < values.size(); ++s) {
      at += (s == 0 ? "" : ", ") + symbols_.names()[s] + "=" + std::to_string(values[s]);
    }
    std::snprintf(error, error_capacity, "at %s: %s", at.c_str(), why.c_str());
    return nullptr;
  }
  if (compiled_.size() == kMaxSpecializations) {
    compiled_.erase(
        std::min_element(compiled_.begin(), compiled_.end(),
                         [](const Specialization& a, const Specialization& b) { return a.last_use < b.last_use; }));
  }
  compiled_.push_back(Specialization{values, std::move(graph), calls_});
  return compiled_.back().graph.get();
}

bool DynamicGraph::run(const DLTensor* const* inputs, size_t num_inputs, const DLTensor* const* outputs,
                       size_t num_outputs, const int64_t* values, size_t num_values, char* error,
                       size_t error_capacity) {
  ++calls_;
  if (!symbols_.bind(inputs, num_inputs, values, num_values, error, error_capacity)) return false;
  CompiledGraph* graph = specialization(error, error_capacity);
  return graph != nullptr && graph->run(inputs, num_inputs, outputs, num_outputs, error, error_capacity);
}

}  // namespace plugrt::portable
