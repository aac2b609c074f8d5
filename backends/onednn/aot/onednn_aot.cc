// SPDX-License-Identifier: Apache-2.0
// The oneDNN backend's ahead-of-time half: partition and preprocess (left out of an
// on-device build, PLUGRT_ONEDNN_AOT=OFF).
#include <string>

#include "aot/lowering.h"
#include "aot/varying_delegate.h"
#include "plugrt/sdk/graph.h"
#include "src/onednn_backend.h"

namespace plugrt::onednn {

namespace {

/// Each symbol's upper bound, for judging a graph whose dimensions vary; empty for one
/// without symbols (or an invalid buffer, which GraphView::open refuses).
std::vector<int64_t> symbol_maxima(const void* data, size_t size) {
  std::vector<int64_t> maxima;
  sdk::Expected<const ir::Graph*> graph = sdk::read_graph(data, size);
  if (graph.is_ok() && (*graph)->symbols() != nullptr) {
    for (const ir::Symbol* symbol : *(*graph)->symbols()) maxima.push_back(symbol->max());
  }
  return maxima;
}

/// Why not every symbol of a graph is the size of one of its input dimensions (so that a
/// call's input shapes give its value); empty when each is.
std::string unbound_symbol(const ir::Graph& graph) {
  const size_t count = graph.symbols()->size();
  std::vector<bool> bound(count, false);
  for (size_t k = 0; graph.inputs() != nullptr && k < graph.inputs()->size(); ++k) {
    const ir::Value* value = sdk::value_at(graph, graph.inputs()->Get(static_cast<flatbuffers::uoffset_t>(k)));
    if (value == nullptr || value->dims() == nullptr) continue;
    for (const ir::Dim* dim : *value->dims()) {
      const int64_t symbol =
          dim->words() != nullptr ? sdk::sole_symbol(dim->words()->data(), dim->words()->size()) : -1;
      if (symbol >= 0 && static_cast<size_t>(symbol) < count) bound[static_cast<size_t>(symbol)] = true;
    }
  }
  for (size_t k = 0; k < count; ++k) {
    if (!bound[k]) {
      return "symbol '" + graph.symbols()->Get(static_cast<flatbuffers::uoffset_t>(k))->name()->str() +
             "' is the size of no input dimension of this partition";
    }
  }
  return {};
}

}  // namespace

sdk::Status OnednnBackend::partition(const sdk::PartitionRequest& request) {
  const std::vector<int64_t> maxima = symbol_maxima(request.graph, request.graph_size);
  PLUGRT_SDK_ASSIGN_OR_RETURN(const GraphView graph, GraphView::open(request.graph, request.graph_size,
                                                                     maxima.empty() ? nullptr : maxima.data()));
  Lowering lowering(graph);
  return sdk::take_nodes(request, graph, kName, [&](size_t n) { return lowering.add_node(n); });
}

sdk::Expected<std::vector<uint8_t>> OnednnBackend::preprocess(const sdk::PreprocessRequest& request) {
  const std::vector<int64_t> maxima = symbol_maxima(request.graph, request.graph_size);
  PLUGRT_SDK_ASSIGN_OR_RETURN(const GraphView graph, GraphView::open(request.graph, request.graph_size,
                                                                     maxima.empty() ? nullptr : maxima.data()));
  Lowering lowering(graph);
  if (std::string why = lowering.add_all_nodes(); !why.empty()) return sdk::Status::not_supported(why);
  if (!maxima.empty()) {  // lowered per shape at run time, from the graph itself
    if (std::string why = unbound_symbol(graph.graph()); !why.empty()) return sdk::Status::not_supported(why);
    return write_varying_blob(request.graph, request.graph_size);
  }
  lowering.set_name_constants(request.constants_by_name_offered);
  std::string error;
  std::vector<uint8_t> bytes = lowering.finish(&error);
  if (bytes.empty()) return sdk::Status::invalid_argument(error);
  if (lowering.names_constants()) request.name_constants();
  return bytes;
}

}  // namespace plugrt::onednn
