// SPDX-License-Identifier: Apache-2.0
#include "onnx_writer.h"

#include <onnx/onnx_pb.h>

namespace plugrt::differential {

namespace {

void set_type(onnx::ValueInfoProto* info, const Shape& shape, ElementType type) {
  onnx::TypeProto_Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(type));
  onnx::TensorShapeProto* dims = tensor->mutable_shape();
  for (int64_t dim : shape) dims->add_dim()->set_dim_value(dim);
}

void set_attribute(onnx::AttributeProto* proto, const Attr& attr) {
  proto->set_name(attr.name);
  switch (attr.kind) {
    case Attr::Kind::kInt:
      proto->set_type(onnx::AttributeProto_AttributeType_INT);
      proto->set_i(attr.ints.at(0));
      break;
    case Attr::Kind::kInts:
      proto->set_type(onnx::AttributeProto_AttributeType_INTS);
      for (int64_t value : attr.ints) proto->add_ints(value);
      break;
    case Attr::Kind::kFloat:
      proto->set_type(onnx::AttributeProto_AttributeType_FLOAT);
      proto->set_f(attr.real);
      break;
    case Attr::Kind::kString:
      proto->set_type(onnx::AttributeProto_AttributeType_STRING);
      proto->set_s(attr.text);
      break;
  }
}

}  // namespace

int64_t element_count(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

OnnxWriter::OnnxWriter() : model_(std::make_unique<onnx::ModelProto>()) {
  model_->set_ir_version(8);
  model_->set_producer_name("plugrt differential test");
  onnx::OperatorSetIdProto* opset = model_->add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  model_->mutable_graph()->set_name("random");
}

OnnxWriter::~OnnxWriter() = default;

Value OnnxWriter::input(Shape shape) {
  Value value{"x" + std::to_string(counter_++), std::move(shape)};
  onnx::ValueInfoProto* info = model_->mutable_graph()->add_input();
  info->set_name(value.name);
  set_type(info, value.shape, value.type);
  return value;
}

Value OnnxWriter::constant(Shape shape, std::vector<float> values) {
  Value value{"c" + std::to_string(counter_++), std::move(shape)};
  onnx::TensorProto* tensor = model_->mutable_graph()->add_initializer();
  tensor->set_name(value.name);
  tensor->set_data_type(onnx::TensorProto_DataType_FLOAT);
  for (int64_t dim : value.shape) tensor->add_dims(dim);
  for (float v : values) tensor->add_float_data(v);
  return value;
}

Value OnnxWriter::ints(std::vector<int64_t> values) {
  Value value{"i" + std::to_string(counter_++), {static_cast<int64_t>(values.size())}};
  onnx::TensorProto* tensor = model_->mutable_graph()->add_initializer();
  tensor->set_name(value.name);
  tensor->set_data_type(onnx::TensorProto_DataType_INT64);
  tensor->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) tensor->add_int64_data(v);
  return value;
}

Value OnnxWriter::integers(Shape shape, ElementType type, const std::vector<int32_t>& values) {
  Value value{"c" + std::to_string(counter_++), std::move(shape), type};
  onnx::TensorProto* tensor = model_->mutable_graph()->add_initializer();
  tensor->set_name(value.name);
  tensor->set_data_type(static_cast<int32_t>(type));
  for (int64_t dim : value.shape) tensor->add_dims(dim);
  for (int32_t v : values) tensor->add_int32_data(v);  // ONNX keeps 8-bit values in int32_data too
  return value;
}

Value OnnxWriter::node(const std::string& op, const std::vector<Value>& inputs, Shape shape,
                       const std::vector<Attr>& attrs, ElementType type) {
  Value out{"v" + std::to_string(counter_++), std::move(shape), type};
  onnx::NodeProto* node = model_->mutable_graph()->add_node();
  node->set_op_type(op);
  node->set_name(op + "_" + std::to_string(counter_++));
  for (const Value& input : inputs) node->add_input(input.name);
  node->add_output(out.name);
  for (const Attr& attr : attrs) set_attribute(node->add_attribute(), attr);
  return out;
}

std::vector<Value> OnnxWriter::node_outputs(const std::string& op, const std::vector<Value>& inputs,
                                            const std::vector<std::optional<Shape>>& shapes,
                                            const std::vector<Attr>& attrs) {
  onnx::NodeProto* node = model_->mutable_graph()->add_node();
  node->set_op_type(op);
  node->set_name(op + "_" + std::to_string(counter_++));
  for (const Value& input : inputs) node->add_input(input.name);
  std::vector<Value> outputs;
  for (const std::optional<Shape>& shape : shapes) {
    outputs.push_back(shape ? Value{"v" + std::to_string(counter_++), *shape, ElementType::kFloat} : Value{});
    node->add_output(outputs.back().name);
  }
  for (const Attr& attr : attrs) set_attribute(node->add_attribute(), attr);
  return outputs;
}

void OnnxWriter::output(const Value& value) {
  onnx::ValueInfoProto* info = model_->mutable_graph()->add_output();
  info->set_name(value.name);
  set_type(info, value.shape, value.type);
}

void OnnxWriter::metadata(const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto* entry = model_->add_metadata_props();
  entry->set_key(key);
  entry->set_value(value);
}

std::vector<uint8_t> OnnxWriter::serialise() const {
  std::string bytes;
  model_->SerializeToString(&bytes);
  return {bytes.begin(), bytes.end()};
}

}  // namespace plugrt::differential
