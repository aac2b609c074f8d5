// SPDX-License-Identifier: Apache-2.0
// The ONNX importer's conversions: element types, TensorProto <-> constant bytes,
// TypeProto -> static shapes, attributes (with the schema's defaults).
#include <cstring>
#include <map>

#include "onnx_internal.h"

namespace plugrt::compiler::onnx_import {

std::string onnx_type_name(int32_t elem_type) {
  if (onnx::TensorProto_DataType_IsValid(elem_type)) {
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
  }
  return "type " + std::to_string(elem_type);
}

bool is_supported_elem_type(int32_t elem_type) { return is_known_dtype(elem_type); }

ValueType value_type_of(const onnx::TypeProto& type) {
  ValueType result;
  if (type.value_case() != onnx::TypeProto::kTensorType) {
    result.non_tensor = type.value_case() != onnx::TypeProto::VALUE_NOT_SET;
    return result;
  }
  const onnx::TypeProto::Tensor& tensor = type.tensor_type();
  if (tensor.elem_type() == onnx::TensorProto::UNDEFINED) return result;
  result.known = true;
  result.elem_type = tensor.elem_type();
  if (!tensor.has_shape()) return result;
  result.has_shape = true;
  for (const onnx::TensorShapeProto::Dimension& dim : tensor.shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      result.dims.push_back(dim.dim_value());
      result.dim_names.emplace_back();
    } else {
      result.dims.push_back(-1);
      result.dim_names.push_back(dim.has_dim_param() ? dim.dim_param() : std::string());
    }
  }
  return result;
}

std::string describe_dims(const ValueType& type) {
  if (!type.has_shape) return "(unknown rank)";
  std::string text = "[";
  for (size_t i = 0; i < type.dims.size(); ++i) {
    if (i > 0) text += ",";
    if (type.dims[i] >= 0) {
      text += std::to_string(type.dims[i]);
    } else {
      text += type.dim_names[i].empty() ? "?" : type.dim_names[i];
    }
  }
  return text + "]";
}

bool element_count(const std::vector<int64_t>& shape, size_t element_size, uint64_t* count) {
  uint64_t n = 1;
  const uint64_t limit = kMaxTensorBytes / (element_size == 0 ? 1 : element_size);
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && n > limit / static_cast<uint64_t>(d)) return false;
    n *= static_cast<uint64_t>(d);
  }
  *count = n;
  return true;
}

namespace {

template <typename Field, typename Store>
std::vector<uint8_t> pack(const Field& field, size_t element_size, Store store) {
  std::vector<uint8_t> bytes(static_cast<size_t>(field.size()) * element_size);
  for (int i = 0; i < field.size(); ++i) store(field.Get(i), bytes.data() + static_cast<size_t>(i) * element_size);
  return bytes;
}

}  // namespace

Status tensor_from_proto(const onnx::TensorProto& proto, Tensor* tensor) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL || proto.external_data_size() > 0) {
    return Status(Error::kNotSupported, "stores its data externally (external data is not supported)");
  }
  if (proto.has_segment()) {
    return Status(Error::kNotSupported, "is a segment of a tensor (segments are not supported)");
  }
  if (!is_supported_elem_type(proto.data_type())) {
    return Status(Error::kNotSupported,
                  "has type " + onnx_type_name(proto.data_type()) + ", which plugrt does not support");
  }
  tensor->dtype = static_cast<DType>(proto.data_type());
  tensor->shape.assign(proto.dims().begin(), proto.dims().end());
  const size_t element_size = dtype_size(tensor->dtype);
  uint64_t count = 0;
  if (!element_count(tensor->shape, element_size, &count)) {
    return Status(Error::kInvalidArgument, "has a negative dimension or more than 2^40 bytes");
  }
  const uint64_t expected = count * element_size;
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != expected) {
      return Status(Error::kInvalidArgument, "holds " + std::to_string(proto.raw_data().size()) +
                                                 " bytes of raw data; its type and shape need " +
                                                 std::to_string(expected));
    }
    tensor->bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
    return Status::ok();
  }
  size_t field_count = 0;
  switch (tensor->dtype) {
    case DType::kFloat32:
      field_count = static_cast<size_t>(proto.float_data_size());
      tensor->bytes = pack(proto.float_data(), 4, [](float v, uint8_t* out) { std::memcpy(out, &v, 4); });
      break;
    case DType::kInt64:
      field_count = static_cast<size_t>(proto.int64_data_size());
      tensor->bytes = pack(proto.int64_data(), 8, [](int64_t v, uint8_t* out) { std::memcpy(out, &v, 8); });
      break;
    case DType::kInt32:
      field_count = static_cast<size_t>(proto.int32_data_size());
      tensor->bytes = pack(proto.int32_data(), 4, [](int32_t v, uint8_t* out) { std::memcpy(out, &v, 4); });
      break;
    case DType::kFloat16:  // int32_data holds the bits
      field_count = static_cast<size_t>(proto.int32_data_size());
      tensor->bytes = pack(proto.int32_data(), 2, [](int32_t v, uint8_t* out) {
        const auto bits = static_cast<uint16_t>(v);
        std::memcpy(out, &bits, 2);
      });
      break;
    case DType::kBool:
      field_count = static_cast<size_t>(proto.int32_data_size());
      tensor->bytes = pack(proto.int32_data(), 1, [](int32_t v, uint8_t* out) { *out = v != 0 ? 1 : 0; });
      break;
    case DType::kUInt8:
    case DType::kInt8:
      field_count = static_cast<size_t>(proto.int32_data_size());
      tensor->bytes = pack(proto.int32_data(), 1, [](int32_t v, uint8_t* out) { *out = static_cast<uint8_t>(v); });
      break;
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kBFloat16:  // int32_data holds the bits
      field_count = static_cast<size_t>(proto.int32_data_size());
      tensor->bytes = pack(proto.int32_data(), 2, [](int32_t v, uint8_t* out) {
        const auto bits = static_cast<uint16_t>(v);
        std::memcpy(out, &bits, 2);
      });
      break;
    case DType::kDouble:
      field_count = static_cast<size_t>(proto.double_data_size());
      tensor->bytes = pack(proto.double_data(), 8, [](double v, uint8_t* out) { std::memcpy(out, &v, 8); });
      break;
    case DType::kUInt32:
      field_count = static_cast<size_t>(proto.uint64_data_size());
      tensor->bytes = pack(proto.uint64_data(), 4, [](uint64_t v, uint8_t* out) {
        const auto narrow = static_cast<uint32_t>(v);
        std::memcpy(out, &narrow, 4);
      });
      break;
    case DType::kUInt64:
      field_count = static_cast<size_t>(proto.uint64_data_size());
      tensor->bytes = pack(proto.uint64_data(), 8, [](uint64_t v, uint8_t* out) { std::memcpy(out, &v, 8); });
      break;
    case DType::kUndefined: break;
  }
  if (field_count != count) {
    return Status(Error::kInvalidArgument,
                  "holds " + std::to_string(field_count) + " elements; its shape needs " + std::to_string(count));
  }
  return Status::ok();
}

onnx::TypeProto type_proto_of(const Tensor& tensor) {
  onnx::TypeProto type;
  onnx::TypeProto::Tensor* t = type.mutable_tensor_type();
  t->set_elem_type(static_cast<int32_t>(tensor.dtype));
  onnx::TensorShapeProto* shape = t->mutable_shape();
  for (int64_t d : tensor.shape) shape->add_dim()->set_dim_value(d);
  return type;
}

bool tensor_ints(const Tensor& tensor, std::vector<int64_t>* values) {
  if (tensor.shape.size() > 1) return false;
  values->clear();
  if (tensor.dtype == DType::kInt64) {
    values->resize(tensor.bytes.size() / sizeof(int64_t));
    if (!values->empty()) std::memcpy(values->data(), tensor.bytes.data(), values->size() * sizeof(int64_t));
  } else if (tensor.dtype == DType::kInt32) {
    for (size_t k = 0; k + sizeof(int32_t) <= tensor.bytes.size(); k += sizeof(int32_t)) {
      int32_t v = 0;
      std::memcpy(&v, tensor.bytes.data() + k, sizeof(v));
      values->push_back(v);
    }
  } else {
    return false;
  }
  return true;
}

Tensor int64_tensor(const std::vector<int64_t>& values, std::vector<int64_t> shape) {
  Tensor tensor;
  tensor.dtype = DType::kInt64;
  tensor.shape = std::move(shape);
  tensor.bytes.resize(values.size() * sizeof(int64_t));
  if (!values.empty()) std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

namespace {

/// `value` as element type `dtype`, appended to `bytes`; false for a type it cannot write.
bool append_element(DType dtype, double value, std::vector<uint8_t>* bytes) {
  auto put = [bytes](auto element) {
    const auto* raw = reinterpret_cast<const uint8_t*>(&element);
    bytes->insert(bytes->end(), raw, raw + sizeof(element));
  };
  switch (dtype) {
    case DType::kFloat32: put(static_cast<float>(value)); return true;
    case DType::kDouble: put(value); return true;
    case DType::kInt64: put(static_cast<int64_t>(value)); return true;
    case DType::kInt32: put(static_cast<int32_t>(value)); return true;
    case DType::kInt16: put(static_cast<int16_t>(value)); return true;
    case DType::kInt8: put(static_cast<int8_t>(value)); return true;
    case DType::kUInt8: put(static_cast<uint8_t>(value)); return true;
    case DType::kBool: put(static_cast<uint8_t>(value != 0)); return true;
    default: return false;
  }
}

}  // namespace

Result<onnx::TensorProto> bound_input(const onnx::ValueInfoProto& input, const std::vector<double>& values,
                                      const std::map<std::string, std::vector<int64_t>>& shapes) {
  const std::string where = "input '" + input.name() + "' (bound with a value)";
  const ValueType declared = value_type_of(input.type());
  if (!declared.known) return Status(Error::kNotSupported, where + ": not a tensor");
  Tensor tensor;
  tensor.dtype = static_cast<DType>(declared.elem_type);
  if (auto given = shapes.find(input.name()); given != shapes.end()) {
    tensor.shape = given->second;
  } else if (declared.is_static()) {
    tensor.shape = declared.dims;
  } else if (declared.has_shape && declared.dims.size() == 1) {
    tensor.shape = {static_cast<int64_t>(values.size())};
  } else if (!declared.has_shape || !declared.dims.empty()) {
    return Status(Error::kInvalidArgument,
                  where + ": its shape " + describe_dims(declared) + " is not static; give it with --input-shape");
  }
  int64_t count = 1;
  for (int64_t dim : tensor.shape) count *= dim;
  if (count != static_cast<int64_t>(values.size())) {
    ValueType shape;
    shape.known = shape.has_shape = true;
    shape.dims = tensor.shape;
    return Status(Error::kInvalidArgument, where + ": its shape " + describe_dims(shape) + " holds " +
                                               std::to_string(count) + " values, " + std::to_string(values.size()) +
                                               " were given");
  }
  for (double value : values) {
    if (!append_element(tensor.dtype, value, &tensor.bytes)) {
      return Status(Error::kNotSupported,
                    where + ": values of type " + onnx_type_name(declared.elem_type) + " cannot be given");
    }
  }
  onnx::TensorProto proto;
  tensor_to_proto(tensor, input.name(), &proto);
  return proto;
}

void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(static_cast<int32_t>(tensor.dtype));
  for (int64_t d : tensor.shape) proto->add_dims(d);
  proto->set_raw_data(std::string(tensor.bytes.begin(), tensor.bytes.end()));
}

namespace {

/// One AttributeProto as a graph IR attribute; false when its kind has no equivalent.
bool convert_attribute(const onnx::AttributeProto& proto, const std::string& name, Attribute* out) {
  switch (proto.type()) {
    case onnx::AttributeProto::FLOAT: *out = Attribute::Float(name, proto.f()); return true;
    case onnx::AttributeProto::INT: *out = Attribute::Int(name, proto.i()); return true;
    case onnx::AttributeProto::STRING: *out = Attribute::String(name, proto.s()); return true;
    case onnx::AttributeProto::FLOATS:
      *out = Attribute::Floats(name, std::vector<float>(proto.floats().begin(), proto.floats().end()));
      return true;
    case onnx::AttributeProto::INTS:
      *out = Attribute::Ints(name, std::vector<int64_t>(proto.ints().begin(), proto.ints().end()));
      return true;
    case onnx::AttributeProto::STRINGS: {
      // The graph IR has no list of strings: the items travel joined by commas (the
      // recurrent ops' `activations`), so an item holding a comma cannot be carried.
      std::string joined;
      for (int k = 0; k < proto.strings_size(); ++k) {
        if (proto.strings(k).find(',') != std::string::npos) return false;
        joined += (k == 0 ? "" : ",") + proto.strings(k);
      }
      *out = Attribute::String(name, joined);
      return true;
    }
    default: return false;
  }
}

/// ConstantOfShape's `value`, a one-element tensor, as the two ints the graph IR can
/// carry: `value_dtype` (its ONNX element type) and `value_bits` (its bytes, little-endian,
/// zero-extended).
Status convert_fill_value(const onnx::AttributeProto& proto, std::vector<Attribute>* attributes) {
  Tensor fill;
  if (proto.type() != onnx::AttributeProto::TENSOR) {
    return Status(Error::kInvalidArgument, "attribute 'value' must be a tensor");
  }
  PLUGRT_RETURN_IF_ERROR(tensor_from_proto(proto.t(), &fill));
  if (fill.bytes.size() != dtype_size(fill.dtype) || fill.bytes.size() > sizeof(uint64_t)) {
    return Status(Error::kNotSupported, "attribute 'value' must be a tensor of one element of at most 8 bytes");
  }
  uint64_t bits = 0;
  std::memcpy(&bits, fill.bytes.data(), fill.bytes.size());
  attributes->push_back(Attribute::Int("value_dtype", static_cast<int64_t>(fill.dtype)));
  attributes->push_back(Attribute::Int("value_bits", static_cast<int64_t>(bits)));
  return Status::ok();
}

std::string attribute_kind_name(onnx::AttributeProto::AttributeType type) {
  switch (type) {
    case onnx::AttributeProto::TENSOR: return "a tensor";
    case onnx::AttributeProto::SPARSE_TENSOR: return "a sparse tensor";
    case onnx::AttributeProto::GRAPH: return "a graph (subgraphs are not supported)";
    case onnx::AttributeProto::TYPE_PROTO: return "a type";
    case onnx::AttributeProto::STRINGS: return "a list of strings (one holds a comma)";
    case onnx::AttributeProto::TENSORS: return "a list of tensors";
    case onnx::AttributeProto::GRAPHS: return "a list of graphs (subgraphs are not supported)";
    case onnx::AttributeProto::SPARSE_TENSORS: return "a list of sparse tensors";
    case onnx::AttributeProto::TYPE_PROTOS: return "a list of types";
    default: return "of unknown kind " + std::to_string(static_cast<int>(type));
  }
}

}  // namespace

Status convert_attributes(const onnx::NodeProto& node, const onnx::OpSchema* schema,
                          std::vector<Attribute>* attributes) {
  attributes->clear();
  std::map<std::string, bool> present;
  for (const onnx::AttributeProto& proto : node.attribute()) {
    Attribute attribute;
    if (node.op_type() == "ConstantOfShape" && proto.name() == "value") {
      PLUGRT_RETURN_IF_ERROR(convert_fill_value(proto, attributes));
      present[proto.name()] = true;
      continue;
    }
    if (!convert_attribute(proto, proto.name(), &attribute)) {
      return Status(Error::kNotSupported, "attribute '" + proto.name() + "' is " + attribute_kind_name(proto.type()) +
                                              ", which plugrt's graph IR cannot carry");
    }
    present[proto.name()] = true;
    attributes->push_back(std::move(attribute));
  }
  if (schema == nullptr) return Status::ok();
  for (const auto& [name, spec] : schema->attributes()) {
    if (present.count(name) != 0 || spec.default_value.type() == onnx::AttributeProto::UNDEFINED) continue;
    Attribute attribute;
    // Defaults of other kinds (ConstantOfShape's tensor) are left for the reader.
    if (convert_attribute(spec.default_value, name, &attribute)) attributes->push_back(std::move(attribute));
  }
  return Status::ok();
}

}  // namespace plugrt::compiler::onnx_import
