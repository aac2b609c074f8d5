// SPDX-License-Identifier: Apache-2.0
// ONNX type and shape inference, one node at a time. The importer drives it node by node
// (rather than through onnx::shape_inference::InferShapes) so that folded constants feed
// the inference of the nodes after them in the same pass, each failure is attributed to
// its node, and inputs that would crash ONNX's own inference code are refused first.
#include <algorithm>
#include <iterator>

#include <onnx/shape_inference/implementation.h>

#include "onnx_internal.h"

namespace plugrt::compiler::onnx_import {

namespace {

int64_t rank_of(const onnx::TypeProto* type) {
  if (type == nullptr || type->value_case() != onnx::TypeProto::kTensorType || !type->tensor_type().has_shape()) {
    return -1;
  }
  return type->tensor_type().shape().dim_size();
}

/// Ranks below which ONNX 1.12's inference of an op reads dimensions it never checked.
struct MinimumRank {
  const char* op_type;
  int input;
  int64_t rank;
};
constexpr MinimumRank kMinimumRanks[] = {
    {"Conv", 0, 2},
    {"ConvTranspose", 0, 2},
    {"ConvInteger", 0, 2},
    {"QLinearConv", 0, 2},
    {"MaxUnpool", 0, 2},
    {"MaxUnpool", 1, 2},
    {"STFT", 0, 3},
    // Its default axis, -1, plus a rank of 0 indexes dimension -1 of the Mean output.
    {"LayerNormalization", 0, 1},
};

/// Inputs whose length gives the rank of the output ({op, input}): inference adds that
/// many dimensions, so a crafted length of 2^40 would exhaust memory.
struct ShapeInput {
  const char* op_type;
  int input;
};
constexpr ShapeInput kShapeInputs[] = {{"ConstantOfShape", 0}, {"Reshape", 1}, {"Expand", 1}};
constexpr int64_t kMaxShapeLength = 64;  // far above any rank plugrt runs (8)

/// Convolutions whose inference takes the kernel's rank from the weights and indexes the
/// input's per-axis vectors with it: their ranks must agree. {op, data input, weights}.
struct SameRank {
  const char* op_type;
  int data;
  int weights;
};
constexpr SameRank kSameRanks[] = {
    {"Conv", 0, 1}, {"ConvTranspose", 0, 1}, {"ConvInteger", 0, 1}, {"QLinearConv", 0, 3}};

const onnx::AttributeProto* int_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name && attribute.type() == onnx::AttributeProto::INT) return &attribute;
  }
  return nullptr;
}

/// Refuses what would crash ONNX 1.12's inference functions, which index dimensions
/// with attribute values they do not always check. The reason alone on failure.
Status check_before_inference(const onnx::NodeProto& node, const std::vector<const onnx::TypeProto*>& inputs) {
  auto rank = [&inputs](int index) {
    return static_cast<size_t>(index) < inputs.size() ? rank_of(inputs[static_cast<size_t>(index)]) : -1;
  };
  // The loosest range ops give 'axis': [-rank, rank] (Flatten), [-rank - 1, rank] for
  // OneHot, whose axis counts in its output's rank.
  if (const onnx::AttributeProto* axis = int_attribute(node, "axis"); axis != nullptr && rank(0) >= 0) {
    const int64_t lowest = node.op_type() == "OneHot" ? -rank(0) - 1 : -rank(0);
    if (axis->i() < lowest || axis->i() > rank(0)) {
      return Status(Error::kInvalidArgument, "attribute 'axis' (" + std::to_string(axis->i()) +
                                                 ") is out of range for input 0 of rank " + std::to_string(rank(0)));
    }
  }
  if (const onnx::AttributeProto* batch_dims = int_attribute(node, "batch_dims"); batch_dims != nullptr) {
    const int64_t limit = std::min(rank(0), rank(1));
    if (batch_dims->i() < 0 || (limit >= 0 && batch_dims->i() >= limit)) {
      return Status(Error::kInvalidArgument, "attribute 'batch_dims' (" + std::to_string(batch_dims->i()) +
                                                 ") is out of range for its inputs' ranks");
    }
  }
  for (const ShapeInput& shape : kShapeInputs) {
    if (node.op_type() != shape.op_type || static_cast<size_t>(shape.input) >= inputs.size()) continue;
    const onnx::TypeProto* type = inputs[static_cast<size_t>(shape.input)];
    if (rank_of(type) != 1) continue;
    const onnx::TensorShapeProto::Dimension& length = type->tensor_type().shape().dim(0);
    if (length.has_dim_value() && length.dim_value() > kMaxShapeLength) {
      return Status(Error::kNotSupported, "input " + std::to_string(shape.input) + " gives the output " +
                                              std::to_string(length.dim_value()) + " dimensions");
    }
  }
  // convPoolShapeInference finds SAME padding by subtracting the stride from a spatial
  // dimension one step at a time: bound the dimensions so that it ends.
  static const char* const kConvPool[] = {"Conv", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool"};
  if (std::find_if(std::begin(kConvPool), std::end(kConvPool),
                   [&node](const char* op) { return node.op_type() == op; }) != std::end(kConvPool) &&
      rank(0) > 2) {
    for (const onnx::TensorShapeProto::Dimension& dim : inputs[0]->tensor_type().shape().dim()) {
      if (dim.has_dim_value() && dim.dim_value() > (int64_t{1} << 31)) {
        return Status(Error::kNotSupported,
                      "input 0 has a dimension of " + std::to_string(dim.dim_value()) + "; at most 2^31 is supported");
      }
    }
  }
  // blocksize squared divides the channels: keep the square far from overflowing.
  if (const onnx::AttributeProto* blocksize = int_attribute(node, "blocksize"); blocksize != nullptr) {
    if (blocksize->i() > (int64_t{1} << 15)) {
      return Status(Error::kInvalidArgument,
                    "attribute 'blocksize' (" + std::to_string(blocksize->i()) + ") is implausibly large");
    }
  }
  for (const MinimumRank& minimum : kMinimumRanks) {
    if (node.op_type() != minimum.op_type) continue;
    const int64_t r = rank(minimum.input);
    if (r >= 0 && r < minimum.rank) {
      return Status(Error::kInvalidArgument, "input " + std::to_string(minimum.input) + " has rank " +
                                                 std::to_string(r) + "; at least " + std::to_string(minimum.rank) +
                                                 " is needed");
    }
  }
  for (const SameRank& same : kSameRanks) {
    if (node.op_type() != same.op_type) continue;
    const int64_t data = rank(same.data), weights = rank(same.weights);
    if (data >= 0 && weights >= 0 && data != weights) {
      return Status(Error::kInvalidArgument, "input " + std::to_string(same.data) + " has rank " +
                                                 std::to_string(data) + " but the weights (input " +
                                                 std::to_string(same.weights) + ") have rank " +
                                                 std::to_string(weights));
    }
  }
  return Status::ok();
}

/// Einsum's type and dimensions, in place of ONNX 1.12's inference, which gives only a
/// rank and writes past the end of an array (ending the process) for an implicit output
/// whose letters are capitals ("BIJ,BJK"). Sets `failure` for an equation that does not
/// fit the inputs; leaves the output unknown when an input's rank is.
void infer_einsum(const onnx::NodeProto& node, const std::vector<const onnx::TypeProto*>& input_types,
                  std::vector<onnx::TypeProto>* outputs, std::string* failure) {
  outputs->assign(static_cast<size_t>(node.output_size()), onnx::TypeProto());
  std::string equation;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == "equation" && attribute.type() == onnx::AttributeProto::STRING) equation = attribute.s();
  }
  std::vector<std::vector<int64_t>> shapes;
  for (const onnx::TypeProto* type : input_types) {
    if (rank_of(type) < 0) return;
    std::vector<int64_t>& dims = shapes.emplace_back();
    for (const onnx::TensorShapeProto::Dimension& dim : type->tensor_type().shape().dim()) {
      dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    }
  }
  std::vector<int64_t> dims;
  if (outputs->empty() || shapes.empty()) return;
  if (!einsum_output_dims(equation, shapes, &dims)) {
    *failure = "the equation '" + equation + "' does not fit its " + std::to_string(shapes.size()) + " inputs' ranks";
    return;
  }
  onnx::TypeProto::Tensor* out = (*outputs)[0].mutable_tensor_type();
  out->set_elem_type(input_types[0]->tensor_type().elem_type());
  onnx::TensorShapeProto* shape = out->mutable_shape();
  shape->clear_dim();
  for (int64_t d : dims) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

/// The dims of a typed input; false when its rank is unknown.
bool dims_of(const onnx::TypeProto* type, std::vector<int64_t>* dims) {
  if (rank_of(type) < 0) return false;
  dims->clear();
  for (const onnx::TensorShapeProto::Dimension& dim : type->tensor_type().shape().dim()) {
    dims->push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  }
  return true;
}

/// The com.microsoft ops the importer takes (renamed "com.microsoft.<op>"), for which
/// ONNX has no schema: QLinearAdd and QLinearMul broadcast A (input 0) and B (input 3),
/// QLinearGlobalAveragePool keeps N and C (the last dim with channels_last) and sets the
/// other dims to 1. The output has A's (X's) element type.
void infer_contrib(const onnx::NodeProto& node, const std::vector<const onnx::TypeProto*>& input_types,
                   std::vector<onnx::TypeProto>* outputs) {
  if (outputs->size() != 1 || input_types.empty() || input_types[0] == nullptr ||
      input_types[0]->value_case() != onnx::TypeProto::kTensorType) {
    return;
  }
  std::vector<int64_t> dims;
  if (!dims_of(input_types[0], &dims)) return;
  if (node.op_type() == "com.microsoft.QLinearGlobalAveragePool") {
    if (dims.size() < 3) return;
    const onnx::AttributeProto* layout = int_attribute(node, "channels_last");
    const size_t channels = layout != nullptr && layout->i() != 0 ? dims.size() - 1 : 1;
    for (size_t axis = 1; axis < dims.size(); ++axis) {
      if (axis != channels) dims[axis] = 1;
    }
  } else {
    std::vector<int64_t> other;
    if (input_types.size() < 4 || !dims_of(input_types[3], &other)) return;
    if (other.size() > dims.size()) std::swap(dims, other);
    const size_t offset = dims.size() - other.size();
    for (size_t k = 0; k < other.size(); ++k) {
      int64_t& d = dims[offset + k];
      const int64_t e = other[k];
      if (d == 1 || (d == -1 && e > 1)) {
        d = e;
      } else if (e != 1 && e != -1 && d != -1 && d != e) {
        return;  // does not broadcast: left to the kernel's check
      }
    }
  }
  onnx::TypeProto::Tensor* out = (*outputs)[0].mutable_tensor_type();
  out->set_elem_type(input_types[0]->tensor_type().elem_type());
  onnx::TensorShapeProto* shape = out->mutable_shape();
  for (int64_t d : dims) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

}  // namespace

Status infer_node(const onnx::NodeProto& node, const onnx::OpSchema* schema,
                  const std::unordered_map<std::string, onnx::TypeProto*>& types,
                  const std::unordered_map<std::string, const onnx::TensorProto*>& data,
                  std::vector<onnx::TypeProto>* outputs, std::string* failure) {
  outputs->assign(static_cast<size_t>(node.output_size()), onnx::TypeProto());
  failure->clear();
  std::vector<const onnx::TypeProto*> input_types;
  for (const std::string& input : node.input()) {
    auto it = input.empty() ? types.end() : types.find(input);
    input_types.push_back(it != types.end() ? it->second : nullptr);
  }
  PLUGRT_RETURN_IF_ERROR(check_before_inference(node, input_types));
  if (node.op_type().rfind("com.microsoft.", 0) == 0) {
    infer_contrib(node, input_types, outputs);
    return Status::ok();
  }
  if (node.op_type().rfind("ai.onnx.preview.training.", 0) == 0) {
    // Adagrad, Adam, Momentum: inputs R, T, then the tensors each output updates, in
    // the outputs' order; output k is of input k + 2's type.
    for (size_t k = 0; k < outputs->size() && k + 2 < input_types.size(); ++k) {
      if (input_types[k + 2] != nullptr) (*outputs)[k] = *input_types[k + 2];
    }
    return Status::ok();
  }
  if (schema == nullptr) return Status::ok();
  // Several of ONNX's inference functions dereference an input's type unchecked: a
  // node with an input of unknown type (its producer's inference failed) is not inferred.
  for (size_t k = 0; k < input_types.size(); ++k) {
    const onnx::TypeProto* type = input_types[k];
    if (!node.input(static_cast<int>(k)).empty() &&
        (type == nullptr || type->value_case() == onnx::TypeProto::VALUE_NOT_SET)) {
      return Status::ok();
    }
  }
  if (node.op_type() == "Einsum") {
    infer_einsum(node, input_types, outputs, failure);
    return Status::ok();
  }
  onnx::NodeProto copy = node;  // the context wants a mutable node
  const std::unordered_map<std::string, const onnx::SparseTensorProto*> no_sparse_data;
  try {
    onnx::shape_inference::InferenceContextImpl context(copy, types, data, no_sparse_data);
    if (schema->has_type_and_shape_inference_function()) {
      schema->GetTypeAndShapeInferenceFunction()(context);
    } else if (schema->HasFunction() && schema->GetFunction() != nullptr) {
      onnx::shape_inference::InferShapeForFunctionNode(*schema->GetFunction(), onnx::OpSchemaRegistry::Instance(),
                                                       context);
    }
    for (size_t k = 0; k < outputs->size(); ++k) (*outputs)[k] = *context.getOutputType(k);
  } catch (const std::exception& e) {
    *failure = e.what();
    outputs->assign(static_cast<size_t>(node.output_size()), onnx::TypeProto());
  }
  return Status::ok();
}

}  // namespace plugrt::compiler::onnx_import
