// SPDX-License-Identifier: Apache-2.0
/// \file graph_view.h
/// A checked view of the graph IR that partition and preprocess receive, with the reads
/// every backend needs: values, shapes, constants, who reads and writes each value, and
/// ONNX attributes with their defaults. Header-only; link plugrt::sdk_graph.
///
///   PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::GraphView graph, sdk::GraphView::open(request.graph, request.graph_size));
///   for (size_t n = 0; n < graph.num_nodes(); ++n) {
///     const plugrt::ir::Node& node = graph.node(n);
///     const int64_t axis = sdk::GraphView::int_attribute(node, "axis", 1);  // ONNX's default
///   }
///
/// `plugrt compile`'s importer writes each attribute a model leaves out with the ONNX
/// schema's default when that default is an int, float, string or a list of them (see
/// the SDK's README.md); other producers of graph IR, the contract kit's samples among
/// them, may leave attributes out, so pass ONNX's default as the fallback. open() checks everything an index or a size
/// read later depends on, so the accessors below need no further bounds checks beyond valid(). take_nodes() is the
/// usual body of partition over such a view.
///
/// A graph whose dimensions vary (IR version 2, with symbols) opens for given symbol
/// values: every shape is then that of a static graph, at those values, so that a
/// backend's static lowering runs unchanged on one specialization of the graph.
#ifndef PLUGRT_SDK_GRAPH_VIEW_H_
#define PLUGRT_SDK_GRAPH_VIEW_H_

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugrt/sdk/backend.h"
#include "plugrt/sdk/dim_expr.h"
#include "plugrt/sdk/graph.h"
#include "plugrt/sdk/tensor.h"

namespace plugrt::sdk {

/// Elements of a shape; -1 when a dimension is negative or the count overflows.
inline int64_t num_elements(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)) return -1;
    count *= dim;
  }
  return count;
}

/// "[2, 3]".
inline std::string shape_text(const std::vector<int64_t>& shape) { return shape_text(shape.data(), shape.size()); }

class GraphView {
 public:
  /// The newest graph IR version this view reads (1: static; 2: symbols).
  static constexpr uint32_t kIrVersion = 2;
  /// The most elements a value's shape may claim: shapes are bounded once here, so
  /// element counts and strides computed from them later cannot overflow.
  static constexpr int64_t kMaxElements = int64_t{1} << 40;

  /// Verifies the buffer (sdk::read_graph), its IR version, every shape, and every value
  /// index that a node or the graph's inputs and outputs name. InvalidArgument says why not.
  /// A graph with symbols needs `symbol_values` (one per symbol, within its range): its
  /// shapes are then evaluated there. NotSupported without them.
  static Expected<GraphView> open(const void* data, size_t size, const int64_t* symbol_values = nullptr) {
    if (data == nullptr || size == 0) return Status::invalid_argument("the graph is empty");
    Expected<const ir::Graph*> read = read_graph(data, size);
    if (!read.is_ok())
      return Status::invalid_argument("the graph is not a valid graph IR buffer: " + read.status().message());
    const ir::Graph* graph = *read;
    if (graph->ir_version() < 1 || graph->ir_version() > kIrVersion) {
      return Status::invalid_argument("graph IR version " + std::to_string(graph->ir_version()) +
                                      " is not one this backend reads");
    }
    GraphView view(graph);
    if (graph->symbols() != nullptr && graph->symbols()->size() > 0) {
      if (symbol_values == nullptr) {
        return Status::not_supported("the graph has dimensions that vary; open it for given symbol values");
      }
      if (std::string why = view.specialize(symbol_values); !why.empty()) return Status::invalid_argument(why);
    }
    for (size_t v = 0; v < sdk::num_values(*graph); ++v) {
      const std::vector<int64_t> shape = view.shape(static_cast<int32_t>(v));
      int64_t elements = 1;
      for (int64_t dim : shape) {
        if (dim < 0 || (dim > 0 && elements > kMaxElements / dim)) {
          return Status::invalid_argument("value " + std::to_string(v) + " has a negative or too large shape");
        }
        if (dim > 0) elements *= dim;
      }
    }
    for (size_t n = 0; n < view.num_nodes(); ++n) {
      const ir::Node& node = view.node(n);
      for (const auto* list : {node.inputs(), node.outputs()}) {
        if (list == nullptr) continue;
        for (int32_t v : *list) {
          if (v != -1 && !view.valid(v)) {
            return Status::invalid_argument("node " + std::to_string(n) + " names value " + std::to_string(v) +
                                            ", which does not exist");
          }
        }
      }
    }
    for (const auto* list : {graph->inputs(), graph->outputs()}) {
      if (list == nullptr) continue;
      for (int32_t v : *list) {
        if (!view.valid(v)) {
          return Status::invalid_argument("the graph's inputs or outputs name value " + std::to_string(v) +
                                          ", which does not exist");
        }
      }
    }
    view.index_readers();
    return view;
  }

  const ir::Graph& graph() const { return *graph_; }
  int opset() const { return graph_->opset(); }
  size_t num_nodes() const { return sdk::num_nodes(*graph_); }
  const ir::Node& node(size_t index) const { return *graph_->nodes()->Get(static_cast<flatbuffers::uoffset_t>(index)); }

  bool valid(int32_t value) const { return value >= 0 && static_cast<size_t>(value) < sdk::num_values(*graph_); }
  const ir::Value& value(int32_t index) const {
    return *graph_->values()->Get(static_cast<flatbuffers::uoffset_t>(index));
  }
  bool is_constant(int32_t value) const { return valid(value) && this->value(value).data() != nullptr; }
  bool is_float(int32_t value) const { return valid(value) && this->value(value).dtype() == ir::DType::Float32; }
  /// Empty for a scalar, and for an index that is not a value (an absent output: -1).
  std::vector<int64_t> shape(int32_t index) const {
    if (!valid(index)) return {};
    if (!shapes_.empty()) return shapes_[static_cast<size_t>(index)];
    const ir::Value& v = value(index);
    if (v.shape() == nullptr) return {};
    return std::vector<int64_t>(v.shape()->begin(), v.shape()->end());
  }

  /// A float32 constant's elements (empty when it is not one, or its size is wrong).
  std::vector<float> floats(int32_t index) const {
    std::vector<float> out;
    if (!valid(index)) return out;
    const ir::Value& v = value(index);
    if (v.data() == nullptr || v.dtype() != ir::DType::Float32) return out;
    const int64_t count = num_elements(shape(index));
    if (count < 0 || static_cast<uint64_t>(count) * sizeof(float) != v.data()->size()) return out;
    out.resize(static_cast<size_t>(count));
    if (count > 0) std::memcpy(out.data(), v.data()->data(), out.size() * sizeof(float));
    return out;
  }

  /// An int64 or int32 constant's elements, widened to int64.
  std::optional<std::vector<int64_t>> ints(int32_t index) const {
    if (!valid(index)) return std::nullopt;
    const ir::Value& v = value(index);
    if (v.data() == nullptr) return std::nullopt;
    const int64_t count = num_elements(shape(index));
    // The data must hold exactly the shape's elements before anything is allocated for
    // them: the shape alone may claim far more than the buffer holds.
    const size_t element_size = v.dtype() == ir::DType::Int64 ? 8 : v.dtype() == ir::DType::Int32 ? 4 : 0;
    if (count < 0 || element_size == 0 || v.data()->size() != static_cast<uint64_t>(count) * element_size) {
      return std::nullopt;
    }
    std::vector<int64_t> out(static_cast<size_t>(count));
    if (element_size == 8) {
      if (!out.empty()) std::memcpy(out.data(), v.data()->data(), out.size() * 8);
      return out;
    }
    for (size_t i = 0; i < out.size(); ++i) {
      int32_t element;
      std::memcpy(&element, v.data()->data() + i * 4, 4);
      out[i] = element;
    }
    return out;
  }

  /// A float32 constant holding one element.
  std::optional<float> scalar(int32_t index) const {
    if (!is_constant(index) || !is_float(index)) return std::nullopt;
    const std::vector<float> data = floats(index);
    if (data.size() != 1) return std::nullopt;
    return data[0];
  }

  /// How many node inputs read `value`, plus one when it is a graph output.
  size_t num_readers(int32_t value) const {
    if (!valid(value)) return 0;
    return readers_[static_cast<size_t>(value)] + (graph_outputs_[static_cast<size_t>(value)] ? 1 : 0);
  }
  bool is_graph_output(int32_t value) const { return valid(value) && graph_outputs_[static_cast<size_t>(value)]; }
  /// The index of the node that writes `value`, or -1.
  int64_t producer(int32_t value) const { return valid(value) ? producers_[static_cast<size_t>(value)] : -1; }

  /// The node's input `i`, or -1 when it is absent.
  static int32_t input(const ir::Node& node, size_t i) {
    return node.inputs() != nullptr && i < node.inputs()->size()
               ? node.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i))
               : -1;
  }
  static size_t num_inputs(const ir::Node& node) { return node.inputs() == nullptr ? 0 : node.inputs()->size(); }
  /// Outputs that are present (not -1).
  static size_t num_outputs(const ir::Node& node) {
    size_t count = 0;
    if (node.outputs() == nullptr) return 0;
    for (int32_t v : *node.outputs()) count += v != -1 ? 1 : 0;
    return count;
  }
  static int32_t output(const ir::Node& node, size_t i) {
    return node.outputs() != nullptr && i < node.outputs()->size()
               ? node.outputs()->Get(static_cast<flatbuffers::uoffset_t>(i))
               : -1;
  }

  // ONNX attributes: each reader returns `fallback` (pass ONNX's default) when the node
  // does not set the attribute, or sets it with another kind.
  static const ir::Attribute* attribute(const ir::Node& node, const char* name) {
    if (node.attributes() == nullptr) return nullptr;
    for (const ir::Attribute* attribute : *node.attributes()) {
      if (attribute->name()->str() == name) return attribute;
    }
    return nullptr;
  }
  static int64_t int_attribute(const ir::Node& node, const char* name, int64_t fallback) {
    const ir::Attribute* a = attribute(node, name);
    return a != nullptr && a->kind() == ir::AttributeKind::Int ? a->i() : fallback;
  }
  static float float_attribute(const ir::Node& node, const char* name, float fallback) {
    const ir::Attribute* a = attribute(node, name);
    return a != nullptr && a->kind() == ir::AttributeKind::Float ? a->f() : fallback;
  }
  static std::string string_attribute(const ir::Node& node, const char* name, const std::string& fallback) {
    const ir::Attribute* a = attribute(node, name);
    return a != nullptr && a->kind() == ir::AttributeKind::String && a->s() != nullptr ? a->s()->str() : fallback;
  }
  static std::vector<int64_t> ints_attribute(const ir::Node& node, const char* name,
                                             std::vector<int64_t> fallback = {}) {
    const ir::Attribute* a = attribute(node, name);
    if (a == nullptr || a->kind() != ir::AttributeKind::Ints || a->ints() == nullptr) return fallback;
    return std::vector<int64_t>(a->ints()->begin(), a->ints()->end());
  }

 private:
  explicit GraphView(const ir::Graph* graph) : graph_(graph) {}

  /// Every value's shape at `symbol_values`, into shapes_; the reason when a symbol's
  /// value is out of its range or an expression is malformed or does not evaluate.
  std::string specialize(const int64_t* symbol_values) {
    const auto& symbols = *graph_->symbols();
    for (flatbuffers::uoffset_t k = 0; k < symbols.size(); ++k) {
      const ir::Symbol* symbol = symbols.Get(k);
      if (symbol_values[k] < symbol->min() || symbol_values[k] > symbol->max()) {
        return "symbol " + std::to_string(k) + " is " + std::to_string(symbol_values[k]) + ", outside [" +
               std::to_string(symbol->min()) + ", " + std::to_string(symbol->max()) + "]";
      }
    }
    shapes_.resize(sdk::num_values(*graph_));
    for (size_t v = 0; v < shapes_.size(); ++v) {
      const ir::Value& value = *graph_->values()->Get(static_cast<flatbuffers::uoffset_t>(v));
      if (value.shape() != nullptr) shapes_[v].assign(value.shape()->begin(), value.shape()->end());
      if (value.dims() == nullptr) continue;
      if (value.dims()->size() != shapes_[v].size() || value.data() != nullptr) {
        return "value " + std::to_string(v) + " has dimension expressions that do not fit it";
      }
      for (flatbuffers::uoffset_t axis = 0; axis < value.dims()->size(); ++axis) {
        const auto* words = value.dims()->Get(axis)->words();
        if (words == nullptr || words->size() == 0) continue;  // static: its shape entry
        if (!check_dim_expr(words->data(), words->size(), symbols.size()).empty() ||
            !evaluate_dim_expr(words->data(), words->size(), symbol_values, &shapes_[v][axis])) {
          return "value " + std::to_string(v) + " dimension " + std::to_string(axis) +
                 " has an expression that does not evaluate";
        }
      }
    }
    return {};
  }

  void index_readers() {
    const size_t count = sdk::num_values(*graph_);
    readers_.assign(count, 0);
    producers_.assign(count, -1);
    graph_outputs_.assign(count, false);
    for (size_t n = 0; n < num_nodes(); ++n) {
      const ir::Node& node = this->node(n);
      if (node.inputs() != nullptr) {
        for (int32_t v : *node.inputs()) {
          if (v >= 0) ++readers_[static_cast<size_t>(v)];
        }
      }
      if (node.outputs() != nullptr) {
        for (int32_t v : *node.outputs()) {
          if (v >= 0) producers_[static_cast<size_t>(v)] = static_cast<int64_t>(n);
        }
      }
    }
    if (graph_->outputs() != nullptr) {
      for (int32_t v : *graph_->outputs()) graph_outputs_[static_cast<size_t>(v)] = true;
    }
  }

  const ir::Graph* graph_;
  std::vector<std::vector<int64_t>> shapes_;  ///< per value, when opened for symbol values
  std::vector<uint32_t> readers_;
  std::vector<int64_t> producers_;
  std::vector<bool> graph_outputs_;
};

/// The usual body of Backend::partition: marks each node for which `try_take(n)` returns
/// "" as taken, and logs (at debug level, naming `backend`) why each other node is left.
/// `try_take` is called once per node, in order.
template <typename TryTake>
Status take_nodes(const PartitionRequest& request, const GraphView& graph, std::string_view backend,
                  TryTake&& try_take) {
  if (graph.num_nodes() != request.num_nodes) {
    return Status::invalid_argument("num_nodes is " + std::to_string(request.num_nodes) + " but the graph has " +
                                    std::to_string(graph.num_nodes()) + " nodes");
  }
  for (size_t n = 0; n < graph.num_nodes(); ++n) {
    const std::string why = try_take(n);
    request.node_taken[n] = why.empty() ? 1 : 0;
    if (!why.empty()) {
      const ir::Node& node = graph.node(n);
      request.host.debug(std::string(backend) + " leaves " + node.op_type()->str() + " '" +
                         (node.name() != nullptr ? node.name()->str() : std::string()) + "': " + why);
    }
  }
  return Status::ok();
}

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_GRAPH_VIEW_H_
