// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a graph IR buffer (core/schema/graph_ir.fbs) through everything that
// reads one: the SDK's reader (plugrt/sdk/graph.h), which backends use in partition and
// preprocess; the core's query of what the portable backend supports; and the portable
// backend itself, through its ABI table as the compiler and the executor call it:
// partition, preprocess, init on the blob that preprocess wrote (the graph IR is the
// portable backend's blob) and, for a small graph without subgraphs, execute on inputs
// made from the fuzz input's bytes, at the graph's bounds and, when it has symbols
// (ir_version 2), at each symbol's smallest value (a Loop runs as many iterations as its trip count
// says, which fuzzed bytes make huge; control flow runs in the unit tests). Must never
// crash, hang or read out of bounds; a bad graph is refused with a status.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "fuzz_host.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/dtype.h"
#include "plugrt/sdk/dim_expr.h"
#include "plugrt/sdk/graph.h"

extern "C" plugrt_status plugrt_static_entry_portable(const plugrt_host_services* host,
                                                      const plugrt_plugin_descriptor** descriptor);

namespace {

using plugrt::fuzz::FuzzHost;

/// Graphs with more elements than this, over all their values, are not executed: the
/// point is the kernels' checks, not their speed on large tensors.
constexpr uint64_t kMaxExecutedElements = uint64_t{1} << 14;

const plugrt_backend* portable_backend(FuzzHost& host) {
  static const plugrt_backend* backend = [&host] {
    const plugrt_plugin_descriptor* descriptor = nullptr;
    if (plugrt_static_entry_portable(&host.services, &descriptor) != PLUGRT_STATUS_OK) std::abort();
    const plugrt_backend* found = plugrt::fuzz::find_backend(descriptor, "portable", 8);
    if (found == nullptr || found->aot == nullptr) std::abort();
    return found;
  }();
  return backend;
}

/// Elements of a value's static shape; false when a dimension is negative or the count
/// passes `limit`.
bool element_count(const plugrt::ir::Value& value, uint64_t limit, uint64_t* count) {
  uint64_t n = 1;
  if (value.shape() != nullptr) {
    for (int64_t dim : *value.shape()) {
      if (dim < 0) return false;
      if (dim != 0 && n > limit / static_cast<uint64_t>(dim)) return false;
      n *= static_cast<uint64_t>(dim);
    }
  }
  *count = n;
  return n <= limit;
}

/// Graphs whose values hold more than this at their bounds are read, not compiled: an
/// arena of many gigabytes costs nothing until it is written, but AddressSanitizer's
/// shadow of it does, and the point is the checks, not allocating address space.
constexpr uint64_t kMaxCompiledBytes = uint64_t{256} << 20;

/// Whether the graph's values, at their bounds, hold at most kMaxCompiledBytes.
bool small_enough_to_compile(const plugrt::ir::Graph& graph) {
  uint64_t total = 0;
  for (size_t v = 0; v < plugrt::sdk::num_values(graph); ++v) {
    const plugrt::ir::Value* value = plugrt::sdk::value_at(graph, static_cast<int32_t>(v));
    uint64_t elements = 0;
    const uint64_t element_size = plugrt::dtype_size(static_cast<plugrt::DType>(value->dtype()));
    if (!element_count(*value, kMaxCompiledBytes, &elements) || elements * element_size > kMaxCompiledBytes - total) {
      return false;
    }
    total += elements * element_size;
  }
  return true;
}

/// One host-owned tensor for execute: its shape, and bytes filled from the fuzz input.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  DLTensor tensor{};
};

/// A value's shape when its graph's symbols take `symbol_values` (null: its bounds, the
/// shape as stored); false when a dimension's expression cannot be read.
bool shape_at(const plugrt::ir::Graph& graph, const plugrt::ir::Value& value, const int64_t* symbol_values,
              std::vector<int64_t>* shape) {
  *shape = plugrt::sdk::shape_of(value);
  if (symbol_values == nullptr || value.dims() == nullptr || value.dims()->size() != shape->size()) return true;
  const size_t num_symbols = graph.symbols() != nullptr ? graph.symbols()->size() : 0;
  for (size_t axis = 0; axis < shape->size(); ++axis) {
    const auto* words = value.dims()->Get(static_cast<flatbuffers::uoffset_t>(axis))->words();
    if (words == nullptr || words->size() == 0) continue;
    if (reinterpret_cast<uintptr_t>(words->Data()) % alignof(int64_t) != 0 ||
        !plugrt::sdk::check_dim_expr(words->data(), words->size(), num_symbols).empty() ||
        !plugrt::sdk::evaluate_dim_expr(words->data(), words->size(), symbol_values, &(*shape)[axis]) ||
        (*shape)[axis] < 0) {
      return false;
    }
  }
  return true;
}

/// Builds the tensors for a list of value indices, at `symbol_values` (see shape_at);
/// false when one cannot be made.
bool make_tensors(const plugrt::ir::Graph& graph, const flatbuffers::Vector<int32_t>* indices, const uint8_t* data,
                  size_t size, const int64_t* symbol_values, std::vector<HostTensor>* tensors) {
  if (indices == nullptr) return true;
  tensors->resize(indices->size());
  for (size_t i = 0; i < indices->size(); ++i) {
    const plugrt::ir::Value* value = plugrt::sdk::value_at(graph, indices->Get(static_cast<flatbuffers::uoffset_t>(i)));
    if (value == nullptr) return false;
    const auto dtype = static_cast<plugrt::DType>(value->dtype());
    const size_t element_size = plugrt::dtype_size(dtype);
    uint64_t elements = 0;
    if (element_size == 0 || !element_count(*value, kMaxExecutedElements, &elements)) return false;
    HostTensor& t = (*tensors)[i];
    if (!shape_at(graph, *value, symbol_values, &t.shape)) return false;
    uint64_t count = 1;  // at most the bound's count, in a graph the backend accepted
    for (int64_t dim : t.shape) {
      if (dim != 0 && count > elements / static_cast<uint64_t>(dim)) return false;
      count *= static_cast<uint64_t>(dim);
    }
    elements = count;
    t.bytes.resize(static_cast<size_t>(elements) * element_size);
    for (size_t b = 0; b < t.bytes.size(); ++b) t.bytes[b] = size == 0 ? 0 : data[b % size];
    t.tensor.data = t.bytes.empty() ? nullptr : t.bytes.data();
    t.tensor.device = {kDLCPU, 0};
    t.tensor.ndim = static_cast<int32_t>(t.shape.size());
    t.tensor.dtype = plugrt::to_dlpack(dtype);
    t.tensor.shape = t.shape.empty() ? nullptr : t.shape.data();
  }
  return true;
}

bool has_subgraphs(const plugrt::ir::Graph& graph) {
  if (graph.nodes() == nullptr) return false;
  for (const plugrt::ir::Node* node : *graph.nodes()) {
    if (node->attributes() == nullptr) continue;
    for (const plugrt::ir::Attribute* attribute : *node->attributes()) {
      if (attribute->kind() == plugrt::ir::AttributeKind::Graph) return true;
    }
  }
  return false;
}

/// Runs the initialised handle once when the graph is small enough and has no subgraphs.
void execute_small_graph(const plugrt_backend& backend, plugrt_delegate_handle handle, const plugrt::ir::Graph& graph,
                         const uint8_t* data, size_t size) {
  if (has_subgraphs(graph)) return;
  uint64_t total = 0;
  for (const plugrt::ir::Value* value : *graph.values()) {
    uint64_t elements = 0;
    if (!element_count(*value, kMaxExecutedElements, &elements)) return;
    total += elements;
    if (total > kMaxExecutedElements) return;
  }
  // At the bounds, then, for a graph with symbols, at each symbol's smallest value.
  std::vector<int64_t> smallest;
  if (graph.symbols() != nullptr) {
    for (const plugrt::ir::Symbol* symbol : *graph.symbols()) smallest.push_back(symbol->min());
  }
  for (const int64_t* symbol_values : {static_cast<const int64_t*>(nullptr), std::as_const(smallest).data()}) {
    if (symbol_values != nullptr && smallest.empty()) break;
    std::vector<HostTensor> inputs;
    std::vector<HostTensor> outputs;
    if (!make_tensors(graph, graph.inputs(), data, size, symbol_values, &inputs)) return;
    if (!make_tensors(graph, graph.outputs(), data, size, symbol_values, &outputs)) return;
    std::vector<const DLTensor*> input_views;
    std::vector<const DLTensor*> output_views;
    for (const HostTensor& t : inputs) input_views.push_back(&t.tensor);
    for (const HostTensor& t : outputs) output_views.push_back(&t.tensor);
    plugrt_execute_args args{};
    args.struct_size = PLUGRT_EXECUTE_ARGS_SIZE;
    args.inputs = input_views.data();
    args.num_inputs = input_views.size();
    args.outputs = output_views.data();
    args.num_outputs = output_views.size();
    (void)backend.execute(handle, &args);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FuzzHost host;
  const plugrt_backend* portable = portable_backend(host);

  // The SDK's reader: the verifier, then the helpers a backend walks the graph with.
  plugrt::sdk::Expected<const plugrt::ir::Graph*> read = plugrt::sdk::read_graph(data, size);
  if (read.is_ok() && !small_enough_to_compile(**read)) return 0;
  // The core's question to the portable backend, which must agree with the reader on
  // what is a graph at all.
  plugrt::Result<std::vector<std::string>> support =
      plugrt::portable_node_support(plugrt::Span<const uint8_t>(data, size));
  if (!read.is_ok()) {
    if (support.is_ok()) std::abort();  // the portable backend took what the verifier refused
    return 0;
  }
  const plugrt::ir::Graph& graph = **read;
  const size_t num_nodes = plugrt::sdk::num_nodes(graph);
  if (graph.nodes() != nullptr) {
    for (const plugrt::ir::Node* node : *graph.nodes()) {
      for (int32_t index : plugrt::sdk::indices(node->inputs())) {
        if (const plugrt::ir::Value* value = plugrt::sdk::value_at(graph, index)) (void)plugrt::sdk::shape_of(*value);
      }
      (void)plugrt::sdk::indices(node->outputs());
    }
  }

  // partition and preprocess, as the compiler calls them.
  std::vector<uint8_t> taken(num_nodes, 0);
  plugrt_partition_args partition{};
  partition.struct_size = PLUGRT_PARTITION_ARGS_SIZE;
  partition.graph = data;
  partition.graph_size = size;
  partition.node_taken = taken.data();
  partition.num_nodes = num_nodes;
  (void)portable->aot->partition(portable->context, &host.services, &partition);

  plugrt_preprocess_args preprocess{};
  preprocess.struct_size = PLUGRT_PREPROCESS_ARGS_SIZE;
  preprocess.graph = data;
  preprocess.graph_size = size;
  if (portable->aot->preprocess(portable->context, &host.services, &preprocess) != PLUGRT_STATUS_OK) return 0;

  // init on the blob preprocess wrote, then execute and destroy, as the executor does.
  plugrt_init_args init{};
  init.struct_size = PLUGRT_INIT_ARGS_SIZE;
  init.blob = preprocess.blob;
  init.blob_size = preprocess.blob_size;
  init.num_threads = 1;
  plugrt_delegate_handle handle = nullptr;
  if (portable->init(portable->context, &host.services, &init, &handle) == PLUGRT_STATUS_OK) {
    if (handle == nullptr) std::abort();
    execute_small_graph(*portable, handle, graph, data, size);
    portable->destroy(handle);
  }
  host.services.deallocate(host.services.context, preprocess.blob);
  if (host.live_blocks != 0) std::abort();  // the backend leaked a host allocation
  return 0;
}
