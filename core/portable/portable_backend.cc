#include "portable_backend.h"

#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "compiled_graph.h"

namespace plugrt::portable {

namespace {

/// One initialised delegate: the compiled graph and where to report its errors.
struct PortableDelegate {
  std::unique_ptr<CompiledGraph> graph;
  const plugrt_host_services* host;
};

void report(const plugrt_host_services* host, plugrt_status status, const std::string& message) {
  if (host != nullptr && host->report_error != nullptr) {
    host->report_error(host->context, status, plugrt_string{message.data(), message.size()});
  }
}

bool is_available(void*, const plugrt_host_services*, plugrt_text_buffer*) { return true; }

plugrt_status init(void*, const plugrt_host_services* host, const plugrt_init_args* args,
                   plugrt_delegate_handle* handle) {
  try {
    std::string error;
    CompileFailure failure = CompileFailure::kInvalid;
    std::unique_ptr<CompiledGraph> graph = CompiledGraph::compile(args->blob, args->blob_size, &error, &failure);
    if (graph == nullptr) {
      plugrt_status status = failure == CompileFailure::kIncompatible ? PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY
                             : failure == CompileFailure::kUnsupported ? PLUGRT_STATUS_NOT_SUPPORTED
                                                                        : PLUGRT_STATUS_INVALID_PROGRAM;
      report(host, status, error);
      return status;
    }
    auto* delegate = new PortableDelegate{std::move(graph), host};
    *handle = reinterpret_cast<plugrt_delegate_handle>(delegate);
    return PLUGRT_STATUS_OK;
  } catch (const std::bad_alloc&) {
    report(host, PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED, "out of memory while compiling the graph");
    return PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED;
  } catch (const std::exception& e) {
    report(host, PLUGRT_STATUS_INTERNAL, e.what());
    return PLUGRT_STATUS_INTERNAL;
  }
}

plugrt_status execute(plugrt_delegate_handle handle, const plugrt_execute_args* args) {
  auto* delegate = reinterpret_cast<PortableDelegate*>(handle);
  char error[256];
  if (!delegate->graph->run(args->inputs, args->num_inputs, args->outputs, args->num_outputs, error,
                            sizeof(error))) {
    if (delegate->host != nullptr && delegate->host->report_error != nullptr) {
      delegate->host->report_error(delegate->host->context, PLUGRT_STATUS_INVALID_ARGUMENT,
                                   plugrt_string{error, std::strlen(error)});
    }
    return PLUGRT_STATUS_INVALID_ARGUMENT;
  }
  return PLUGRT_STATUS_OK;
}

void destroy(plugrt_delegate_handle handle) { delete reinterpret_cast<PortableDelegate*>(handle); }

plugrt_status partition(void*, const plugrt_host_services* host, plugrt_partition_args* args) {
  try {
    std::string error;
    std::vector<std::string> reasons = node_support(args->graph, args->graph_size, &error);
    if (!error.empty()) {
      report(host, PLUGRT_STATUS_INVALID_ARGUMENT, error);
      return PLUGRT_STATUS_INVALID_ARGUMENT;
    }
    if (reasons.size() != args->num_nodes) {
      report(host, PLUGRT_STATUS_INVALID_ARGUMENT,
             "num_nodes is " + std::to_string(args->num_nodes) + " but the graph has " +
                 std::to_string(reasons.size()) + " nodes");
      return PLUGRT_STATUS_INVALID_ARGUMENT;
    }
    for (size_t n = 0; n < reasons.size(); ++n) args->node_taken[n] = reasons[n].empty() ? 1 : 0;
    return PLUGRT_STATUS_OK;
  } catch (const std::exception& e) {
    report(host, PLUGRT_STATUS_INTERNAL, e.what());
    return PLUGRT_STATUS_INTERNAL;
  }
}

/// The portable backend's blob is the graph IR itself, checked and copied.
plugrt_status preprocess(void*, const plugrt_host_services* host, plugrt_preprocess_args* args) {
  try {
    if (std::string why = verify_graph(args->graph, args->graph_size); !why.empty()) {
      report(host, PLUGRT_STATUS_INVALID_ARGUMENT, why);
      return PLUGRT_STATUS_INVALID_ARGUMENT;
    }
    void* blob = host->allocate(host->context, args->graph_size, 64);
    if (blob == nullptr) {
      report(host, PLUGRT_STATUS_MEMORY_ALLOCATION_FAILED, "the host could not allocate the blob");
      return PLUGRT_STATUS_MEMORY_ALLOCATION_FAILED;
    }
    std::memcpy(blob, args->graph, args->graph_size);
    args->blob = blob;
    args->blob_size = args->graph_size;
    return PLUGRT_STATUS_OK;
  } catch (const std::exception& e) {
    report(host, PLUGRT_STATUS_INTERNAL, e.what());
    return PLUGRT_STATUS_INTERNAL;
  }
}

constexpr char kDescription[] = "reference kernels for every op plugrt imports; float32, and int64 for indices";

const plugrt_aot_backend kAotTable = {PLUGRT_AOT_BACKEND_SIZE, partition, preprocess};

const plugrt_backend kBackendTable = {
    PLUGRT_BACKEND_SIZE,
    {kBackendName, sizeof(kBackendName) - 1},
    0,  // one handle runs one call at a time: its arena is shared by its calls
    nullptr,
    is_available,
    init,
    execute,
    destroy,
    &kAotTable,
    {kDescription, sizeof(kDescription) - 1},
};

const plugrt_backend* const kBackends[] = {&kBackendTable};

}  // namespace

const plugrt_plugin_descriptor* plugin_descriptor(const char* plugin_version) {
  static const plugrt_plugin_descriptor descriptor = {
      PLUGRT_PLUGIN_DESCRIPTOR_SIZE,
      PLUGRT_ABI_MAJOR,
      PLUGRT_ABI_MINOR,
      {kBackendName, sizeof(kBackendName) - 1},
      {plugin_version, std::strlen(plugin_version)},
      kBackends,
      1,
  };
  return &descriptor;
}

}  // namespace plugrt::portable
