// SPDX-License-Identifier: Apache-2.0
// Constant folding for the ONNX importer: a node whose inputs are all constant is run at
// import, as a one-node graph on the built-in portable backend (ConstantOfShape and
// Range, which it lacks, are computed here), and replaced by its results.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "onnx_internal.h"
#include "plugrt/backend.h"
#include "plugrt/builtin_backends.h"

namespace plugrt::compiler::onnx_import {

namespace {

/// The int64 elements of a constant, or false when it is not int64.
bool int64_values(const Tensor& tensor, std::vector<int64_t>* values) {
  if (tensor.dtype != DType::kInt64) return false;
  values->resize(tensor.bytes.size() / 8);
  if (!values->empty()) std::memcpy(values->data(), tensor.bytes.data(), values->size() * 8);
  return true;
}

bool fold_constant_of_shape(const onnx::NodeProto& node, const std::vector<const Tensor*>& inputs,
                            std::vector<Tensor>* outputs) {
  if (inputs.size() != 1 || inputs[0] == nullptr || node.output_size() != 1) return false;
  std::vector<int64_t> shape;
  if (!int64_values(*inputs[0], &shape) || inputs[0]->shape.size() != 1) return false;
  Tensor fill;
  fill.dtype = DType::kFloat32;
  fill.bytes.assign(4, 0);  // the default: float 0
  if (const onnx::AttributeProto* value = find_attribute(node, "value"); value != nullptr) {
    if (value->type() != onnx::AttributeProto::TENSOR) return false;
    if (!tensor_from_proto(value->t(), &fill).is_ok() || fill.bytes.size() != dtype_size(fill.dtype)) return false;
  }
  const size_t element_size = dtype_size(fill.dtype);
  uint64_t count = 0;
  if (!element_count(shape, element_size, &count) || count * element_size > kMaxFoldedBytes) return false;
  Tensor& out = (*outputs)[0];
  out.dtype = fill.dtype;
  out.shape = shape;
  out.bytes.resize(static_cast<size_t>(count) * element_size);
  for (size_t i = 0; i < count; ++i) std::memcpy(out.bytes.data() + i * element_size, fill.bytes.data(), element_size);
  return true;
}

template <typename T>
bool fill_range(const std::vector<const Tensor*>& inputs, Tensor* out) {
  T v[3];
  for (int k = 0; k < 3; ++k) std::memcpy(&v[k], inputs[static_cast<size_t>(k)]->bytes.data(), sizeof(T));
  const T start = v[0], limit = v[1], delta = v[2];
  if (delta == T(0)) return false;
  const double steps =
      std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
  if (!(steps <= static_cast<double>(kMaxFoldedBytes / sizeof(T)))) return false;  // also refuses NaN
  const auto count = static_cast<size_t>(std::max(steps, 0.0));
  out->shape = {static_cast<int64_t>(count)};
  out->bytes.resize(count * sizeof(T));
  for (size_t i = 0; i < count; ++i) {
    const T value = static_cast<T>(start + static_cast<T>(i) * delta);
    std::memcpy(out->bytes.data() + i * sizeof(T), &value, sizeof(T));
  }
  return true;
}

bool fold_range(const onnx::NodeProto& node, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs) {
  if (inputs.size() != 3 || node.output_size() != 1) return false;
  for (const Tensor* input : inputs) {
    if (input == nullptr || input->dtype != inputs[0]->dtype || input->bytes.size() != dtype_size(input->dtype)) {
      return false;
    }
  }
  Tensor& out = (*outputs)[0];
  out.dtype = inputs[0]->dtype;
  switch (out.dtype) {
    case DType::kFloat32: return fill_range<float>(inputs, &out);
    case DType::kInt32: return fill_range<int32_t>(inputs, &out);
    case DType::kInt64: return fill_range<int64_t>(inputs, &out);
    default: return false;
  }
}

/// Runs the node on the built-in portable backend as a one-node graph.
bool fold_on_portable(const onnx::NodeProto& node, int64_t opset, const onnx::OpSchema* schema,
                      const std::vector<const Tensor*>& inputs, const std::vector<ValueType>& output_types,
                      std::vector<Tensor>* outputs) {
  std::vector<Attribute> attributes;
  if (!convert_attributes(node, schema, &attributes).is_ok()) return false;
  GraphBuilder builder(static_cast<int>(opset));
  std::vector<ValueId> input_ids;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor* input = inputs[k];
    input_ids.push_back(input == nullptr ? kNoValue
                                         : builder.add_constant(node.input(static_cast<int>(k)), input->dtype,
                                                                input->shape, input->bytes));
  }
  std::vector<ValueId> output_ids;
  std::vector<size_t> produced;  // node output index of each graph output
  for (int k = 0; k < node.output_size(); ++k) {
    const auto index = static_cast<size_t>(k);
    if (node.output(k).empty()) {
      output_ids.push_back(kNoValue);
      continue;
    }
    const ValueType& type = output_types[index];
    if (!type.is_static() || !is_supported_elem_type(type.elem_type)) return false;
    Tensor& out = (*outputs)[index];
    out.dtype = static_cast<DType>(type.elem_type);
    out.shape = type.dims;
    uint64_t count = 0;
    if (!element_count(out.shape, dtype_size(out.dtype), &count) || count * dtype_size(out.dtype) > kMaxFoldedBytes) {
      return false;
    }
    out.bytes.resize(static_cast<size_t>(count) * dtype_size(out.dtype));
    const ValueId id = builder.add_value(node.output(k), out.dtype, out.shape);
    output_ids.push_back(id);
    builder.add_output(id);
    produced.push_back(index);
  }
  if (produced.empty()) return false;
  builder.add_node(node.op_type(), node.name(), input_ids, output_ids, std::move(attributes));
  const std::vector<uint8_t> blob = builder.finish();
  InitOptions options;
  options.blob = blob.data();
  options.blob_size = blob.size();
  Result<DelegateHandle> handle = builtin_portable_backend().init(options);
  if (!handle.is_ok()) return false;

  static uint8_t empty_tensor_storage = 0;  // a non-null address for tensors without elements
  std::vector<DLTensor> tensors(produced.size());
  std::vector<const DLTensor*> pointers;
  for (size_t i = 0; i < produced.size(); ++i) {
    Tensor& out = (*outputs)[produced[i]];
    DLTensor& t = tensors[i];
    t.data = out.bytes.empty() ? &empty_tensor_storage : out.bytes.data();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(out.shape.size());
    t.dtype = to_dlpack(out.dtype);
    t.shape = out.shape.data();
    t.strides = nullptr;
    t.byte_offset = 0;
    pointers.push_back(&t);
  }
  return handle->execute(Span<const DLTensor* const>(), Span<const DLTensor* const>(pointers.data(), pointers.size()))
      .is_ok();
}

}  // namespace

bool fold_node(const onnx::NodeProto& node, int64_t opset, const onnx::OpSchema* schema,
               const std::vector<const Tensor*>& inputs, const std::vector<ValueType>& output_types,
               std::vector<Tensor>* outputs) {
  outputs->assign(static_cast<size_t>(node.output_size()), Tensor{});
  if (node.op_type() == "ConstantOfShape") return fold_constant_of_shape(node, inputs, outputs);
  if (node.op_type() == "Range") return fold_range(node, inputs, outputs);
  return fold_on_portable(node, opset, schema, inputs, output_types, outputs);
}

Tensor fold_shape_of(const onnx::NodeProto& node, const std::vector<int64_t>& dims) {
  if (node.op_type() == "Size") {
    uint64_t count = 1;  // the dims are those of a valid static tensor: no overflow
    for (int64_t d : dims) count *= static_cast<uint64_t>(d);
    return int64_tensor({static_cast<int64_t>(count)}, {});  // a scalar
  }
  const auto rank = static_cast<int64_t>(dims.size());
  int64_t start = 0, end = rank;
  if (const onnx::AttributeProto* a = find_attribute(node, "start"); a != nullptr) start = a->i();
  if (const onnx::AttributeProto* a = find_attribute(node, "end"); a != nullptr) end = a->i();
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> values;
  for (int64_t axis = start; axis < end; ++axis) values.push_back(dims[static_cast<size_t>(axis)]);
  return int64_tensor(values, {static_cast<int64_t>(values.size())});
}

}  // namespace plugrt::compiler::onnx_import
