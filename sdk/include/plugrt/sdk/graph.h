// SPDX-License-Identifier: Apache-2.0
/// \file graph.h
/// Reading the graph IR that partition and preprocess receive: a FlatBuffer of the schema
/// plugrt/schema/graph_ir.fbs (installed with the SDK). Link plugrt::sdk_graph, which
/// adds FlatBuffers' headers (header-only use: nothing of FlatBuffers is linked).
///
///   PLUGRT_SDK_ASSIGN_OR_RETURN(const plugrt::ir::Graph* graph,
///                               sdk::read_graph(request.graph, request.graph_size));
///   for (const plugrt::ir::Node* node : *graph->nodes()) { ... node->op_type()->str() ... }
///
/// read_graph() runs the FlatBuffers verifier and checks the alignment of 8-byte vectors,
/// so every offset is in bounds and every element aligned afterwards;
/// indices into values() still need checking (value_at() does it). The host reads the
/// graph IR with the same code (plugrt/common/graph_ir.h); this header gives it the SDK's
/// names and errors.
#ifndef PLUGRT_SDK_GRAPH_H_
#define PLUGRT_SDK_GRAPH_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "plugrt/common/graph_ir.h"
#include "plugrt/sdk/status.h"
#include "plugrt/sdk/symbol_binder.h"

namespace plugrt::sdk {

/// The verified root of a graph IR buffer, valid as long as the buffer.
/// Errors: InvalidArgument when the buffer is not a graph IR flatbuffer, or when its
/// 8-byte vectors are misaligned in memory.
inline Expected<const ir::Graph*> read_graph(const void* data, size_t size) {
  std::string_view error;
  const ir::Graph* graph = common::verified_graph(data, size, &error);
  if (graph == nullptr) return Status::invalid_argument(std::string(error));
  return graph;
}

/// Whether a graph IR buffer has symbols (version 2: dimensions that vary); false for a
/// buffer read_graph refuses.
using common::has_symbols;
using common::indices;
using common::num_nodes;
using common::num_values;
using common::shape_of;
using common::value_at;
/// Per symbol: whether only the values the host passes with a call can give its value
/// (ABI 1.6); unbound_symbol() is the first such, or -1.
using common::unbound_symbol;
using common::unbound_symbols;
/// A binder for a graph whose dimensions vary (the graph verified, its input indices valid).
using common::symbol_binder_for;

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_GRAPH_H_
