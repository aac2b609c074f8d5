// SPDX-License-Identifier: Apache-2.0
// Writes a small ONNX model (opset 17, values of static shape: float32, and uint8, int8
// or int32 for quantized graphs) node by node, for the differential test's random graphs.
#ifndef PLUGRT_TEST_DIFFERENTIAL_ONNX_WRITER_H_
#define PLUGRT_TEST_DIFFERENTIAL_ONNX_WRITER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class AttributeProto;
class ModelProto;
}  // namespace onnx

namespace plugrt::differential {

using Shape = std::vector<int64_t>;

/// ONNX's element types that the random graphs use (TensorProto.DataType's numbers).
enum class ElementType : int32_t { kFloat = 1, kUInt8 = 2, kInt8 = 3, kInt32 = 6 };

/// A value of the model being written: its name, its shape and its element type.
struct Value {
  std::string name;
  Shape shape;
  ElementType type = ElementType::kFloat;
};

/// One attribute of a node.
struct Attr {
  enum class Kind { kInt, kInts, kFloat, kString };
  std::string name;
  Kind kind = Kind::kInt;
  std::vector<int64_t> ints;
  float real = 0;
  std::string text;

  static Attr i(std::string name, int64_t value) { return {std::move(name), Kind::kInt, {value}, 0, {}}; }
  static Attr is(std::string name, std::vector<int64_t> values) {
    return {std::move(name), Kind::kInts, values, 0, {}};
  }
  static Attr f(std::string name, float value) { return {std::move(name), Kind::kFloat, {}, value, {}}; }
  static Attr s(std::string name, std::string value) {
    return {std::move(name), Kind::kString, {}, 0, std::move(value)};
  }
};

int64_t element_count(const Shape& shape);

class OnnxWriter {
 public:
  OnnxWriter();
  ~OnnxWriter();
  OnnxWriter(const OnnxWriter&) = delete;
  OnnxWriter& operator=(const OnnxWriter&) = delete;

  /// A new float32 graph input.
  Value input(Shape shape);
  /// A float32 initializer.
  Value constant(Shape shape, std::vector<float> values);
  /// A 1-D int64 initializer.
  Value ints(std::vector<int64_t> values);
  /// A uint8, int8 or int32 initializer.
  Value integers(Shape shape, ElementType type, const std::vector<int32_t>& values);
  /// One node with one output of `shape` and `type`.
  Value node(const std::string& op, const std::vector<Value>& inputs, Shape shape, const std::vector<Attr>& attrs = {},
             ElementType type = ElementType::kFloat);
  /// One float32 node with an output of each shape that `shapes` holds; an output given
  /// std::nullopt is left out (named ""), as is an input whose name is empty.
  std::vector<Value> node_outputs(const std::string& op, const std::vector<Value>& inputs,
                                  const std::vector<std::optional<Shape>>& shapes, const std::vector<Attr>& attrs);
  /// Marks `value` as a graph output.
  void output(const Value& value);
  /// Adds a key and value to the model's metadata_props.
  void metadata(const std::string& key, const std::string& value);
  std::vector<uint8_t> serialise() const;

 private:
  std::unique_ptr<onnx::ModelProto> model_;
  int counter_ = 0;
};

}  // namespace plugrt::differential

#endif  // PLUGRT_TEST_DIFFERENTIAL_ONNX_WRITER_H_
