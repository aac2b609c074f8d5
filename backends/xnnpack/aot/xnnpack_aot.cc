// SPDX-License-Identifier: Apache-2.0
// The XNNPACK backend's ahead-of-time half: partition and preprocess (left out of an
// on-device build, PLUGRT_XNNPACK_AOT=OFF).
#include <string>

#include "aot/lowering.h"
#include "plugrt/sdk/per_shape.h"
#include "src/blob_format.h"
#include "src/xnnpack_backend.h"

namespace plugrt::xnnpack {

sdk::Status XnnpackBackend::partition(const sdk::PartitionRequest& request) {
  // A graph whose dimensions vary is judged at the symbols' upper bounds.
  const std::vector<int64_t> maxima = sdk::symbol_maxima(request.graph, request.graph_size);
  PLUGRT_SDK_ASSIGN_OR_RETURN(const GraphView graph,
                              GraphView::open(request.graph, request.graph_size, sdk::values_or_null(maxima)));
  Lowering lowering(graph);
  return sdk::take_nodes(request, graph, kName, [&](size_t n) { return lowering.add_node(n); });
}

sdk::Expected<std::vector<uint8_t>> XnnpackBackend::preprocess(const sdk::PreprocessRequest& request) {
  // Dimensions that vary: checked at the upper bounds and kept as the graph, unless
  // sdk::PerShapeDelegate asks for the static blob at one call's values.
  const std::vector<int64_t> maxima = sdk::symbol_maxima(request.graph, request.graph_size);
  const int64_t* values = request.symbol_values != nullptr ? request.symbol_values : sdk::values_or_null(maxima);
  PLUGRT_SDK_ASSIGN_OR_RETURN(const GraphView graph, GraphView::open(request.graph, request.graph_size, values));
  Lowering lowering(graph);
  for (size_t n = 0; n < graph.num_nodes(); ++n) {
    if (std::string why = lowering.add_node(n); !why.empty()) {
      const ir::Node& node = graph.node(n);
      return sdk::Status::not_supported("xnnpack cannot lower " + node.op_type()->str() + " '" +
                                        (node.name() != nullptr ? node.name()->str() : std::string()) + "': " + why);
    }
  }
  if (!maxima.empty() && request.symbol_values == nullptr) {
    return sdk::PerShapeDelegate::write_blob(kVaryingBlobFormat, request);
  }
  std::string error;
  std::vector<uint8_t> bytes = lowering.finish(&error);
  if (bytes.empty()) return sdk::Status::invalid_argument(error);
  return bytes;
}

}  // namespace plugrt::xnnpack
