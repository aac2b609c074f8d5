// SPDX-License-Identifier: Apache-2.0
// The oneDNN backend's ahead-of-time half: partition and preprocess (left out of an
// on-device build, PLUGRT_ONEDNN_AOT=OFF).
#include <string>

#include "aot/lowering.h"
#include "plugrt/sdk/per_shape.h"
#include "src/blob_format.h"
#include "src/onednn_backend.h"

namespace plugrt::onednn {

sdk::Status OnednnBackend::partition(const sdk::PartitionRequest& request) {
  // A graph whose dimensions vary is judged at the symbols' upper bounds.
  const std::vector<int64_t> maxima = sdk::symbol_maxima(request.graph, request.graph_size);
  PLUGRT_SDK_ASSIGN_OR_RETURN(const GraphView graph,
                              GraphView::open(request.graph, request.graph_size, sdk::values_or_null(maxima)));
  Lowering lowering(graph);
  return sdk::take_nodes(request, graph, kName, [&](size_t n) { return lowering.add_node(n); });
}

sdk::Expected<std::vector<uint8_t>> OnednnBackend::preprocess(const sdk::PreprocessRequest& request) {
  // Dimensions that vary: checked at the upper bounds and kept as the graph, unless
  // sdk::PerShapeDelegate asks for the static blob at one call's values.
  const std::vector<int64_t> maxima = sdk::symbol_maxima(request.graph, request.graph_size);
  const int64_t* values = request.symbol_values != nullptr ? request.symbol_values : sdk::values_or_null(maxima);
  PLUGRT_SDK_ASSIGN_OR_RETURN(const GraphView graph, GraphView::open(request.graph, request.graph_size, values));
  Lowering lowering(graph);
  if (std::string why = lowering.add_all_nodes(); !why.empty()) return sdk::Status::not_supported(why);
  if (!maxima.empty() && request.symbol_values == nullptr) {
    return sdk::PerShapeDelegate::write_blob(kVaryingBlobFormat, request);
  }
  lowering.set_name_constants(request.constants_by_name_offered);
  std::string error;
  std::vector<uint8_t> bytes = lowering.finish(&error);
  if (bytes.empty()) return sdk::Status::invalid_argument(error);
  if (lowering.names_constants()) request.name_constants();
  return bytes;
}

}  // namespace plugrt::onednn
