// SPDX-License-Identifier: Apache-2.0
// The oneDNN backend's ahead-of-time half: partition and preprocess (left out of an
// on-device build, PLUGRT_ONEDNN_AOT=OFF).
#include <string>

#include "aot/lowering.h"
#include "src/onednn_backend.h"

namespace plugrt::onednn {

sdk::Status OnednnBackend::partition(const sdk::PartitionRequest& request) {
  PLUGRT_SDK_ASSIGN_OR_RETURN(const GraphView graph, GraphView::open(request.graph, request.graph_size));
  Lowering lowering(graph);
  return sdk::take_nodes(request, graph, kName, [&](size_t n) { return lowering.add_node(n); });
}

sdk::Expected<std::vector<uint8_t>> OnednnBackend::preprocess(const sdk::PreprocessRequest& request) {
  PLUGRT_SDK_ASSIGN_OR_RETURN(const GraphView graph, GraphView::open(request.graph, request.graph_size));
  Lowering lowering(graph);
  if (std::string why = lowering.add_all_nodes(); !why.empty()) return sdk::Status::not_supported(why);
  lowering.set_name_constants(request.constants_by_name_offered);
  std::string error;
  std::vector<uint8_t> bytes = lowering.finish(&error);
  if (bytes.empty()) return sdk::Status::invalid_argument(error);
  if (lowering.names_constants()) request.name_constants();
  return bytes;
}

}  // namespace plugrt::onednn
