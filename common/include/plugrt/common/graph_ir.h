// SPDX-License-Identifier: Apache-2.0
/// \file graph_ir.h
/// Reading the graph IR: a FlatBuffer of the schema plugrt/schema/graph_ir.fbs, what a
/// backend's partition and preprocess receive and what the host checks before handing it
/// over. Needs FlatBuffers' headers (header-only use: nothing of FlatBuffers is linked):
/// plugrt::schema in the tree, plugrt::sdk_graph installed. The SDK wraps verified_graph()
/// as sdk::read_graph() (plugrt/sdk/graph.h), which returns an Expected, and names the
/// rest here as plugrt::sdk::has_symbols, ...
///
/// verified_graph() runs the FlatBuffers verifier and checks the alignment of 8-byte
/// vectors, so every offset is in bounds and every element aligned afterwards;
/// indices into values() still need checking (value_at() does it).
#ifndef PLUGRT_COMMON_GRAPH_IR_H_
#define PLUGRT_COMMON_GRAPH_IR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugrt/common/symbol_binder.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::common {

namespace graph_detail {

template <typename T>
bool elements_aligned(const flatbuffers::Vector<T>* vector) {
  return vector == nullptr || vector->size() == 0 || reinterpret_cast<uintptr_t>(vector->Data()) % alignof(T) == 0;
}

/// The FlatBuffers verifier checks the alignment of a vector's length, not of its
/// elements, so a crafted buffer (or one at an odd address) can misalign the 8-byte
/// elements of shapes, dimension expressions and integer attributes, which are then
/// read misaligned.
inline bool int64_vectors_aligned(const ir::Graph& graph) {
  if (graph.values() != nullptr) {
    for (const ir::Value* value : *graph.values()) {
      if (!elements_aligned(value->shape())) return false;
      if (value->dims() == nullptr) continue;
      for (const ir::Dim* dim : *value->dims()) {
        if (!elements_aligned(dim->words())) return false;
      }
    }
  }
  if (graph.nodes() != nullptr) {
    for (const ir::Node* node : *graph.nodes()) {
      if (node->attributes() == nullptr) continue;
      for (const ir::Attribute* attribute : *node->attributes()) {
        if (!elements_aligned(attribute->ints())) return false;
      }
    }
  }
  return true;
}

}  // namespace graph_detail

/// The verified root of a graph IR buffer, valid as long as the buffer; nullptr when the
/// buffer is not a graph IR flatbuffer, or when its 8-byte vectors are misaligned in
/// memory, with `error` (when given) saying which.
inline const ir::Graph* verified_graph(const void* data, size_t size, std::string_view* error = nullptr) {
  const auto refuse = [error](std::string_view why) -> const ir::Graph* {
    if (error != nullptr) *error = why;
    return nullptr;
  };
  if (data == nullptr || size < 8) return refuse("the graph buffer is empty or too small");
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (!flatbuffers::BufferHasIdentifier(bytes, ir::GraphIdentifier())) {
    return refuse("the buffer is not a plugrt graph IR (identifier is not PRTG)");
  }
  flatbuffers::Verifier verifier(bytes, size);
  if (!ir::VerifyGraphBuffer(verifier)) return refuse("the graph IR buffer failed verification");
  const ir::Graph* graph = ir::GetGraph(bytes);
  if (!graph_detail::int64_vectors_aligned(*graph)) return refuse("the graph IR buffer has misaligned 8-byte vectors");
  return graph;
}

/// Whether a graph IR buffer has symbols (version 2: dimensions that vary); false for a
/// buffer verified_graph refuses.
inline bool has_symbols(const void* data, size_t size) {
  const ir::Graph* graph = verified_graph(data, size);
  return graph != nullptr && graph->symbols() != nullptr && graph->symbols()->size() > 0;
}

inline size_t num_nodes(const ir::Graph& graph) { return graph.nodes() == nullptr ? 0 : graph.nodes()->size(); }
inline size_t num_values(const ir::Graph& graph) { return graph.values() == nullptr ? 0 : graph.values()->size(); }

/// Value `index` of the graph, or nullptr when the index is out of range.
inline const ir::Value* value_at(const ir::Graph& graph, int32_t index) {
  if (index < 0 || graph.values() == nullptr || static_cast<size_t>(index) >= graph.values()->size()) return nullptr;
  return graph.values()->Get(static_cast<flatbuffers::uoffset_t>(index));
}

/// A value's shape (empty for a scalar).
inline std::vector<int64_t> shape_of(const ir::Value& value) {
  if (value.shape() == nullptr) return {};
  return {value.shape()->begin(), value.shape()->end()};
}

/// The indices in a node's or graph's index list, or none.
inline std::vector<int32_t> indices(const flatbuffers::Vector<int32_t>* list) {
  if (list == nullptr) return {};
  return {list->begin(), list->end()};
}

/// Per symbol: some value's dimensions use it, but no input dimension is its size (its
/// expression the symbol alone), so that a call's input shapes cannot give its value;
/// only the values the host passes with the call can (ABI 1.6). A symbol nothing uses
/// needs no input.
inline std::vector<bool> unbound_symbols(const ir::Graph& graph) {
  const size_t count = graph.symbols() != nullptr ? graph.symbols()->size() : 0;
  std::vector<bool> used(count, false), given(count, false);
  for (size_t v = 0; v < num_values(graph); ++v) {
    const ir::Value* value = value_at(graph, static_cast<int32_t>(v));
    if (value->dims() == nullptr) continue;
    for (const ir::Dim* dim : *value->dims()) {
      if (dim->words() == nullptr) continue;
      for (int64_t word : *dim->words()) {
        const int64_t symbol = dim_word_operand(word);
        if (dim_word_op(word) == DimOp::kSymbol && symbol >= 0 && static_cast<size_t>(symbol) < count) {
          used[static_cast<size_t>(symbol)] = true;
        }
      }
    }
  }
  for (int32_t input : indices(graph.inputs())) {
    const ir::Value* value = value_at(graph, input);
    if (value == nullptr || value->dims() == nullptr) continue;
    for (const ir::Dim* dim : *value->dims()) {
      const int64_t symbol = dim->words() != nullptr ? sole_symbol(dim->words()->data(), dim->words()->size()) : -1;
      if (symbol >= 0 && static_cast<size_t>(symbol) < count) given[static_cast<size_t>(symbol)] = true;
    }
  }
  for (size_t k = 0; k < count; ++k) used[k] = used[k] && !given[k];
  return used;
}

/// The first of unbound_symbols(); -1 when there is none.
inline int64_t unbound_symbol(const ir::Graph& graph) {
  const std::vector<bool> unbound = unbound_symbols(graph);
  for (size_t k = 0; k < unbound.size(); ++k) {
    if (unbound[k]) return static_cast<int64_t>(k);
  }
  return -1;
}

/// A binder for a graph whose dimensions vary: its symbols with their ranges, and its
/// inputs with their bounds and dimension expressions, in order. The graph must be
/// verified (verified_graph) and every input index valid.
inline SymbolBinder symbol_binder_for(const ir::Graph& graph) {
  SymbolBinder binder;
  if (graph.symbols() != nullptr) {
    for (const ir::Symbol* symbol : *graph.symbols()) {
      binder.add_symbol(symbol->name() != nullptr ? symbol->name()->str() : std::string(),
                        {symbol->min(), symbol->max()});
    }
  }
  for (int32_t input : indices(graph.inputs())) {
    const ir::Value& value = *value_at(graph, input);
    std::vector<std::vector<int64_t>> dims;
    if (value.dims() != nullptr) {
      for (const ir::Dim* dim : *value.dims()) {
        dims.emplace_back(dim->words() != nullptr ? std::vector<int64_t>(dim->words()->begin(), dim->words()->end())
                                                  : std::vector<int64_t>());
      }
    }
    binder.add_input(value.name() != nullptr ? value.name()->str() : std::string(), shape_of(value), std::move(dims));
  }
  const std::vector<bool> unbound = unbound_symbols(graph);
  for (size_t s = 0; s < unbound.size(); ++s) {
    if (unbound[s]) binder.needs_host_value(s);
  }
  return binder;
}

}  // namespace plugrt::common

#endif  // PLUGRT_COMMON_GRAPH_IR_H_
