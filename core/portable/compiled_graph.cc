// SPDX-License-Identifier: Apache-2.0
#include "compiled_graph.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>

#include "plugrt/memory_planner.h"
#include "plugrt/schema/graph_ir_generated.h"
#include "plugrt/sdk/dim_expr.h"
#include "plugrt/sdk/graph.h"
#include "run_time_parameters.h"

namespace plugrt::portable {

namespace {

/// ir_version 1 graphs are static; 2 adds symbols and dimensions that vary.
constexpr uint32_t kMaxGraphIrVersion = 2;
constexpr size_t kAlignment = 64;
/// No single tensor may exceed this many bytes (2^40: far beyond any device, and far
/// from overflowing the products below).
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;
/// Nor may the arena: the values alive at once plus the largest kernel's scratch.
constexpr uint64_t kMaxArenaBytes = uint64_t{1} << 40;
/// A node whose inputs are all constants runs once, when the graph is compiled, if its
/// outputs take at most this many bytes: shape arithmetic (Shape, Gather, Concat feeding
/// a Reshape) becomes the constants the kernels after it need.
constexpr uint64_t kMaxFoldedBytes = uint64_t{64} << 10;

std::string describe_value(const ir::Graph& graph, size_t index) {
  const ir::Value* value = graph.values()->Get(static_cast<flatbuffers::uoffset_t>(index));
  std::string text = "value " + std::to_string(index);
  if (value != nullptr && value->name() != nullptr && value->name()->size() > 0) {
    text += " '" + value->name()->str() + "'";
  }
  return text;
}

/// The dimension of `axis` when it varies: checked, its range within [0, bound] for
/// the symbols' ranges, and its value for `symbol_values` (null: the bound). Sets
/// `*dim`; the reason on failure.
std::string read_varying_dim(const ir::Graph& graph, size_t index, size_t axis, const ir::Dim& entry, int64_t bound,
                             const std::vector<sdk::DimRange>& ranges, const int64_t* symbol_values, int64_t* dim) {
  const auto* words = entry.words();
  const std::string where = describe_value(graph, index) + " dimension " + std::to_string(axis);
  if (reinterpret_cast<uintptr_t>(words->Data()) % alignof(int64_t) != 0) return where + " is misaligned";
  if (std::string why = sdk::check_dim_within(words->data(), words->size(), ranges, bound); !why.empty()) {
    return where + why;
  }
  *dim = bound;
  if (symbol_values != nullptr) (void)sdk::evaluate_dim_expr(words->data(), words->size(), symbol_values, dim);
  return {};
}

/// The symbols' ranges, checked: each 0 <= min <= max <= 2^40. The reason on failure.
std::string read_symbols(const ir::Graph& graph, std::vector<sdk::DimRange>* ranges) {
  ranges->clear();
  if (graph.symbols() == nullptr) return {};
  if (graph.ir_version() < 2) return "the graph has symbols, which need graph IR version 2";
  for (size_t k = 0; k < graph.symbols()->size(); ++k) {
    const ir::Symbol* symbol = graph.symbols()->Get(static_cast<flatbuffers::uoffset_t>(k));
    if (symbol->min() < 0 || symbol->min() > symbol->max() || symbol->max() > (int64_t{1} << 40)) {
      return "symbol " + std::to_string(k) + " ('" + symbol->name()->str() + "') has the range [" +
             std::to_string(symbol->min()) + ", " + std::to_string(symbol->max()) + "]";
    }
    ranges->push_back({symbol->min(), symbol->max()});
  }
  return {};
}

/// Reads a value's dtype and shape, checking each; the reason on failure. A dimension
/// that varies takes its value for `symbol_values` (one per symbol), or its bound when
/// that is null.
std::string read_tensor_info(const ir::Graph& graph, size_t index, TensorInfo* info,
                             const std::vector<sdk::DimRange>& ranges, const int64_t* symbol_values) {
  const ir::Value* value = graph.values()->Get(static_cast<flatbuffers::uoffset_t>(index));
  const int32_t code = static_cast<int32_t>(value->dtype());
  if (!is_known_dtype(code)) {
    return describe_value(graph, index) + " has unknown dtype " + std::to_string(code);
  }
  info->dtype = static_cast<DType>(code);
  info->shape = Shape();
  const auto* dims = value->shape();
  const size_t rank = dims != nullptr ? dims->size() : 0;
  if (rank > static_cast<size_t>(kMaxRank)) {
    return describe_value(graph, index) + " has rank " + std::to_string(rank) + "; at most " +
           std::to_string(kMaxRank) + " is supported";
  }
  const auto* varying = value->dims();
  if (varying != nullptr) {
    if (graph.ir_version() < 2)
      return describe_value(graph, index) + " has dimensions that vary, which need IR version 2";
    if (value->data() != nullptr) return describe_value(graph, index) + " is a constant with dimensions that vary";
    if (varying->size() != rank) {
      return describe_value(graph, index) + " has " + std::to_string(varying->size()) +
             " dimension expressions for rank " + std::to_string(rank);
    }
  }
  uint64_t bytes = dtype_size(info->dtype);
  // The same bound on the product of the nonzero dimensions: a shape with a 0 in it
  // holds nothing, but its strides and partial products must not overflow either.
  uint64_t nonzero_bytes = bytes;
  for (size_t axis = 0; axis < rank; ++axis) {
    int64_t dim = dims->Get(static_cast<flatbuffers::uoffset_t>(axis));
    if (dim < 0) return describe_value(graph, index) + " has negative dimension " + std::to_string(dim);
    const ir::Dim* entry = varying != nullptr ? varying->Get(static_cast<flatbuffers::uoffset_t>(axis)) : nullptr;
    if (entry != nullptr && entry->words() != nullptr && entry->words()->size() > 0) {
      if (std::string why = read_varying_dim(graph, index, axis, *entry, dim, ranges, symbol_values, &dim);
          !why.empty()) {
        return why;
      }
    }
    if (dim != 0 && nonzero_bytes > kMaxTensorBytes / static_cast<uint64_t>(dim)) {
      return describe_value(graph, index) + " is larger than 2^40 bytes (zero dimensions aside)";
    }
    if (dim != 0) nonzero_bytes *= static_cast<uint64_t>(dim);
    bytes *= static_cast<uint64_t>(dim);
    info->shape.push_back(dim);
  }
  if (value->data() != nullptr && value->data()->size() != bytes) {
    return describe_value(graph, index) + " holds " + std::to_string(value->data()->size()) +
           " bytes of data; its dtype and shape need " + std::to_string(bytes);
  }
  return {};
}

const ir::Graph* open_graph(const void* data, size_t size, std::string* error, bool* incompatible) {
  *incompatible = true;
  if (data == nullptr || size < 8) {
    *error = "the graph blob is empty or truncated";
    return nullptr;
  }
  if (!ir::GraphBufferHasIdentifier(data)) {
    *error = "the blob is not a plugrt graph (identifier PRTG missing)";
    return nullptr;
  }
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data), size);
  if (!ir::VerifyGraphBuffer(verifier)) {
    *incompatible = false;
    *error = "the graph blob fails flatbuffer verification";
    return nullptr;
  }
  const ir::Graph* graph = ir::GetGraph(data);
  if (graph->ir_version() < 1 || graph->ir_version() > kMaxGraphIrVersion) {
    *error = "graph IR version " + std::to_string(graph->ir_version()) + " is not supported (this build reads 1 to " +
             std::to_string(kMaxGraphIrVersion) + ")";
    return nullptr;
  }
  *incompatible = false;
  return graph;
}

enum class Origin : uint8_t { kUndefined, kInput, kConstant, kNode };

/// Checks indices, definitions before use and single definition. `producer` gets, per
/// value, the step that defines it (-1 for inputs and constants).
std::string check_structure(const ir::Graph& graph, std::vector<Origin>* origin, std::vector<int64_t>* producer) {
  const size_t num_values = graph.values() != nullptr ? graph.values()->size() : 0;
  origin->assign(num_values, Origin::kUndefined);
  producer->assign(num_values, -1);
  for (size_t i = 0; i < num_values; ++i) {
    if (graph.values()->Get(static_cast<flatbuffers::uoffset_t>(i))->data() != nullptr) {
      (*origin)[i] = Origin::kConstant;
    }
  }
  if (graph.inputs() != nullptr) {
    for (size_t k = 0; k < graph.inputs()->size(); ++k) {
      const int32_t v = graph.inputs()->Get(static_cast<flatbuffers::uoffset_t>(k));
      if (v < 0 || static_cast<size_t>(v) >= num_values) {
        return "graph input " + std::to_string(k) + " refers to value " + std::to_string(v) + " of " +
               std::to_string(num_values);
      }
      if ((*origin)[static_cast<size_t>(v)] != Origin::kUndefined) {
        return "graph input " + std::to_string(k) + " (" + describe_value(graph, static_cast<size_t>(v)) +
               ") is also a constant or another input";
      }
      (*origin)[static_cast<size_t>(v)] = Origin::kInput;
    }
  }
  const size_t num_nodes = graph.nodes() != nullptr ? graph.nodes()->size() : 0;
  for (size_t n = 0; n < num_nodes; ++n) {
    const ir::Node* node = graph.nodes()->Get(static_cast<flatbuffers::uoffset_t>(n));
    const std::string where = "node " + std::to_string(n) + " (" + node->op_type()->str() + ")";
    if (node->inputs() != nullptr) {
      for (size_t k = 0; k < node->inputs()->size(); ++k) {
        const int32_t v = node->inputs()->Get(static_cast<flatbuffers::uoffset_t>(k));
        if (v == -1) continue;
        if (v < 0 || static_cast<size_t>(v) >= num_values) {
          return where + ": input " + std::to_string(k) + " refers to value " + std::to_string(v) + " of " +
                 std::to_string(num_values);
        }
        if ((*origin)[static_cast<size_t>(v)] == Origin::kUndefined) {
          return where + ": input " + std::to_string(k) + " (" + describe_value(graph, static_cast<size_t>(v)) +
                 ") is used before any node defines it";
        }
      }
    }
    if (node->outputs() != nullptr) {
      for (size_t k = 0; k < node->outputs()->size(); ++k) {
        const int32_t v = node->outputs()->Get(static_cast<flatbuffers::uoffset_t>(k));
        if (v == -1) continue;
        if (v < 0 || static_cast<size_t>(v) >= num_values) {
          return where + ": output " + std::to_string(k) + " refers to value " + std::to_string(v) + " of " +
                 std::to_string(num_values);
        }
        if ((*origin)[static_cast<size_t>(v)] != Origin::kUndefined) {
          return where + ": output " + std::to_string(k) + " (" + describe_value(graph, static_cast<size_t>(v)) +
                 ") is already defined";
        }
        (*origin)[static_cast<size_t>(v)] = Origin::kNode;
        (*producer)[static_cast<size_t>(v)] = static_cast<int64_t>(n);
      }
    }
  }
  if (graph.outputs() == nullptr || graph.outputs()->size() == 0) return "the graph has no outputs";
  for (size_t k = 0; k < graph.outputs()->size(); ++k) {
    const int32_t v = graph.outputs()->Get(static_cast<flatbuffers::uoffset_t>(k));
    if (v < 0 || static_cast<size_t>(v) >= num_values) {
      return "graph output " + std::to_string(k) + " refers to value " + std::to_string(v) + " of " +
             std::to_string(num_values);
    }
    if ((*origin)[static_cast<size_t>(v)] == Origin::kUndefined) {
      return "graph output " + std::to_string(k) + " (" + describe_value(graph, static_cast<size_t>(v)) +
             ") is never defined";
    }
  }
  return {};
}

/// `data`, or an 8-byte-aligned copy of it in `copy` when it is not aligned (the
/// graph's 8-byte fields are aligned relative to the buffer's start).
const void* aligned_blob(const void* data, size_t size, std::unique_ptr<std::byte[]>* copy) {
  if (data == nullptr || reinterpret_cast<uintptr_t>(data) % 8 == 0) return data;
  std::byte* aligned = nullptr;
  *copy = allocate_aligned(size, &aligned);
  std::memcpy(aligned, data, size);
  return aligned;
}

/// A constant's bytes, copied into `owned` when they are not 64-byte aligned, so that
/// kernels load them aligned.
const void* aligned_constant(const ir::Value& value, std::vector<std::unique_ptr<std::byte[]>>& owned) {
  const void* bytes = value.data()->data();
  if (reinterpret_cast<uintptr_t>(bytes) % kAlignment == 0) return bytes;
  std::byte* aligned = nullptr;
  owned.push_back(allocate_aligned(value.data()->size(), &aligned));
  std::memcpy(aligned, bytes, value.data()->size());
  return aligned;
}

}  // namespace

/// Where a value's bytes are during a run.
struct CompiledGraph::ValueSlot {
  TensorInfo info;
  enum class Kind : uint8_t { kArena, kConstant, kBound } kind = Kind::kArena;
  /// kArena: offset in the arena; kBound: index in value_data_.
  size_t location = 0;
  std::string name;
};

struct CompiledGraph::Step {
  std::unique_ptr<Kernel> kernel;
  bool may_fail = false;  // control flow: run_checked
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  std::vector<const void*> input_data;  // filled per run
  std::vector<void*> output_data;       // filled per run
};

CompiledGraph::~CompiledGraph() = default;
size_t CompiledGraph::num_nodes() const { return steps_.size(); }
const TensorInfo& CompiledGraph::input_info(size_t k) const { return values_[static_cast<size_t>(inputs_[k])].info; }
const TensorInfo& CompiledGraph::output_info(size_t k) const { return values_[static_cast<size_t>(outputs_[k])].info; }

namespace {

template <typename T>
bool elements_aligned(const flatbuffers::Vector<T>* vector) {
  return vector == nullptr || vector->size() == 0 || reinterpret_cast<uintptr_t>(vector->Data()) % alignof(T) == 0;
}

/// The FlatBuffers verifier checks the alignment of a vector's length, not of its
/// elements: a crafted buffer can misalign 8-byte elements. Refuse those.
std::string check_alignment(const ir::Graph& graph) {
  const size_t num_values = graph.values() != nullptr ? graph.values()->size() : 0;
  for (size_t i = 0; i < num_values; ++i) {
    if (!elements_aligned(graph.values()->Get(static_cast<flatbuffers::uoffset_t>(i))->shape())) {
      return describe_value(graph, i) + " has a misaligned shape";
    }
  }
  const size_t num_nodes = graph.nodes() != nullptr ? graph.nodes()->size() : 0;
  for (size_t n = 0; n < num_nodes; ++n) {
    const ir::Node* node = graph.nodes()->Get(static_cast<flatbuffers::uoffset_t>(n));
    if (!elements_aligned(node->inputs()) || !elements_aligned(node->outputs())) {
      return "node " + std::to_string(n) + " has misaligned input or output lists";
    }
    if (node->attributes() == nullptr) continue;
    for (const ir::Attribute* attribute : *node->attributes()) {
      if (!elements_aligned(attribute->ints()) || !elements_aligned(attribute->floats())) {
        return "node " + std::to_string(n) + ": attribute '" + attribute->name()->str() + "' is misaligned";
      }
    }
  }
  if (!elements_aligned(graph.inputs()) || !elements_aligned(graph.outputs())) {
    return "the graph's input or output list is misaligned";
  }
  return {};
}

std::string verify(const void* data, size_t size, bool* incompatible) {
  std::string error;
  const ir::Graph* graph = open_graph(data, size, &error, incompatible);
  if (graph == nullptr) return error;
  if (std::string why = check_alignment(*graph); !why.empty()) return why;
  std::vector<sdk::DimRange> ranges;
  if (std::string why = read_symbols(*graph, &ranges); !why.empty()) return why;
  const size_t num_values = graph->values() != nullptr ? graph->values()->size() : 0;
  for (size_t i = 0; i < num_values; ++i) {
    TensorInfo info;
    if (std::string why = read_tensor_info(*graph, i, &info, ranges, nullptr); !why.empty()) return why;
  }
  std::vector<Origin> origin;
  std::vector<int64_t> producer;
  return check_structure(*graph, &origin, &producer);
}

}  // namespace

std::string verify_graph(const void* data, size_t size) {
  bool incompatible = false;
  return verify(data, size, &incompatible);
}

std::vector<std::string> node_support(const void* data, size_t size, std::string* error) {
  std::unique_ptr<std::byte[]> aligned_copy;
  data = aligned_blob(data, size, &aligned_copy);
  std::vector<std::unique_ptr<std::byte[]>> owned_constants;
  bool incompatible = false;
  if (std::string why = verify(data, size, &incompatible); !why.empty()) {
    *error = why;
    return {};
  }
  const ir::Graph& graph = *ir::GetGraph(data);
  const size_t num_values = graph.values() != nullptr ? graph.values()->size() : 0;
  std::vector<sdk::DimRange> ranges;
  (void)read_symbols(graph, &ranges);
  std::vector<TensorInfo> infos(num_values);
  for (size_t i = 0; i < num_values; ++i) {
    (void)read_tensor_info(graph, i, &infos[i], ranges, nullptr);  // dimensions that vary at their bounds
    const ir::Value* value = graph.values()->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (value->data() != nullptr) infos[i].constant_data = aligned_constant(*value, owned_constants);
  }
  std::vector<std::string> reasons;
  const size_t num_nodes = graph.nodes() != nullptr ? graph.nodes()->size() : 0;
  for (size_t n = 0; n < num_nodes; ++n) {
    const ir::Node* node = graph.nodes()->Get(static_cast<flatbuffers::uoffset_t>(n));
    PrepareFunction prepare = find_kernel(node->op_type()->string_view());
    std::vector<const TensorInfo*> inputs, outputs;
    if (node->inputs() != nullptr) {
      for (int32_t v : *node->inputs()) inputs.push_back(v >= 0 ? &infos[static_cast<size_t>(v)] : nullptr);
    }
    if (node->outputs() != nullptr) {
      for (int32_t v : *node->outputs()) outputs.push_back(v >= 0 ? &infos[static_cast<size_t>(v)] : nullptr);
    }
    if (prepare == nullptr) {
      reasons.push_back("the portable backend has no kernel for op type '" + node->op_type()->str() + "'");
      continue;
    }
    NodeContext context(*node, graph.opset(), std::move(inputs), std::move(outputs));
    Prepared result = prepare_node(prepare, context);
    reasons.push_back(result.kernel != nullptr ? std::string() : result.error);
  }
  // With dimensions that vary, the shapes of nodes reading shape computations are known
  // only once those fold, as they do in a compile for one shape: the graph runs when it
  // compiles at the symbols' maxima (every node's reason cleared), else the node that
  // refused there is the one that cannot run.
  if (!ranges.empty() && std::any_of(reasons.begin(), reasons.end(), [](const std::string& r) { return !r.empty(); })) {
    std::vector<int64_t> maxima;
    for (const sdk::DimRange& range : ranges) maxima.push_back(range.max);
    std::string why;
    CompileFailure failure = CompileFailure::kUnsupported;
    std::optional<size_t> failed;
    const bool compiles = CompiledGraph::compile(data, size, &why, &failure, maxima.data(), &failed) != nullptr;
    for (size_t n = 0; n < reasons.size(); ++n) {
      if (compiles || (failed && n != *failed)) reasons[n].clear();
    }
  }
  return reasons;
}

std::unique_ptr<CompiledGraph> CompiledGraph::compile(const void* data, size_t size, std::string* error,
                                                      CompileFailure* failure, const int64_t* symbol_values,
                                                      std::optional<size_t>* failed_node) {
  std::unique_ptr<std::byte[]> aligned_copy;
  data = aligned_blob(data, size, &aligned_copy);
  bool incompatible = false;
  if (std::string why = verify(data, size, &incompatible); !why.empty()) {
    *error = why;
    *failure = incompatible ? CompileFailure::kIncompatible : CompileFailure::kInvalid;
    return nullptr;
  }
  *failure = CompileFailure::kUnsupported;
  const ir::Graph& graph = *ir::GetGraph(data);
  std::vector<Origin> origin;
  std::vector<int64_t> producer;
  (void)check_structure(graph, &origin, &producer);
  std::vector<sdk::DimRange> ranges;
  (void)read_symbols(graph, &ranges);
  for (size_t k = 0; symbol_values != nullptr && k < ranges.size(); ++k) {
    if (!ranges[k].contains(symbol_values[k])) {
      *error = "symbol " + std::to_string(k) + " is " + std::to_string(symbol_values[k]) + ", outside [" +
               std::to_string(ranges[k].min) + ", " + std::to_string(ranges[k].max) + "]";
      *failure = CompileFailure::kInvalid;
      return nullptr;
    }
  }

  std::unique_ptr<CompiledGraph> compiled(new CompiledGraph());
  compiled->owned_blob_ = std::move(aligned_copy);
  const size_t num_values = graph.values() != nullptr ? graph.values()->size() : 0;
  const size_t num_nodes = graph.nodes() != nullptr ? graph.nodes()->size() : 0;
  compiled->values_.resize(num_values);

  // Graph inputs and outputs are bound to the caller's tensors on each run.
  // A graph may have no inputs (all constants): its inputs list is then absent.
  if (graph.inputs() != nullptr) {
    for (int32_t v : *graph.inputs()) compiled->inputs_.push_back(v);
  }
  for (int32_t v : *graph.outputs()) compiled->outputs_.push_back(v);  // verified: present
  for (size_t i = 0; i < num_values; ++i) {
    ValueSlot& slot = compiled->values_[i];
    const ir::Value* value = graph.values()->Get(static_cast<flatbuffers::uoffset_t>(i));
    (void)read_tensor_info(graph, i, &slot.info, ranges, symbol_values);
    if (value->name() != nullptr) slot.name = value->name()->str();
    if (origin[i] == Origin::kConstant) {
      slot.kind = ValueSlot::Kind::kConstant;
      slot.info.constant_data = aligned_constant(*value, compiled->owned_constants_);
    }
  }
  auto bind_slot = [&](int32_t v) {
    ValueSlot& slot = compiled->values_[static_cast<size_t>(v)];
    if (slot.kind == ValueSlot::Kind::kBound) return;
    slot.kind = ValueSlot::Kind::kBound;
    slot.location = compiled->value_data_.size();
    compiled->value_data_.push_back(nullptr);
  };
  for (int32_t v : compiled->inputs_) bind_slot(v);
  for (size_t k = 0; k < compiled->outputs_.size(); ++k) {
    const int32_t v = compiled->outputs_[k];
    bool written_by_node = origin[static_cast<size_t>(v)] == Origin::kNode;
    for (size_t j = 0; j < k && written_by_node; ++j) written_by_node = compiled->outputs_[j] != v;
    if (written_by_node) {
      bind_slot(v);
    } else {
      compiled->output_copies_.emplace_back(k, v);
    }
  }

  // Intermediates live from the step that defines them to the last step that reads them.
  std::vector<int64_t> last_use(num_values, -1);
  for (size_t n = 0; n < num_nodes; ++n) {
    const ir::Node* node = graph.nodes()->Get(static_cast<flatbuffers::uoffset_t>(n));
    if (node->inputs() == nullptr) continue;
    for (int32_t v : *node->inputs()) {
      if (v >= 0) last_use[static_cast<size_t>(v)] = static_cast<int64_t>(n);
    }
  }
  std::vector<size_t> planned;
  std::vector<BufferLifetime> lifetimes;
  for (size_t i = 0; i < num_values; ++i) {
    if (origin[i] != Origin::kNode || compiled->values_[i].kind != ValueSlot::Kind::kArena) continue;
    const uint32_t first = static_cast<uint32_t>(producer[i]);
    const uint32_t last = static_cast<uint32_t>(std::max<int64_t>(last_use[i], producer[i]));
    planned.push_back(i);
    lifetimes.push_back({compiled->values_[i].info.num_bytes(), first, last});
  }
  MemoryPlan plan = plan_memory(lifetimes, kAlignment);
  for (size_t k = 0; k < planned.size(); ++k) compiled->values_[planned[k]].location = plan.offsets[k];

  // Prepare one kernel per node.
  size_t scratch_bytes = 0;
  compiled->steps_.resize(num_nodes);
  for (size_t n = 0; n < num_nodes; ++n) {
    const ir::Node* node = graph.nodes()->Get(static_cast<flatbuffers::uoffset_t>(n));
    Step& step = compiled->steps_[n];
    std::vector<const TensorInfo*> inputs, outputs;
    if (node->inputs() != nullptr) {
      for (int32_t v : *node->inputs()) {
        step.inputs.push_back(v);
        inputs.push_back(v >= 0 ? &compiled->values_[static_cast<size_t>(v)].info : nullptr);
      }
    }
    if (node->outputs() != nullptr) {
      for (int32_t v : *node->outputs()) {
        step.outputs.push_back(v);
        outputs.push_back(v >= 0 ? &compiled->values_[static_cast<size_t>(v)].info : nullptr);
      }
    }
    PrepareFunction prepare = find_kernel(node->op_type()->string_view());
    if (prepare == nullptr) {
      *error = "node " + std::to_string(n) + ": the portable backend has no kernel for op type '" +
               node->op_type()->str() + "'";
      return nullptr;
    }
    NodeContext context(*node, graph.opset(), std::move(inputs), std::move(outputs));
    Prepared result = prepare_node(prepare, context);
    if (result.kernel == nullptr) {
      *error = "node " + std::to_string(n) + ": " + result.error;
      if (failed_node != nullptr) *failed_node = n;
      return nullptr;
    }
    step.kernel = std::move(result.kernel);
    step.may_fail = step.kernel->may_fail();
    step.input_data.resize(step.inputs.size());
    step.output_data.resize(step.outputs.size());
    if (compiled->fold(step)) continue;
    scratch_bytes = std::max(scratch_bytes, step.kernel->scratch_bytes());
  }
  // Folded steps ran once, here; the rest run on every call.
  compiled->steps_.erase(std::remove_if(compiled->steps_.begin(), compiled->steps_.end(),
                                        [](const Step& step) { return step.kernel == nullptr; }),
                         compiled->steps_.end());

  const size_t scratch_offset = static_cast<size_t>(plan.arena_size);
  compiled->arena_size_ = scratch_offset + static_cast<size_t>(align_up(scratch_bytes, kAlignment));
  if (compiled->arena_size_ > kMaxArenaBytes) {
    *error = "the values alive at once and the kernels' scratch need " + std::to_string(compiled->arena_size_) +
             " bytes of arena, more than 2^40";
    return nullptr;
  }
  try {
    compiled->arena_storage_ = allocate_aligned(compiled->arena_size_, &compiled->arena_);
  } catch (const std::bad_alloc&) {
    *error = "the program's arena needs " + std::to_string(compiled->arena_size_) +
             " bytes, more than this process can allocate";
    return nullptr;
  }
  compiled->scratch_ = compiled->arena_ + scratch_offset;
  return compiled;
}

bool CompiledGraph::fold(Step& step) {
  if (step.may_fail || step.inputs.empty()) return false;
  uint64_t output_bytes = 0;
  for (int32_t v : step.inputs) {
    if (v >= 0 && values_[static_cast<size_t>(v)].kind != ValueSlot::Kind::kConstant && step.kernel->reads_inputs()) {
      return false;
    }
  }
  for (int32_t v : step.outputs) {
    if (v < 0) continue;
    const ValueSlot& slot = values_[static_cast<size_t>(v)];
    if (slot.kind != ValueSlot::Kind::kArena) return false;  // a graph output: bound per call
    output_bytes += slot.info.num_bytes();
  }
  if (output_bytes > kMaxFoldedBytes) return false;
  for (size_t k = 0; k < step.inputs.size(); ++k) {
    const int32_t v = step.inputs[k];
    step.input_data[k] = v >= 0 ? values_[static_cast<size_t>(v)].info.constant_data : nullptr;
  }
  for (size_t k = 0; k < step.outputs.size(); ++k) {
    const int32_t v = step.outputs[k];
    std::byte* data = nullptr;
    if (v >= 0) owned_constants_.push_back(allocate_aligned(values_[static_cast<size_t>(v)].info.num_bytes(), &data));
    step.output_data[k] = data;
  }
  std::byte* scratch = nullptr;
  std::unique_ptr<std::byte[]> scratch_storage = allocate_aligned(step.kernel->scratch_bytes(), &scratch);
  step.kernel->run(KernelArgs{step.input_data.data(), step.output_data.data(), scratch});
  for (size_t k = 0; k < step.outputs.size(); ++k) {
    if (step.outputs[k] < 0) continue;
    ValueSlot& slot = values_[static_cast<size_t>(step.outputs[k])];
    slot.kind = ValueSlot::Kind::kConstant;
    slot.info.constant_data = step.output_data[k];
  }
  step.kernel.reset();
  return true;
}

bool CompiledGraph::check(const DLTensor* tensor, const ValueSlot& slot, const char* role, size_t index, char* error,
                          size_t error_capacity) const {
  const char* problem = nullptr;
  if (tensor == nullptr || tensor->data == nullptr) {
    problem = "is null";
  } else if (tensor->device.device_type != kDLCPU) {
    problem = "is not in CPU memory";
  } else if (!matches_dlpack(slot.info.dtype, tensor->dtype)) {
    problem = "has the wrong dtype";
  } else if (tensor->ndim != slot.info.shape.rank) {
    problem = "has the wrong rank";
  } else if (!is_contiguous(*tensor)) {
    problem = "is not contiguous";
  } else {
    for (int axis = 0; axis < tensor->ndim; ++axis) {
      if (tensor->shape[axis] != slot.info.shape[axis]) problem = "has the wrong shape";
    }
  }
  if (problem != nullptr) {
    std::snprintf(error, error_capacity, "%s %zu ('%s') %s: expected %s %s", role, index, slot.name.c_str(), problem,
                  std::string(to_string(slot.info.dtype)).c_str(), to_string(slot.info.shape).c_str());
    return false;
  }
  return true;
}

bool CompiledGraph::bind(const DLTensor* tensor, const ValueSlot& slot, const char* role, size_t index, char* error,
                         size_t error_capacity) {
  if (!check(tensor, slot, role, index, error, error_capacity)) return false;
  value_data_[slot.location] = static_cast<std::byte*>(tensor->data) + tensor->byte_offset;
  return true;
}

bool CompiledGraph::run(const DLTensor* const* inputs, size_t num_inputs, const DLTensor* const* outputs,
                        size_t num_outputs, char* error, size_t error_capacity) {
  if (num_inputs != inputs_.size() || num_outputs != outputs_.size()) {
    std::snprintf(error, error_capacity, "expected %zu inputs and %zu outputs, got %zu and %zu", inputs_.size(),
                  outputs_.size(), num_inputs, num_outputs);
    return false;
  }
  for (size_t k = 0; k < num_inputs; ++k) {
    if (!bind(inputs[k], values_[static_cast<size_t>(inputs_[k])], "input", k, error, error_capacity)) return false;
  }
  for (size_t k = 0; k < num_outputs; ++k) {
    const ValueSlot& slot = values_[static_cast<size_t>(outputs_[k])];
    bool copied = false;
    for (const auto& copy : output_copies_) copied = copied || copy.first == k;
    if (copied) {  // checked like any output; its bytes are copied after the nodes run
      if (!check(outputs[k], slot, "output", k, error, error_capacity)) return false;
      continue;
    }
    if (!bind(outputs[k], slot, "output", k, error, error_capacity)) return false;
  }
  auto data_of = [this](int32_t v) -> void* {
    if (v < 0) return nullptr;
    const ValueSlot& slot = values_[static_cast<size_t>(v)];
    switch (slot.kind) {
      case ValueSlot::Kind::kArena: return arena_ + slot.location;
      case ValueSlot::Kind::kConstant: return const_cast<void*>(slot.info.constant_data);
      case ValueSlot::Kind::kBound: return value_data_[slot.location];
    }
    return nullptr;
  };
  for (Step& step : steps_) {
    for (size_t k = 0; k < step.inputs.size(); ++k) step.input_data[k] = data_of(step.inputs[k]);
    for (size_t k = 0; k < step.outputs.size(); ++k) step.output_data[k] = data_of(step.outputs[k]);
    const KernelArgs args{step.input_data.data(), step.output_data.data(), scratch_};
    if (!step.may_fail) {
      step.kernel->run(args);
    } else if (!step.kernel->run_checked(args, error, error_capacity)) {
      return false;
    }
  }
  for (const auto& [k, v] : output_copies_) {
    const ValueSlot& slot = values_[static_cast<size_t>(v)];
    std::memcpy(static_cast<std::byte*>(outputs[k]->data) + outputs[k]->byte_offset, data_of(v), slot.info.num_bytes());
  }
  return true;
}

}  // namespace plugrt::portable
