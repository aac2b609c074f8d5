// SPDX-License-Identifier: Apache-2.0
#include "dynamic_graph.h"

#include <algorithm>
#include <cstdio>

#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::portable {

bool has_symbols(const void* data, size_t size) {
  if (data == nullptr || size < 8 || !ir::GraphBufferHasIdentifier(data)) return false;
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data), size);
  if (!ir::VerifyGraphBuffer(verifier)) return false;
  const ir::Graph* graph = ir::GetGraph(data);
  return graph->symbols() != nullptr && graph->symbols()->size() > 0;
}

std::unique_ptr<DynamicGraph> DynamicGraph::create(const void* data, size_t size, std::string* error,
                                                   CompileFailure* failure) {
  // Compiling at the upper bounds checks the whole graph, expressions included, and
  // that every kernel takes it; the result is kept as the first specialization.
  std::unique_ptr<CompiledGraph> at_bounds = CompiledGraph::compile(data, size, error, failure);
  if (at_bounds == nullptr) return nullptr;
  std::unique_ptr<DynamicGraph> dynamic(new DynamicGraph());
  dynamic->data_ = data;
  dynamic->size_ = size;
  const ir::Graph& graph = *ir::GetGraph(data);
  for (const ir::Symbol* symbol : *graph.symbols()) {
    dynamic->symbol_names_.push_back(symbol->name()->str());
    dynamic->symbol_ranges_.push_back({symbol->min(), symbol->max()});
    dynamic->symbol_values_.push_back(symbol->max());
  }
  if (graph.inputs() != nullptr) {
    for (int32_t v : *graph.inputs()) {
      const ir::Value* value = graph.values()->Get(static_cast<flatbuffers::uoffset_t>(v));
      InputDims dims;
      if (value->name() != nullptr) dims.name = value->name()->str();
      if (value->shape() != nullptr) dims.bounds.assign(value->shape()->begin(), value->shape()->end());
      dims.symbol.assign(dims.bounds.size(), -1);
      dims.varying.resize(dims.bounds.size());
      for (size_t axis = 0; value->dims() != nullptr && axis < dims.bounds.size(); ++axis) {
        const ir::Dim* dim = value->dims()->Get(static_cast<flatbuffers::uoffset_t>(axis));
        dims.symbol[axis] = input_symbol(*dim);
        if (dim->words() != nullptr) dims.varying[axis].assign(dim->words()->begin(), dim->words()->end());
      }
      dynamic->inputs_.push_back(std::move(dims));
    }
  }
  dynamic->compiled_.push_back(Specialization{dynamic->symbol_values_, std::move(at_bounds), 0});
  return dynamic;
}

bool DynamicGraph::bind_symbols(const DLTensor* const* inputs, size_t num_inputs, char* error, size_t error_capacity) {
  if (num_inputs != inputs_.size()) {
    std::snprintf(error, error_capacity, "expected %zu inputs, got %zu", inputs_.size(), num_inputs);
    return false;
  }
  // First pass: each symbol's value from the dimension that is its size.
  std::fill(symbol_values_.begin(), symbol_values_.end(), -1);
  for (size_t k = 0; k < num_inputs; ++k) {
    const InputDims& dims = inputs_[k];
    const DLTensor* tensor = inputs[k];
    if (tensor == nullptr || tensor->ndim != static_cast<int32_t>(dims.bounds.size()) ||
        (tensor->ndim > 0 && tensor->shape == nullptr)) {
      std::snprintf(error, error_capacity, "input %zu ('%s') has rank %d; the graph takes rank %zu", k,
                    dims.name.c_str(), tensor == nullptr ? -1 : tensor->ndim, dims.bounds.size());
      return false;
    }
    for (size_t axis = 0; axis < dims.bounds.size(); ++axis) {
      const int64_t symbol = dims.symbol[axis];
      if (symbol < 0) continue;
      const int64_t given = tensor->shape[axis];
      const auto s = static_cast<size_t>(symbol);
      const sdk::DimRange& range = symbol_ranges_[s];
      if (!range.contains(given)) {
        std::snprintf(error, error_capacity, "input %zu ('%s') dimension %zu is %lld, %s %lld, the %s '%s' may be", k,
                      dims.name.c_str(), axis, static_cast<long long>(given), given > range.max ? "above" : "below",
                      static_cast<long long>(given > range.max ? range.max : range.min),
                      given > range.max ? "largest" : "smallest", symbol_names_[s].c_str());
        return false;
      }
      if (symbol_values_[s] >= 0 && symbol_values_[s] != given) {
        std::snprintf(error, error_capacity, "input %zu ('%s') dimension %zu is %lld, but '%s' is %lld elsewhere", k,
                      dims.name.c_str(), axis, static_cast<long long>(given), symbol_names_[s].c_str(),
                      static_cast<long long>(symbol_values_[s]));
        return false;
      }
      symbol_values_[s] = given;
    }
  }
  // Second pass: every other dimension must be what the symbols make it.
  for (size_t k = 0; k < num_inputs; ++k) {
    const InputDims& dims = inputs_[k];
    for (size_t axis = 0; axis < dims.bounds.size(); ++axis) {
      if (dims.symbol[axis] >= 0) continue;
      const std::vector<int64_t>& words = dims.varying[axis];
      int64_t expected = dims.bounds[axis];
      if (!words.empty()) (void)sdk::evaluate_dim_expr(words.data(), words.size(), symbol_values_.data(), &expected);
      if (inputs[k]->shape[axis] != expected) {
        std::snprintf(error, error_capacity, "input %zu ('%s') dimension %zu is %lld; the graph takes %lld%s%s", k,
                      dims.name.c_str(), axis, static_cast<long long>(inputs[k]->shape[axis]),
                      static_cast<long long>(expected), words.empty() ? "" : " = ",
                      words.empty() ? "" : sdk::DimExpr::from_words(words).to_string(symbol_names_).c_str());
        return false;
      }
    }
  }
  return true;
}

CompiledGraph* DynamicGraph::specialization(char* error, size_t error_capacity) {
  for (Specialization& kept : compiled_) {
    if (kept.symbol_values == symbol_values_) {
      kept.last_use = calls_;
      return kept.graph.get();
    }
  }
  std::string why;
  CompileFailure failure = CompileFailure::kInvalid;
  std::unique_ptr<CompiledGraph> graph = CompiledGraph::compile(data_, size_, &why, &failure, symbol_values_.data());
  if (graph == nullptr) {
    std::string at;
    for (size_t s = 0; s < symbol_values_.size(); ++s) {
      at += (s == 0 ? "" : ", ") + symbol_names_[s] + "=" + std::to_string(symbol_values_[s]);
    }
    std::snprintf(error, error_capacity, "at %s: %s", at.c_str(), why.c_str());
    return nullptr;
  }
  if (compiled_.size() == kMaxSpecializations) {
    compiled_.erase(
        std::min_element(compiled_.begin(), compiled_.end(),
                         [](const Specialization& a, const Specialization& b) { return a.last_use < b.last_use; }));
  }
  compiled_.push_back(Specialization{symbol_values_, std::move(graph), calls_});
  return compiled_.back().graph.get();
}

bool DynamicGraph::run(const DLTensor* const* inputs, size_t num_inputs, const DLTensor* const* outputs,
                       size_t num_outputs, char* error, size_t error_capacity) {
  ++calls_;
  if (!bind_symbols(inputs, num_inputs, error, error_capacity)) return false;
  CompiledGraph* graph = specialization(error, error_capacity);
  return graph != nullptr && graph->run(inputs, num_inputs, outputs, num_outputs, error, error_capacity);
}

}  // namespace plugrt::portable
