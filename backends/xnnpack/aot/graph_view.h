// Read helpers over a graph IR buffer (core/schema/graph_ir.fbs): values, constants,
// and ONNX attributes with their defaults.
#ifndef PLUGRT_BACKENDS_XNNPACK_AOT_GRAPH_VIEW_H_
#define PLUGRT_BACKENDS_XNNPACK_AOT_GRAPH_VIEW_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::xnnpack {

class GraphView {
 public:
  /// Verifies the buffer; `error` says why when it is not a graph IR buffer.
  static std::optional<GraphView> open(const void* data, size_t size, std::string* error);

  const ir::Graph& graph() const { return *graph_; }
  int opset() const { return graph_->opset(); }
  size_t num_nodes() const { return graph_->nodes() == nullptr ? 0 : graph_->nodes()->size(); }
  const ir::Node& node(size_t index) const { return *graph_->nodes()->Get(static_cast<flatbuffers::uoffset_t>(index)); }

  bool valid(int32_t value) const;
  const ir::Value& value(int32_t index) const {
    return *graph_->values()->Get(static_cast<flatbuffers::uoffset_t>(index));
  }
  bool is_constant(int32_t value) const { return valid(value) && this->value(value).data() != nullptr; }
  bool is_float(int32_t value) const { return valid(value) && this->value(value).dtype() == ir::DType::Float32; }
  std::vector<int64_t> shape(int32_t value) const;
  /// A float32 constant's elements.
  std::vector<float> floats(int32_t value) const;
  /// An int64 or int32 constant's elements.
  std::optional<std::vector<int64_t>> ints(int32_t value) const;

  /// The node's input `i`, or -1 when it is absent.
  static int32_t input(const ir::Node& node, size_t i);
  static size_t num_inputs(const ir::Node& node) { return node.inputs() == nullptr ? 0 : node.inputs()->size(); }
  static size_t num_outputs(const ir::Node& node);
  static int32_t output(const ir::Node& node, size_t i);

  static const ir::Attribute* attribute(const ir::Node& node, const char* name);
  static int64_t int_attribute(const ir::Node& node, const char* name, int64_t fallback);
  static float float_attribute(const ir::Node& node, const char* name, float fallback);
  static std::string string_attribute(const ir::Node& node, const char* name, const std::string& fallback);
  static std::vector<int64_t> ints_attribute(const ir::Node& node, const char* name,
                                             std::vector<int64_t> fallback = {});

 private:
  explicit GraphView(const ir::Graph* graph) : graph_(graph) {}
  const ir::Graph* graph_;
};

/// Elements of a shape; -1 when a dimension is negative or the count overflows.
int64_t num_elements(const std::vector<int64_t>& shape);

}  // namespace plugrt::xnnpack

#endif  // PLUGRT_BACKENDS_XNNPACK_AOT_GRAPH_VIEW_H_
