// SPDX-License-Identifier: Apache-2.0
// Pieces of the ONNX importer shared by its source files (onnx_importer.cc,
// onnx_tensors.cc, onnx_folding.cc). Not part of plugrt::compiler's interface.
#ifndef PLUGRT_TOOLS_COMPILER_ONNX_INTERNAL_H_
#define PLUGRT_TOOLS_COMPILER_ONNX_INTERNAL_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include "plugrt/dtype.h"
#include "plugrt/graph_builder.h"
#include "plugrt/status.h"

namespace plugrt::compiler::onnx_import {

/// A constant: its dtype, static shape and little-endian element bytes.
struct Tensor {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// What shape inference (or the model) says about a value.
struct ValueType {
  bool known = false;                  ///< a tensor type with an element type
  bool non_tensor = false;             ///< a sequence, map, optional or sparse type
  int32_t elem_type = 0;               ///< ONNX TensorProto.DataType code
  bool has_shape = false;              ///< a rank is known
  std::vector<int64_t> dims;           ///< -1 where a dimension is unknown or symbolic
  std::vector<std::string> dim_names;  ///< the symbol of each dynamic dimension, or ""

  bool is_static() const {
    if (!known || !has_shape) return false;
    for (int64_t d : dims) {
      if (d < 0) return false;
    }
    return true;
  }
};

/// The most bytes a single tensor may hold (as the portable backend's limit).
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;
/// Folding never produces a tensor larger than this (guards against Expand or
/// ConstantOfShape blowing a model up at import).
inline constexpr uint64_t kMaxFoldedBytes = uint64_t{256} << 20;

/// ONNX's name of an element type code ("DOUBLE"), or "type <n>" for an unknown code.
std::string onnx_type_name(int32_t elem_type);
/// Whether plugrt has a DType for the ONNX element type (the codes are the same).
bool is_supported_elem_type(int32_t elem_type);

/// The ValueType of a TypeProto (known == false when it is not a tensor type).
ValueType value_type_of(const onnx::TypeProto& type);
/// "[1,3,224,224]" with "?" (or the symbol) for dynamic dimensions.
std::string describe_dims(const ValueType& type);

/// Number of elements for `shape`, or false when a dimension is negative or the tensor
/// would exceed kMaxTensorBytes at `element_size` bytes per element.
bool element_count(const std::vector<int64_t>& shape, size_t element_size, uint64_t* count);

/// Decodes a TensorProto (raw_data or the typed fields). The Status message is the
/// reason alone ("has type DOUBLE, which plugrt does not support"), for the caller to
/// prefix with what the tensor is.
Status tensor_from_proto(const onnx::TensorProto& proto, Tensor* tensor);
/// The TypeProto of a constant.
onnx::TypeProto type_proto_of(const Tensor& tensor);
/// Writes `tensor` as a TensorProto with raw_data.
void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto);
/// An int64 constant of these values and shape (its element count: values.size()).
Tensor int64_tensor(const std::vector<int64_t>& values, std::vector<int64_t> shape);
/// The integers of an int64 or int32 tensor of rank 0 or 1; false for another type or rank.
bool tensor_ints(const Tensor& tensor, std::vector<int64_t>* values);
/// The initializer that binds graph input `input` to `values` (ImportOptions::input_values),
/// in its declared dtype, its shape taken from the declaration, `shapes` (by input name),
/// or the count of values. The message names the input and what does not fit.
Result<onnx::TensorProto> bound_input(const onnx::ValueInfoProto& input, const std::vector<double>& values,
                                      const std::map<std::string, std::vector<int64_t>>& shapes);

/// The node's attributes for the graph IR, with the schema's defaults filled in for those
/// the node leaves out. The Status message is the reason alone.
Status convert_attributes(const onnx::NodeProto& node, const onnx::OpSchema* schema,
                          std::vector<Attribute>* attributes);

/// Evaluates a node whose inputs are all constant. `inputs` has nullptr for absent
/// optional inputs; `output_types` are the inferred types of its outputs (entries for
/// unnamed outputs are ignored). Returns false, leaving `outputs` unspecified, when the
/// node cannot be evaluated here (the node then stays in the graph); `outputs` gets one
/// tensor per output of the node (empty for unnamed ones) on success.
bool fold_node(const onnx::NodeProto& node, int64_t opset, const onnx::OpSchema* schema,
               const std::vector<const Tensor*>& inputs, const std::vector<ValueType>& output_types,
               std::vector<Tensor>* outputs);

/// Runs ONNX's type and shape inference for one node: `types` has what is known of the
/// values by name, `data` the constants inference may read. `outputs` gets one TypeProto
/// per node output (empty where inference says nothing, as when an input's type is
/// unknown); `failure` gets ONNX's message when its inference throws (the outputs are
/// then unknown). An error Status (the reason alone) refuses inputs that would crash
/// ONNX's inference code.
Status infer_node(const onnx::NodeProto& node, const onnx::OpSchema* schema,
                  const std::unordered_map<std::string, onnx::TypeProto*>& types,
                  const std::unordered_map<std::string, const onnx::TensorProto*>& data,
                  std::vector<onnx::TypeProto>* outputs, std::string* failure);

/// Refuses attributes the importer cannot carry or ONNX's own code would choke on
/// (lists of subgraphs, subgraphs outside If, Loop and Scan, strides of 0, sparse or
/// string constants). The
/// reason alone on failure.
Status check_node_attributes(const onnx::NodeProto& node);
/// Puts the nodes in topological order, keeping the model's order where it already is
/// one. A graph with a cycle or an undefined input is left as it is, for the checker.
void sort_nodes(onnx::GraphProto* graph);
/// Drops the nodes none of whose outputs reaches one of `outputs`.
void remove_dead_nodes(onnx::GraphProto* graph, const std::set<std::string>& outputs);

/// Rewrites each QDQ group of a Conv or MatMul (DequantizeLinear of an 8-bit activation
/// and of 8-bit constant weights, an int32 bias dequantized by x_scale * w_scale, one
/// QuantizeLinear after it) into one QLinearConv or QLinearMatMul (onnx_qdq.cc); the
/// QuantizeLinear is left without readers for remove_dead_nodes. Returns how many.
size_t fuse_qdq_groups(onnx::GraphProto* graph, const std::map<std::string, Tensor>& constants,
                       const std::set<std::string>& graph_outputs);
/// The node's attribute called `name`, or nullptr.
const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name);
/// A node of `op_type` in the default domain.
onnx::NodeProto make_node(const std::string& op_type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name);
/// Adds the int attribute `name` to `node`.
void set_int_attribute(onnx::NodeProto* node, const std::string& name, int64_t value);
/// The value of a Constant node (value, value_float(s), value_int(s)); the reason alone
/// on failure.
Status constant_node_value(const onnx::NodeProto& node, Tensor* tensor);
/// Whether a Dropout passes its input through: training mode absent or a constant
/// false, and its mask output absent or not in `consumed`.
bool is_inference_dropout(const onnx::NodeProto& node, const std::set<std::string>& consumed,
                          const std::map<std::string, Tensor>& constants);

/// Upgrades a model of default-domain opset `from` to opset `to` with ONNX's version
/// converter; kNotSupported with the converter's reason (alone) when it cannot.
Status upgrade_opset(onnx::ModelProto* model, int64_t from, int64_t to);
/// Rewrites a model of default-domain opset 18 to 21 as opset 17 (onnx_newer_opsets.cc).
/// Errors (kNotSupported) name the node, its op and opset, and what has no opset-17 form.
Status lower_to_opset_17(onnx::ModelProto* model, int64_t opset);

/// Rewrites a model whose graph computes float16 or bfloat16 to compute in float32
/// (onnx_half_precision.cc): constants widened, a Cast at each half input and output of
/// the graph, whose types stay. False when the model has no half value.
Result<bool> compute_half_in_float32(onnx::ModelProto* model);

/// Shape (with opset 15's start and end) or Size of a value of static shape `dims`.
Tensor fold_shape_of(const onnx::NodeProto& node, const std::vector<int64_t>& dims);

/// Einsum's output dimensions from its equation and input shapes (-1 for unknown
/// dimensions); false when the equation does not parse or fit the inputs (onnx_einsum.cc).
bool einsum_output_dims(std::string equation, const std::vector<std::vector<int64_t>>& inputs,
                        std::vector<int64_t>* dims);

/// The outer-scope names a node's subgraphs read (onnx_control_flow.cc).
std::set<std::string> implicit_inputs(const onnx::NodeProto& node);
/// The nodes that replace an If whose condition is the constant `condition`: the chosen
/// branch's nodes with its own names prefixed by `prefix`, then one Identity per If
/// output; the branch's initializers, renamed, go to `initializers`. The reason alone
/// on failure.
Status inline_if_branch(const onnx::NodeProto& node, bool condition, const std::string& prefix,
                        std::vector<onnx::NodeProto>* nodes, std::vector<onnx::TensorProto>* initializers);

/// An If branch, Loop body or Scan body as a model of its own, for a nested import: its
/// own inputs get `formal_types` (in order), the outer values it reads become inputs
/// (`captured`, appended, with their types) or initializers (`constants`), and an output
/// that is an input passes through an Identity. The reason alone on failure.
Status subgraph_model(const onnx::GraphProto& body, int64_t opset, const std::vector<onnx::TypeProto>& formal_types,
                      const std::vector<std::pair<std::string, onnx::TypeProto>>& captured,
                      const std::map<std::string, const Tensor*>& constants, onnx::ModelProto* model);

}  // namespace plugrt::compiler::onnx_import

#endif  // PLUGRT_TOOLS_COMPILER_ONNX_INTERNAL_H_
