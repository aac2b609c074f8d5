#include "aot/onednn_aot.h"

#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "aot/lowering.h"

namespace plugrt::onednn {

namespace {

plugrt_status report(const plugrt_host_services* host, plugrt_status status, const std::string& message) {
  if (host != nullptr && host->report_error != nullptr) {
    host->report_error(host->context, status, plugrt_string{message.data(), message.size()});
  }
  return status;
}

void log(const plugrt_host_services* host, plugrt_log_level level, const std::string& message) {
  if (host != nullptr && host->log != nullptr) host->log(host->context, level, plugrt_string{message.data(), message.size()});
}

}  // namespace

plugrt_status partition(void*, const plugrt_host_services* host, plugrt_partition_args* args) {
  if (args == nullptr || args->struct_size < PLUGRT_PARTITION_ARGS_SIZE_1_0) {
    return report(host, PLUGRT_STATUS_INVALID_ARGUMENT, "partition arguments are missing or too old");
  }
  try {
    std::string error;
    std::optional<GraphView> graph = GraphView::open(args->graph, args->graph_size, &error);
    if (!graph) return report(host, PLUGRT_STATUS_INVALID_ARGUMENT, error);
    if (graph->num_nodes() != args->num_nodes || (args->num_nodes > 0 && args->node_taken == nullptr)) {
      return report(host, PLUGRT_STATUS_INVALID_ARGUMENT,
                    "num_nodes is " + std::to_string(args->num_nodes) + " but the graph has " +
                        std::to_string(graph->num_nodes()) + " nodes");
    }
    Lowering lowering(*graph);
    for (size_t n = 0; n < graph->num_nodes(); ++n) {
      const std::string why = lowering.add_node(n);
      args->node_taken[n] = why.empty() ? 1 : 0;
      if (!why.empty()) {
        const ir::Node& node = graph->node(n);
        log(host, PLUGRT_LOG_DEBUG,
            "onednn leaves " + node.op_type()->str() + " '" + (node.name() ? node.name()->str() : std::string()) +
                "': " + why);
      }
    }
    return PLUGRT_STATUS_OK;
  } catch (const std::bad_alloc&) {
    return report(host, PLUGRT_STATUS_MEMORY_ALLOCATION_FAILED, "out of memory while partitioning");
  } catch (const std::exception& e) {
    return report(host, PLUGRT_STATUS_INTERNAL, e.what());
  }
}

plugrt_status preprocess(void*, const plugrt_host_services* host, plugrt_preprocess_args* args) {
  if (args == nullptr || args->struct_size < PLUGRT_PREPROCESS_ARGS_SIZE_1_0) {
    return report(host, PLUGRT_STATUS_INVALID_ARGUMENT, "preprocess arguments are missing or too old");
  }
  if (host == nullptr || host->allocate == nullptr) {
    return report(host, PLUGRT_STATUS_INVALID_ARGUMENT, "preprocess needs the host's allocator");
  }
  try {
    std::string error;
    std::optional<GraphView> graph = GraphView::open(args->graph, args->graph_size, &error);
    if (!graph) return report(host, PLUGRT_STATUS_INVALID_ARGUMENT, error);
    Lowering lowering(*graph);
    if (std::string why = lowering.add_all_nodes(); !why.empty()) return report(host, PLUGRT_STATUS_NOT_SUPPORTED, why);
    std::vector<uint8_t> bytes = lowering.finish(&error);
    if (bytes.empty()) return report(host, PLUGRT_STATUS_INVALID_ARGUMENT, error);
    void* blob = host->allocate(host->context, bytes.size(), 64);
    if (blob == nullptr) return report(host, PLUGRT_STATUS_MEMORY_ALLOCATION_FAILED, "the host could not allocate the blob");
    std::memcpy(blob, bytes.data(), bytes.size());
    args->blob = blob;
    args->blob_size = bytes.size();
    return PLUGRT_STATUS_OK;
  } catch (const std::bad_alloc&) {
    return report(host, PLUGRT_STATUS_MEMORY_ALLOCATION_FAILED, "out of memory while lowering");
  } catch (const std::exception& e) {
    return report(host, PLUGRT_STATUS_INTERNAL, e.what());
  }
}

}  // namespace plugrt::onednn
