// SPDX-License-Identifier: Apache-2.0
// The ONNX importer: ModelProto -> graph IR. See onnx_importer.h.
//
// The steps: parse; refuse what plugrt cannot represent (opsets, domains, unknown ops,
// lists of subgraphs, dtypes, external data); sort the nodes; run ONNX's checker;
// make the graph inputs static (ImportOptions::input_shapes); drop dead nodes; then one
// pass over the nodes in order: Constant nodes become constants, an If whose condition
// is constant is replaced by its branch's nodes (onnx_control_flow.cc), any other If,
// Loop or Scan has each subgraph imported as a graph of its own (a nested Importer,
// the outer values it reads passed as the node's last inputs), Identity and
// inference-mode Dropout are removed, ONNX's shape inference types each remaining node
// (onnx_inference.cc), Shape and Size of static values and nodes whose inputs are all
// constant are evaluated (onnx_folding.cc); with ImportOptions::dims, plugrt's rules give
// the dimensions that vary where ONNX's inference loses them, and follow shape
// computations element by element (onnx_symbolic.cc), so that a Reshape gets a constant
// target; drop the nodes that became dead; last, write the graph IR with every
// attribute and the schema's defaults.
#include <algorithm>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include "onnx_containers.h"
#include "onnx_importer.h"
#include "onnx_internal.h"
#include "onnx_symbolic.h"

namespace plugrt::compiler {

namespace {

using onnx_import::find_attribute;
using onnx_import::Tensor;
using onnx_import::ValueType;

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

constexpr char kMicrosoftDomain[] = "com.microsoft";

/// Whether a tensor type of the main graph's inputs, outputs or value_info has no shape.
bool lacks_shape(const onnx::ValueInfoProto& info) {
  return info.type().has_tensor_type() && !info.type().tensor_type().has_shape();
}

/// ONNX 1.12's checker. It wants a shape on every tensor type the main graph declares,
/// though ONNX gives a missing shape a meaning (rank unknown) and ONNX Runtime runs such
/// models (an output whose shape the exporter did not know): it then checks a copy in
/// which those have an empty shape. The import itself still treats them as unknown.
void check_with_onnx(const onnx::ModelProto& model) {
  const onnx::GraphProto& graph = model.graph();
  const auto any_lacks = [](const auto& infos) { return std::any_of(infos.begin(), infos.end(), lacks_shape); };
  if (!any_lacks(graph.input()) && !any_lacks(graph.output()) && !any_lacks(graph.value_info())) {
    onnx::checker::check_model(model);
    return;
  }
  onnx::ModelProto copy = model;
  onnx::GraphProto* checked = copy.mutable_graph();
  for (auto* infos : {checked->mutable_input(), checked->mutable_output(), checked->mutable_value_info()}) {
    for (onnx::ValueInfoProto& info : *infos) {
      if (lacks_shape(info)) info.mutable_type()->mutable_tensor_type()->mutable_shape();
    }
  }
  onnx::checker::check_model(copy);
}

/// The com.microsoft ops imported (those ONNX Runtime's quantizer writes that the portable
/// backend runs). They become graph IR nodes of op type "com.microsoft.<op>".
bool is_imported_contrib_op(const onnx::NodeProto& node) {
  static const std::set<std::string> ops = {"QLinearAdd", "QLinearMul", "QLinearGlobalAveragePool"};
  return node.domain() == kMicrosoftDomain && ops.count(node.op_type()) != 0;
}

constexpr char kTrainingDomain[] = "ai.onnx.preview.training";

/// The optimizer ops of ai.onnx.preview.training imported (one update step, a pure
/// function of its inputs). They become graph IR nodes of op type
/// "ai.onnx.preview.training.<op>".
bool is_imported_training_op(const onnx::NodeProto& node) {
  static const std::set<std::string> ops = {"Adagrad", "Adam", "Momentum"};
  return node.domain() == kTrainingDomain && ops.count(node.op_type()) != 0;
}

const std::set<std::string>& nondeterministic_ops() {
  static const std::set<std::string> ops = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                            "RandomUniformLike", "Multinomial",   "Bernoulli"};
  return ops;
}

class Importer {
 public:
  Importer(std::string origin, const ImportOptions& options) : origin_(std::move(origin)), options_(options) {}

  Result<ImportedModel> run(onnx::ModelProto& model);
  /// Imports a subgraph made a model by subgraph_model (checked with its enclosing model).
  Result<std::vector<uint8_t>> run_subgraph(onnx::ModelProto& model);

 private:
  Status error(Error code, const std::string& reason) const { return Status(code, origin_ + ": " + reason); }
  Status shape_error(Error code, InputShapeProblem::Kind kind, const std::string& input, const std::string& reason,
                     size_t rank, const std::string& symbol = {}) const;
  /// "node 'conv1' (Conv, opset 13)", or the node's position when it has no name.
  std::string node_label(const onnx::NodeProto& node) const;
  Status node_error(Error code, const onnx::NodeProto& node, const std::string& reason) const;
  const onnx::OpSchema* schema_of(const onnx::NodeProto& node) const {
    return onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset_), "");
  }

  Status check_node(const onnx::NodeProto& node) const;
  Status prepare_inputs();
  /// The error for inputs that need a shape, naming every one (and the problem, filled).
  Status shapes_needed(const std::vector<NeededShape>& needed) const;
  /// ImportOptions::input_values: each named graph input becomes an initializer.
  Status bind_input_values(onnx::ModelProto* model);
  Status add_symbols(const std::map<std::string, onnx::ValueInfoProto*>& inputs);
  std::vector<onnx_import::Operand> operands(const onnx::NodeProto& node) const;
  bool fold_shape_values(const onnx::NodeProto& node, std::vector<std::vector<common::DimExpr>>* values);
  void constant_reshape_target(onnx::NodeProto* node);
  void add_constant(const std::string& name, Tensor tensor);
  Status set_type(const onnx::NodeProto& node, const std::string& name, const onnx::TypeProto& inferred);
  bool try_fold(const onnx::NodeProto& node);
  Status inline_if(const onnx::NodeProto& node, std::deque<onnx::NodeProto>* pending, std::set<std::string>* consumed);
  /// A sequence op (onnx_containers.h): recorded, or the tensor nodes it lowers to put in
  /// front of `pending`.
  Status lower_sequence_op(const onnx::NodeProto& node, std::deque<onnx::NodeProto>* pending,
                           std::set<std::string>* consumed);
  Status import_control_flow(onnx::NodeProto& node, const std::function<std::string(std::string)>& resolve);
  Status read_graph(onnx::ModelProto& model);
  Result<std::vector<uint8_t>> import_graph();
  Status simplify();
  Result<std::vector<uint8_t>> write() const;

  std::string origin_;
  const ImportOptions& options_;
  int64_t opset_ = 0;
  onnx::GraphProto* graph_ = nullptr;
  std::map<std::string, std::string> labels_;  // first output -> "#k" for unnamed nodes
  std::map<std::string, Tensor> constants_;
  std::map<std::string, onnx::TypeProto> declared_;                  // the model's value_info and output types
  std::map<std::string, onnx::TypeProto> type_protos_;               // what is known of each value
  std::unordered_map<std::string, onnx::TypeProto*> type_pointers_;  // the same, for inference
  std::map<std::string, ValueType> types_;                           // the same, read
  std::map<std::string, onnx::TensorProto> constant_protos_;         // constants made here
  std::unordered_map<std::string, const onnx::TensorProto*> data_;   // constants inference may read
  std::map<std::string, std::string> inference_failures_;            // output -> why ONNX's inference threw
  std::vector<std::string> graph_inputs_;
  std::set<std::string> graph_outputs_;
  /// The graph IR attributes (subgraphs, captured count) of each If, Loop and Scan kept,
  /// by the node's first output.
  std::map<std::string, std::vector<Attribute>> subgraph_attributes_;
  onnx_import::SymbolicDims symbols_;                                 // ImportOptions::dims
  std::map<std::string, std::vector<common::DimExpr>> shape_values_;  // kept nodes' shape values
  size_t folded_ = 0;
  onnx_import::StaticContainers containers_;  // the sequences and optionals known at compile time
};

bool is_control_flow(const onnx::NodeProto& node) {
  return node.op_type() == "If" || node.op_type() == "Loop" || node.op_type() == "Scan";
}

/// What a kept control flow node's subgraph attributes are filed under.
std::string first_output(const onnx::NodeProto& node) {
  for (const std::string& output : node.output()) {
    if (!output.empty()) return output;
  }
  return {};
}

/// A TypeProto for a tensor of `elem_type` and static `dims`.
onnx::TypeProto tensor_type(int32_t elem_type, const std::vector<int64_t>& dims) {
  onnx::TypeProto type;
  onnx::TypeProto::Tensor* tensor = type.mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  return type;
}

/// Inference reads constants that are shape-like parameters; larger folded constants
/// (weights) are not handed to it.
constexpr size_t kMaxInferenceDataBytes = size_t{1} << 20;

std::string Importer::node_label(const onnx::NodeProto& node) const {
  std::string name = "'" + node.name() + "'";
  if (node.name().empty()) {
    auto it = node.output_size() > 0 ? labels_.find(node.output(0)) : labels_.end();
    name = it != labels_.end() ? it->second : "(unnamed)";
  }
  return "node " + name + " (" + node.op_type() + ", opset " + std::to_string(opset_) + ")";
}

Status Importer::node_error(Error code, const onnx::NodeProto& node, const std::string& reason) const {
  return error(code, node_label(node) + ": " + reason);
}

Status Importer::shape_error(Error code, InputShapeProblem::Kind kind, const std::string& input,
                             const std::string& reason, size_t rank, const std::string& symbol) const {
  if (options_.input_shape_problem != nullptr) *options_.input_shape_problem = {kind, input, reason, rank, symbol, {}};
  if (kind == InputShapeProblem::Kind::kShapeRefused) return error(code, "ImportOptions::input_shapes: " + reason);
  if (kind == InputShapeProblem::Kind::kDimRefused) return error(code, "ImportOptions::dims: " + reason);
  if (!symbol.empty()) {
    return error(code, reason + "; give its bounds in ImportOptions::dims or its shape in ImportOptions::input_shapes");
  }
  return error(code, reason + "; give its shape in ImportOptions::input_shapes");
}

Status Importer::shapes_needed(const std::vector<NeededShape>& needed) const {
  const NeededShape& first = needed.front();
  std::string reasons;
  for (const NeededShape& one : needed) reasons += (reasons.empty() ? "" : "; ") + one.reason;
  if (options_.input_shape_problem != nullptr) {
    *options_.input_shape_problem = {
        InputShapeProblem::Kind::kShapeNeeded, first.input, reasons, first.rank, first.symbol, needed};
  }
  const std::string whose = needed.size() == 1 ? "its" : "their";
  return error(Error::kNotSupported, reasons + "; give " + whose + " shapes in ImportOptions::input_shapes" +
                                         (first.symbol.empty() ? "" : " (or bounds in ImportOptions::dims)"));
}

/// The symbols of ImportOptions::dims, each checked: sensible bounds, and the dim_param
/// of some input dimension the model leaves dynamic.
Status Importer::add_symbols(const std::map<std::string, onnx::ValueInfoProto*>& inputs) {
  using Kind = InputShapeProblem::Kind;
  for (const auto& [name, bounds] : options_.dims) {
    if (bounds.min < 0 || bounds.min > bounds.max || bounds.max > (int64_t{1} << 40)) {
      return shape_error(Error::kInvalidArgument, Kind::kDimRefused, name,
                         "the bounds of '" + name + "', " + std::to_string(bounds.min) + ".." +
                             std::to_string(bounds.max) + ", are not 0 <= MIN <= MAX <= 2^40",
                         0, name);
    }
    bool used = false;
    for (const auto& [input, info] : inputs) {
      if (options_.input_shapes.count(input) != 0) continue;
      const ValueType type = onnx_import::value_type_of(info->type());
      used = used || std::find(type.dim_names.begin(), type.dim_names.end(), name) != type.dim_names.end();
    }
    if (!used) {
      return shape_error(Error::kInvalidArgument, Kind::kDimRefused, name,
                         "no input of the model has a dimension named '" + name + "'", 0, name);
    }
    symbols_.add_symbol(name, bounds.min, bounds.max);
  }
  return Status::ok();
}

Status Importer::check_node(const onnx::NodeProto& node) const {
  const bool contrib = is_imported_contrib_op(node) || is_imported_training_op(node);
  if (!is_default_domain(node.domain()) && !contrib) {
    return node_error(Error::kNotSupported, node,
                      "domain '" + node.domain() +
                          "' is not supported; plugrt imports the default ONNX domain, QLinearAdd, QLinearMul "
                          "and QLinearGlobalAveragePool of com.microsoft, and Adagrad, Adam and Momentum of " +
                          kTrainingDomain);
  }
  if (!contrib && schema_of(node) == nullptr) {
    return node_error(Error::kNotSupported, node,
                      "no ONNX operator '" + node.op_type() + "' exists at opset " + std::to_string(opset_));
  }
  Status status = onnx_import::check_node_attributes(node);
  if (!status.is_ok()) return node_error(status.code(), node, status.message());
  return Status::ok();
}

Status Importer::prepare_inputs() {
  std::map<std::string, onnx::ValueInfoProto*> inputs;
  for (onnx::ValueInfoProto& input : *graph_->mutable_input()) {
    if (constants_.count(input.name()) != 0) continue;  // an initializer listed as an input
    graph_inputs_.push_back(input.name());
    inputs[input.name()] = &input;
  }
  for (const auto& [name, shape] : options_.input_shapes) {
    using Kind = InputShapeProblem::Kind;
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      return shape_error(Error::kInvalidArgument, Kind::kShapeRefused, name,
                         "'" + name + "' is not an input of the model", 0);
    }
    onnx::TypeProto* type = it->second->mutable_type();
    if (type->value_case() != onnx::TypeProto::kTensorType) {
      return error(Error::kNotSupported, "input '" + name + "' is not a tensor");
    }
    // Read before mutable_shape() below, which gives an input without a shape an empty one.
    const ValueType declared = onnx_import::value_type_of(*type);
    const size_t rank = declared.has_shape ? declared.dims.size() : 0;
    if (declared.has_shape && declared.dims.size() != shape.size()) {
      return shape_error(Error::kInvalidArgument, Kind::kShapeRefused, name,
                         "input '" + name + "' has rank " + std::to_string(rank) + ", the shape given has rank " +
                             std::to_string(shape.size()),
                         rank);
    }
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      if (shape[axis] < 0) {
        return shape_error(
            Error::kInvalidArgument, Kind::kShapeRefused, name,
            "the shape given for input '" + name + "' has the negative dimension " + std::to_string(shape[axis]), rank);
      }
      if (axis < declared.dims.size() && declared.dims[axis] >= 0 && declared.dims[axis] != shape[axis]) {
        return shape_error(Error::kInvalidArgument, Kind::kShapeRefused, name,
                           "input '" + name + "' has the static dimension " + std::to_string(declared.dims[axis]) +
                               " at axis " + std::to_string(axis) + ", the shape given has " +
                               std::to_string(shape[axis]),
                           rank);
      }
    }
    onnx::TensorShapeProto* dims = type->mutable_tensor_type()->mutable_shape();
    dims->clear_dim();
    for (int64_t d : shape) dims->add_dim()->set_dim_value(d);
  }
  PLUGRT_RETURN_IF_ERROR(add_symbols(inputs));
  std::vector<NeededShape> needed;  // every input that needs a shape: one error names them all
  for (const std::string& name : graph_inputs_) {
    const onnx::ValueInfoProto& input = *inputs[name];
    const ValueType type = onnx_import::value_type_of(input.type());
    if (type.non_tensor) {
      return error(Error::kNotSupported,
                   "input '" + name + "' is not a tensor (sequences, maps and optionals are not supported)");
    }
    if (!type.known) return error(Error::kInvalidArgument, "input '" + name + "' has no element type");
    if (!onnx_import::is_supported_elem_type(type.elem_type)) {
      return error(Error::kNotSupported, "input '" + name + "' has type " +
                                             onnx_import::onnx_type_name(type.elem_type) +
                                             ", which plugrt does not support");
    }
    if (!type.has_shape) {
      needed.push_back({name, "input '" + name + "' has no shape", 0, ""});
      continue;
    }
    bool dynamic = false;
    for (size_t axis = 0; axis < type.dims.size() && !dynamic; ++axis) {
      const std::string& symbol = type.dim_names[axis];
      if (type.dims[axis] >= 0 || options_.dims.count(symbol) != 0) continue;
      needed.push_back({name,
                        "input '" + name + "' has a dynamic dimension " + std::to_string(axis) + " (" +
                            (symbol.empty() ? "unknown" : "'" + symbol + "'") + ") in " +
                            onnx_import::describe_dims(type),
                        type.dims.size(), symbol});
      dynamic = true;
    }
    if (dynamic) continue;
    std::vector<common::DimExpr> dims;
    bool varies = false;
    uint64_t count = 0;
    if (!symbols_.dims_of(type, &dims) ||
        !onnx_import::element_count(common::dim_upper_bounds(dims, symbols_.ranges(), &varies),
                                    dtype_size(static_cast<DType>(type.elem_type)), &count)) {
      return error(Error::kNotSupported, "input '" + name + "' of shape " + onnx_import::describe_dims(type) +
                                             " is larger than 2^40 bytes" + (varies ? " at its bounds" : ""));
    }
  }
  if (!needed.empty()) return shapes_needed(needed);
  for (const std::string& name : graph_inputs_) {
    onnx::TypeProto& type = type_protos_[name];
    type = inputs[name]->type();
    type_pointers_[name] = &type;
    types_[name] = onnx_import::value_type_of(type);
  }
  for (const onnx::ValueInfoProto& info : graph_->value_info()) declared_[info.name()] = info.type();
  for (const onnx::ValueInfoProto& output : graph_->output()) {
    graph_outputs_.insert(output.name());
    // A subgraph's outputs may declare no type at all.
    if (output.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) declared_[output.name()] = output.type();
  }
  return Status::ok();
}

void Importer::add_constant(const std::string& name, Tensor tensor) {
  onnx::TypeProto& type = type_protos_[name];
  type = onnx_import::type_proto_of(tensor);
  type_pointers_[name] = &type;
  types_[name] = onnx_import::value_type_of(type);
  if (data_.count(name) == 0 && tensor.bytes.size() <= kMaxInferenceDataBytes) {
    onnx::TensorProto& proto = constant_protos_[name];
    onnx_import::tensor_to_proto(tensor, name, &proto);
    data_[name] = &proto;
  }
  constants_[name] = std::move(tensor);
}

/// Records what inference says of a node output, merged with what the model declares.
Status Importer::set_type(const onnx::NodeProto& node, const std::string& name, const onnx::TypeProto& inferred) {
  onnx::TypeProto type = inferred;
  if (auto declared = declared_.find(name); declared != declared_.end()) {
    type = declared->second;
    if (inferred.value_case() != onnx::TypeProto::VALUE_NOT_SET) {
      try {
        onnx::shape_inference::mergeShapesAndTypes(inferred, &type);
      } catch (const std::exception& e) {
        return node_error(Error::kInvalidArgument, node,
                          "output '" + name + "': the model declares a type that inference contradicts: " + e.what());
      }
      // A dimension the model declares by a name stays the expression inferred: the
      // model's names are its own, or a symbol where the exporter guessed one.
      const onnx::TensorShapeProto& from = inferred.tensor_type().shape();
      onnx::TensorShapeProto* to = type.mutable_tensor_type()->mutable_shape();
      if (!symbols_.empty() && from.dim_size() == to->dim_size()) {
        for (int k = 0; k < from.dim_size(); ++k) {
          if (symbols_.knows(from.dim(k))) *to->mutable_dim(k) = from.dim(k);
        }
      }
    }
  }
  const ValueType value_type = onnx_import::value_type_of(type);
  if (value_type.non_tensor) {
    return node_error(Error::kNotSupported, node,
                      "output '" + name + "' is not a tensor (sequences, maps and optionals are not supported)");
  }
  if (value_type.known && !onnx_import::is_supported_elem_type(value_type.elem_type)) {
    return node_error(Error::kNotSupported, node,
                      "output '" + name + "' has type " + onnx_import::onnx_type_name(value_type.elem_type) +
                          ", which plugrt does not support");
  }
  onnx::TypeProto& stored = type_protos_[name];
  stored = std::move(type);
  type_pointers_[name] = &stored;
  types_[name] = value_type;
  return Status::ok();
}

/// Evaluates the node at import when it can be: Shape and Size of a static value, or
/// a node whose inputs are all constant. Whether it did (its outputs are constants now).
bool Importer::try_fold(const onnx::NodeProto& node) {
  if (node.output_size() == 0 || nondeterministic_ops().count(node.op_type()) != 0) return false;
  if ((node.op_type() == "Shape" || node.op_type() == "Size") && node.input_size() == 1 && node.output_size() == 1) {
    auto type = types_.find(node.input(0));
    if (type == types_.end() || !type->second.is_static()) return false;
    add_constant(node.output(0), onnx_import::fold_shape_of(node, type->second.dims));
    return true;
  }
  if (node.input_size() == 0) return false;
  std::vector<const Tensor*> inputs;
  for (const std::string& input : node.input()) {
    if (input.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    auto it = constants_.find(input);
    if (it == constants_.end()) return false;
    inputs.push_back(&it->second);
  }
  std::vector<ValueType> output_types;
  for (const std::string& output : node.output()) {
    auto it = output.empty() ? types_.end() : types_.find(output);
    output_types.push_back(it != types_.end() ? it->second : ValueType{});
  }
  std::vector<Tensor> results;
  if (!onnx_import::fold_node(node, opset_, schema_of(node), inputs, output_types, &results)) return false;
  for (size_t k = 0; k < results.size(); ++k) {
    const std::string& name = node.output(static_cast<int>(k));
    if (!name.empty()) add_constant(name, std::move(results[k]));
  }
  return true;
}

std::vector<onnx_import::Operand> Importer::operands(const onnx::NodeProto& node) const {
  std::vector<onnx_import::Operand> operands;
  for (const std::string& input : node.input()) {
    onnx_import::Operand& operand = operands.emplace_back();
    if (input.empty()) continue;
    if (auto type = types_.find(input); type != types_.end()) operand.type = &type->second;
    if (auto constant = constants_.find(input); constant != constants_.end()) operand.constant = &constant->second;
    if (auto value = shape_values_.find(input); value != shape_values_.end()) operand.elements = &value->second;
  }
  return operands;
}

/// A node computing a shape value (values[0], from SymbolicDims::infer) is folded when
/// its elements are all constant; else the value is kept for the nodes that read it.
bool Importer::fold_shape_values(const onnx::NodeProto& node, std::vector<std::vector<common::DimExpr>>* values) {
  if (values->empty() || values->front().empty() || node.output_size() != 1) return false;
  const std::vector<common::DimExpr>& elements = values->front();
  const std::string& output = node.output(0);
  const ValueType& type = types_.at(output);
  const bool constant =
      std::all_of(elements.begin(), elements.end(), [](const common::DimExpr& e) { return e.is_constant(); });
  if (!constant || !type.is_static() ||
      (type.elem_type != onnx::TensorProto::INT64 && type.elem_type != onnx::TensorProto::INT32)) {
    shape_values_[output] = elements;
    return false;
  }
  Tensor tensor;
  tensor.dtype = static_cast<DType>(type.elem_type);
  tensor.shape = type.dims;
  uint64_t count = 0;
  if (!onnx_import::element_count(type.dims, 1, &count) || count != elements.size()) return false;
  for (const common::DimExpr& e : elements) {
    const int64_t value = e.constant_value();
    const auto narrow = static_cast<int32_t>(value);
    const uint8_t* bytes = tensor.dtype == DType::kInt64 ? reinterpret_cast<const uint8_t*>(&value)
                                                         : reinterpret_cast<const uint8_t*>(&narrow);
    tensor.bytes.insert(tensor.bytes.end(), bytes, bytes + dtype_size(tensor.dtype));
  }
  add_constant(output, std::move(tensor));
  return true;
}

/// A Reshape whose target is computed from shapes gets a constant target where one says
/// the same: 0 copies an input dimension of the same expression, -1 takes the one
/// dimension left. The shape computation then falls away as dead, and backends see a
/// plain Reshape.
void Importer::constant_reshape_target(onnx::NodeProto* node) {
  if (node->op_type() != "Reshape" || node->input_size() != 2) return;
  auto target = shape_values_.find(node->input(1));
  auto data = types_.find(node->input(0));
  const onnx::AttributeProto* allow_zero = find_attribute(*node, "allowzero");
  std::vector<common::DimExpr> dims;
  if (target == shape_values_.end() || data == types_.end() || !symbols_.dims_of(data->second, &dims) ||
      (allow_zero != nullptr && allow_zero->i() != 0)) {
    return;
  }
  std::vector<int64_t> values;
  bool inferred = false;  // a -1 in the target
  for (size_t k = 0; k < target->second.size(); ++k) {
    const common::DimExpr& element = target->second[k];
    if (element.is_constant()) {
      values.push_back(element.constant_value());
      if (values.back() == -1 && inferred) return;
      inferred = inferred || values.back() == -1;
    } else if (k < dims.size() && element == dims[k]) {
      values.push_back(0);
    } else {
      if (inferred) return;
      values.push_back(-1);
      inferred = true;
    }
  }
  const std::string name = node->input(1) + "/constant";
  add_constant(name, onnx_import::int64_tensor(values, {static_cast<int64_t>(values.size())}));
  node->set_input(1, name);
}

/// One pass over the nodes in order: constants, Identity and Dropout removal, inference,
/// folding. Renames are applied to the nodes kept once the pass is over.
Status Importer::simplify() {
  std::map<std::string, std::string> alias;  // a name -> the name that replaces it
  auto resolve = [&alias](std::string name) {
    for (auto it = alias.find(name); it != alias.end(); it = alias.find(name)) name = it->second;
    return name;
  };
  std::set<std::string> produced;  // outputs of the nodes kept so far
  std::set<std::string> renamed;   // outputs renamed to a graph output's name
  std::vector<onnx::NodeProto> kept;
  std::set<std::string> consumed(graph_outputs_.begin(), graph_outputs_.end());
  for (const onnx::NodeProto& node : graph_->node()) {
    consumed.insert(node.input().begin(), node.input().end());
    const std::set<std::string> implicit = onnx_import::implicit_inputs(node);
    consumed.insert(implicit.begin(), implicit.end());
  }
  // A work list: an If with a constant condition puts its branch's nodes in front.
  std::deque<onnx::NodeProto> pending;
  for (onnx::NodeProto& node : *graph_->mutable_node()) pending.push_back(std::move(node));
  while (!pending.empty()) {
    onnx::NodeProto node = std::move(pending.front());
    pending.pop_front();
    for (int k = 0; k < node.input_size(); ++k) {
      if (!node.input(k).empty()) node.set_input(k, resolve(node.input(k)));
    }
    if (node.op_type() == "If" && node.input_size() > 0 && constants_.count(node.input(0)) != 0) {
      PLUGRT_RETURN_IF_ERROR(inline_if(node, &pending, &consumed));
      continue;
    }
    if (onnx_import::StaticContainers::handles(node)) {
      PLUGRT_RETURN_IF_ERROR(lower_sequence_op(node, &pending, &consumed));
      continue;
    }
    if (is_control_flow(node)) {
      PLUGRT_RETURN_IF_ERROR(import_control_flow(node, resolve));
      for (const std::string& output : node.output()) produced.insert(output);
      kept.push_back(std::move(node));
      continue;
    }
    if (node.op_type() == "Constant" && node.output_size() == 1) {
      Tensor tensor;
      Status status = onnx_import::constant_node_value(node, &tensor);
      if (!status.is_ok()) return node_error(status.code(), node, status.message());
      add_constant(node.output(0), std::move(tensor));
      ++folded_;
      continue;
    }
    if (node.op_type() == "Dropout" && onnx_import::is_inference_dropout(node, consumed, constants_)) {
      // Inference-mode Dropout whose mask nobody reads is the identity.
      node.set_op_type("Identity");
      node.clear_attribute();
      node.mutable_input()->DeleteSubrange(1, node.input_size() - 1);
      node.mutable_output()->DeleteSubrange(1, node.output_size() - 1);
    }
    if (node.op_type() == "Identity" && node.input_size() == 1 && node.output_size() == 1 && !node.input(0).empty()) {
      const std::string& source = node.input(0);
      const std::string& target = node.output(0);
      if (graph_outputs_.count(target) == 0) {  // consumers read the source
        alias[target] = source;
        continue;
      }
      if (produced.count(source) != 0 && graph_outputs_.count(source) == 0 && renamed.count(source) == 0) {
        alias[source] = target;  // the producer writes the graph output itself
        renamed.insert(source);
        auto type = type_protos_.find(source);
        PLUGRT_RETURN_IF_ERROR(set_type(node, target, type != type_protos_.end() ? type->second : onnx::TypeProto()));
        continue;
      }
      // A graph input, a constant or another output copied to an output: a real Identity.
    }
    if (is_imported_contrib_op(node) || is_imported_training_op(node)) {  // checked by ONNX's checker as it is
      node.set_op_type(node.domain() + "." + node.op_type());
      node.clear_domain();
    }
    std::vector<onnx::TypeProto> output_types;
    std::string failure;
    Status status = onnx_import::infer_node(node, schema_of(node), type_pointers_, data_, &output_types, &failure);
    if (!status.is_ok()) return node_error(status.code(), node, status.message());
    std::vector<std::vector<common::DimExpr>> shape_values;
    if (!symbols_.empty()) symbols_.infer(node, opset_, operands(node), &output_types, &shape_values);
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string& output = node.output(k);
      if (output.empty()) continue;
      PLUGRT_RETURN_IF_ERROR(set_type(node, output, output_types[static_cast<size_t>(k)]));
      if (!failure.empty()) inference_failures_[output] = failure;
    }
    if (try_fold(node) || fold_shape_values(node, &shape_values)) {
      ++folded_;
      continue;
    }
    if (!symbols_.empty()) constant_reshape_target(&node);
    for (const std::string& output : node.output()) produced.insert(output);
    kept.push_back(std::move(node));
  }
  graph_->clear_node();
  for (onnx::NodeProto& node : kept) {
    for (int k = 0; k < node.input_size(); ++k) {
      if (!node.input(k).empty()) node.set_input(k, resolve(node.input(k)));
    }
    if (is_control_flow(node) && renamed.count(first_output(node)) != 0) {
      auto entry = subgraph_attributes_.extract(first_output(node));
      entry.key() = resolve(entry.key());
      subgraph_attributes_.insert(std::move(entry));
    }
    for (int k = 0; k < node.output_size(); ++k) {
      if (renamed.count(node.output(k)) != 0) node.set_output(k, resolve(node.output(k)));
    }
    graph_->add_node()->Swap(&node);
  }
  return Status::ok();
}

Status Importer::inline_if(const onnx::NodeProto& node, std::deque<onnx::NodeProto>* pending,
                           std::set<std::string>* consumed) {
  const std::string& condition = node.input(0);
  const Tensor& tensor = constants_.at(condition);
  if (tensor.dtype != DType::kBool || tensor.bytes.size() != 1) {
    return node_error(Error::kInvalidArgument, node, "its condition '" + condition + "' is not one bool");
  }
  const bool taken = tensor.bytes[0] != 0;
  const std::string prefix = (node.name().empty() ? node.output(0) : node.name()) + (taken ? "/then/" : "/else/");
  std::vector<onnx::NodeProto> nodes;
  std::vector<onnx::TensorProto> initializers;
  Status status = onnx_import::inline_if_branch(node, taken, prefix, &nodes, &initializers);
  if (!status.is_ok()) return node_error(status.code(), node, status.message());
  for (const onnx::TensorProto& initializer : initializers) {
    Tensor constant;
    status = onnx_import::tensor_from_proto(initializer, &constant);
    if (!status.is_ok())
      return node_error(status.code(), node, "initializer '" + initializer.name() + "' " + status.message());
    add_constant(initializer.name(), std::move(constant));
  }
  for (const onnx::NodeProto& inner : nodes) {
    PLUGRT_RETURN_IF_ERROR(check_node(inner));
    consumed->insert(inner.input().begin(), inner.input().end());
    const std::set<std::string> implicit = onnx_import::implicit_inputs(inner);
    consumed->insert(implicit.begin(), implicit.end());
  }
  pending->insert(pending->begin(), std::make_move_iterator(nodes.begin()), std::make_move_iterator(nodes.end()));
  ++folded_;  // the If itself
  return Status::ok();
}

Status Importer::lower_sequence_op(const onnx::NodeProto& node, std::deque<onnx::NodeProto>* pending,
                                   std::set<std::string>* consumed) {
  std::vector<onnx::NodeProto> nodes;
  std::vector<std::pair<std::string, Tensor>> made;
  auto type_of = [this](const std::string& name) {
    const auto found = types_.find(name);
    return found != types_.end() ? found->second : onnx_import::ValueType{};
  };
  const std::string why = containers_.lower(node, constants_, type_of, &nodes, &made);
  if (!why.empty()) return node_error(Error::kNotSupported, node, why);
  for (auto& [name, tensor] : made) add_constant(name, std::move(tensor));
  for (const onnx::NodeProto& inner : nodes) consumed->insert(inner.input().begin(), inner.input().end());
  pending->insert(pending->begin(), std::make_move_iterator(nodes.begin()), std::make_move_iterator(nodes.end()));
  ++folded_;  // the sequence op itself
  return Status::ok();
}

Result<std::vector<uint8_t>> Importer::write() const {
  GraphBuilder builder(static_cast<int>(opset_));
  std::map<std::string, ValueId> ids;
  std::set<std::string> consumed(graph_outputs_.begin(), graph_outputs_.end());
  for (const onnx::NodeProto& node : graph_->node()) consumed.insert(node.input().begin(), node.input().end());

  for (size_t k = 0; k < symbols_.names().size(); ++k) {
    builder.add_symbol(symbols_.names()[k], symbols_.ranges()[k].min, symbols_.ranges()[k].max);
  }
  // A value whose dimensions all are known: static, or expressions over the symbols.
  auto add_value = [&](const std::string& name, const ValueType& type, const std::vector<common::DimExpr>& dims) {
    const bool varies =
        std::any_of(dims.begin(), dims.end(), [](const common::DimExpr& d) { return !d.is_constant(); });
    return varies ? builder.add_dynamic_value(name, static_cast<DType>(type.elem_type), dims)
                  : builder.add_value(name, static_cast<DType>(type.elem_type), type.dims);
  };
  for (const std::string& name : graph_inputs_) {
    const ValueType& type = types_.at(name);
    std::vector<common::DimExpr> dims;
    (void)symbols_.dims_of(type, &dims);  // checked by prepare_inputs
    const ValueId id = add_value(name, type, dims);
    ids[name] = id;
    builder.add_input(id);
  }
  // A constant that is also a graph output gets its own name; an Identity writes the output.
  auto constant_id = [&](const std::string& name) {
    auto it = ids.find(name);
    if (it != ids.end()) return it->second;
    const Tensor& tensor = constants_.at(name);
    const std::string value_name = graph_outputs_.count(name) != 0 ? name + "_value" : name;
    const ValueId id = builder.add_constant(value_name, tensor.dtype, tensor.shape, tensor.bytes);
    ids[name] = id;
    return id;
  };
  for (const onnx::NodeProto& node : graph_->node()) {
    std::vector<Attribute> attributes;
    auto subgraphs = subgraph_attributes_.find(first_output(node));
    if (is_control_flow(node) && subgraphs != subgraph_attributes_.end()) {
      onnx::NodeProto plain = node;  // its graph attributes are written from the nested imports
      plain.clear_attribute();
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        if (attribute.type() != onnx::AttributeProto::GRAPH) *plain.add_attribute() = attribute;
      }
      Status status = onnx_import::convert_attributes(plain, schema_of(node), &attributes);
      if (!status.is_ok()) return node_error(status.code(), node, status.message());
      attributes.insert(attributes.end(), subgraphs->second.begin(), subgraphs->second.end());
    } else {
      Status status = onnx_import::convert_attributes(node, schema_of(node), &attributes);
      if (!status.is_ok()) return node_error(status.code(), node, status.message());
    }
    std::vector<ValueId> inputs, outputs;
    for (const std::string& input : node.input()) {
      if (input.empty()) {
        inputs.push_back(kNoValue);
      } else if (constants_.count(input) != 0) {
        inputs.push_back(constant_id(input));
      } else if (auto it = ids.find(input); it != ids.end()) {
        inputs.push_back(it->second);
      } else {
        return node_error(Error::kInvalidArgument, node, "input '" + input + "' is not defined before the node");
      }
    }
    for (const std::string& output : node.output()) {
      if (output.empty()) {
        outputs.push_back(kNoValue);
        continue;
      }
      auto it = types_.find(output);
      const ValueType type = it != types_.end() ? it->second : ValueType{};
      std::vector<common::DimExpr> dims;
      if (!symbols_.dims_of(type, &dims)) {
        if (!type.known && consumed.count(output) == 0) {  // an unused output of unknown type: leave it out
          outputs.push_back(kNoValue);
          continue;
        }
        if (auto failure = inference_failures_.find(output); failure != inference_failures_.end()) {
          return node_error(Error::kInvalidArgument, node,
                            "ONNX shape inference fails, so output '" + output + "' has no shape: " + failure->second);
        }
        return node_error(Error::kNotSupported, node,
                          !type.known || !type.has_shape
                              ? "ONNX shape inference cannot tell the shape of output '" + output + "'"
                              : "output '" + output + "' has the dynamic shape " + onnx_import::describe_dims(type));
      }
      uint64_t count = 0;
      bool varies = false;
      const std::vector<int64_t> bounds = common::dim_upper_bounds(dims, symbols_.ranges(), &varies);
      if (std::find(bounds.begin(), bounds.end(), -1) != bounds.end()) {
        return node_error(Error::kNotSupported, node,
                          "output '" + output + "' has the shape " + onnx_import::describe_dims(type) +
                              ", whose bounds plugrt cannot tell from the symbols' ranges");
      }
      if (!onnx_import::element_count(bounds, dtype_size(static_cast<DType>(type.elem_type)), &count)) {
        return node_error(Error::kNotSupported, node,
                          "output '" + output + "' of shape " + onnx_import::describe_dims(type) +
                              " is larger than 2^40 bytes" + (varies ? " at its bounds" : ""));
      }
      for (size_t axis = 0; axis < dims.size(); ++axis) {  // a kernel longer than the input, say
        common::DimRange range;
        if (!dims[axis].is_constant() &&
            common::dim_expr_range(dims[axis].words().data(), dims[axis].words().size(), symbols_.ranges().data(),
                                   &range) &&
            range.min < 0) {
          return node_error(Error::kNotSupported, node,
                            "output '" + output + "' dimension " + std::to_string(axis) + " (" +
                                symbols_.describe(dims[axis]) + ") may be as low as " + std::to_string(range.min) +
                                " within the symbols' bounds: raise the smallest size --dim allows");
        }
      }
      const ValueId id = add_value(output, type, dims);
      ids[output] = id;
      outputs.push_back(id);
    }
    builder.add_node(node.op_type(), node.name(), std::move(inputs), std::move(outputs), std::move(attributes));
  }
  if (graph_->output_size() == 0) return error(Error::kInvalidArgument, "the model has no outputs");
  for (const onnx::ValueInfoProto& output : graph_->output()) {
    const std::string& name = output.name();
    if (constants_.count(name) != 0) {
      const ValueId source = constant_id(name);
      const Tensor& tensor = constants_.at(name);
      const ValueId id = builder.add_value(name, tensor.dtype, tensor.shape);
      builder.add_node("Identity", name + "_identity", {source}, {id});
      builder.add_output(id);
      continue;
    }
    auto it = ids.find(name);
    if (it == ids.end()) return error(Error::kInvalidArgument, "graph output '" + name + "' is never computed");
    if (std::find(graph_inputs_.begin(), graph_inputs_.end(), name) != graph_inputs_.end()) {
      return error(Error::kNotSupported,
                   "graph output '" + name + "' is also a graph input; plugrt needs every output written by a node");
    }
    builder.add_output(it->second);
  }
  return builder.finish();
}

Status Importer::import_control_flow(onnx::NodeProto& node, const std::function<std::string(std::string)>& resolve) {
  const bool is_loop = node.op_type() == "Loop", is_scan = node.op_type() == "Scan";
  if (is_scan && opset_ < 9) {
    return node_error(Error::kNotSupported, node,
                      "Scan before opset 9 (with a batch axis and sequence lengths) is not supported");
  }
  if (first_output(node).empty()) return node_error(Error::kInvalidArgument, node, "has no named output");
  // The outer values its subgraphs read: constants go in as initializers, the rest as
  // the node's last inputs ("captured").
  std::vector<std::pair<std::string, onnx::TypeProto>> captured;
  std::vector<std::string> captured_outer;
  std::map<std::string, const Tensor*> constants;
  for (const std::string& name : onnx_import::implicit_inputs(node)) {
    const std::string outer = resolve(name);
    if (auto constant = constants_.find(outer); constant != constants_.end()) {
      constants[name] = &constant->second;
      continue;
    }
    auto type = types_.find(outer);
    if (type == types_.end() || !type->second.is_static()) {
      return node_error(Error::kNotSupported, node,
                        "its subgraphs read '" + name +
                            "', whose shape is not known at compile time; when a graph input decides the branch (a "
                            "sample rate, a mode flag), bind it to its value with --input-value NAME=VALUE "
                            "(ImportOptions::input_values), and the branch folds away");
    }
    captured.emplace_back(name, type_protos_.at(outer));
    captured_outer.push_back(outer);
  }
  auto static_type = [&](const std::string& name, ValueType* type) -> Status {
    auto it = types_.find(name);
    if (it == types_.end() || !it->second.is_static()) {
      return node_error(Error::kNotSupported, node, "input '" + name + "' has no static shape");
    }
    *type = it->second;
    return Status::ok();
  };
  // The subgraphs' own inputs (none for If's branches).
  std::vector<onnx::TypeProto> formal;
  const onnx::AttributeProto* scanned_attribute = find_attribute(node, "num_scan_inputs");
  const int64_t num_scanned = is_scan && scanned_attribute != nullptr ? scanned_attribute->i() : 0;
  const size_t first_scanned =
      static_cast<size_t>(node.input_size()) - static_cast<size_t>(std::max<int64_t>(num_scanned, 0));
  int64_t scan_length = -1;
  if (is_loop) {
    formal.push_back(tensor_type(onnx::TensorProto::INT64, {}));
    formal.push_back(tensor_type(onnx::TensorProto::BOOL, {}));
    for (int k = 2; k < node.input_size(); ++k) {
      ValueType type;
      PLUGRT_RETURN_IF_ERROR(static_type(node.input(k), &type));
      formal.push_back(tensor_type(type.elem_type, type.dims));
    }
  } else if (is_scan) {
    if (num_scanned < 1 || num_scanned > node.input_size()) {
      return node_error(Error::kInvalidArgument, node, "attribute 'num_scan_inputs' does not fit its inputs");
    }
    for (const char* axes : {"scan_input_axes", "scan_output_axes"}) {
      const onnx::AttributeProto* attribute = find_attribute(node, axes);
      for (int64_t axis : attribute != nullptr ? attribute->ints() : google::protobuf::RepeatedField<int64_t>()) {
        if (axis != 0) {
          return node_error(Error::kNotSupported, node,
                            std::string("attribute '") + axes + "' must be all 0 (other axes are not supported)");
        }
      }
    }
    for (size_t k = 0; k < static_cast<size_t>(node.input_size()); ++k) {
      ValueType type;
      PLUGRT_RETURN_IF_ERROR(static_type(node.input(static_cast<int>(k)), &type));
      if (k >= first_scanned) {  // the body sees one element along axis 0
        if (type.dims.empty()) return node_error(Error::kInvalidArgument, node, "a scan input is a scalar");
        if (scan_length >= 0 && type.dims[0] != scan_length) {
          return node_error(Error::kInvalidArgument, node, "its scan inputs have different lengths");
        }
        scan_length = type.dims[0];
        type.dims.erase(type.dims.begin());
      }
      formal.push_back(tensor_type(type.elem_type, type.dims));
    }
  }
  // Each subgraph imported on its own; its output types give the node's.
  std::vector<Attribute> attributes;
  std::vector<std::vector<ValueType>> subgraph_outputs;
  bool condition_stays_true = false;  // a Loop body whose condition output is always true
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.type() != onnx::AttributeProto::GRAPH) continue;
    const std::string where = "subgraph '" + attribute.name() + "'";
    onnx::ModelProto model;
    Status status = onnx_import::subgraph_model(attribute.g(), opset_, formal, captured, constants, &model);
    if (!status.is_ok()) return node_error(status.code(), node, status.message());
    static const ImportOptions kNoOptions;
    Importer nested(origin_ + ": " + node_label(node) + ": " + where, kNoOptions);
    PLUGRT_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, nested.run_subgraph(model));
    std::vector<ValueType>& outputs = subgraph_outputs.emplace_back();
    for (const onnx::ValueInfoProto& output : nested.graph_->output())
      outputs.push_back(nested.types_.at(output.name()));
    if (is_loop && !outputs.empty()) {
      const std::string& condition = nested.graph_->output(0).name();
      auto constant = nested.constants_.find(condition);
      condition_stays_true = constant != nested.constants_.end() && constant->second.bytes == std::vector<uint8_t>{1};
      for (const onnx::NodeProto& inner : nested.graph_->node()) {
        condition_stays_true = condition_stays_true || (inner.op_type() == "Identity" && inner.output(0) == condition &&
                                                        inner.input(0) == model.graph().input(1).name());
      }
    }
    attributes.push_back(Attribute::Graph(attribute.name(), std::move(bytes)));
  }
  attributes.push_back(Attribute::Int("captured", static_cast<int64_t>(captured.size())));
  const std::vector<ValueType>& body = subgraph_outputs.front();
  auto describe = [](const ValueType& type) {
    return onnx_import::onnx_type_name(type.elem_type) + " " + onnx_import::describe_dims(type);
  };
  // Where the node's outputs are in the body's, and which of them are scan outputs.
  const size_t skipped = is_loop ? 1 : 0;
  const size_t first_scan_output = is_loop   ? static_cast<size_t>(node.input_size()) - 2
                                   : is_scan ? first_scanned
                                             : static_cast<size_t>(node.output_size());
  if (body.size() != skipped + static_cast<size_t>(node.output_size()) ||
      first_scan_output > static_cast<size_t>(node.output_size())) {
    return node_error(Error::kInvalidArgument, node,
                      "its subgraph has " + std::to_string(body.size()) + " outputs, which do not fit the node's " +
                          std::to_string(node.output_size()));
  }
  if (is_loop && scan_length < 0) {  // the iteration count, when the compiler can tell it
    auto trips = constants_.find(node.input(0));
    auto condition = node.input(1).empty() ? constants_.end() : constants_.find(node.input(1));
    const bool starts_true =
        node.input(1).empty() || (condition != constants_.end() && condition->second.bytes == std::vector<uint8_t>{1});
    if (trips != constants_.end() && trips->second.bytes.size() == sizeof(int64_t) && starts_true &&
        condition_stays_true) {
      std::memcpy(&scan_length, trips->second.bytes.data(), sizeof(int64_t));
      scan_length = std::max<int64_t>(scan_length, 0);
    }
  }
  for (size_t k = 0; k < static_cast<size_t>(node.output_size()); ++k) {
    if (node.output(static_cast<int>(k)).empty()) {  // named, so that the portable kernel has a buffer for it
      node.set_output(static_cast<int>(k), first_output(node) + "/unused_" + std::to_string(k));
    }
    const std::string& output = node.output(static_cast<int>(k));
    ValueType type = body[skipped + k];
    for (size_t other = 1; other < subgraph_outputs.size(); ++other) {  // If: both branches alike
      const ValueType& alternative = subgraph_outputs[other][k];
      if (alternative.elem_type != type.elem_type || alternative.dims != type.dims) {
        return node_error(Error::kNotSupported, node,
                          "its branches give output '" + output + "' as " + describe(type) + " and " +
                              describe(alternative) + "; plugrt needs one static type. When graph inputs decide " +
                              "its condition '" + node.input(0) + "', bind them to their values with " +
                              "--input-value NAME=VALUE (ImportOptions::input_values), and the If folds away");
      }
    }
    if (k >= first_scan_output) {
      int64_t length = scan_length;
      auto declared = declared_.find(output);
      if (declared != declared_.end()) {
        const ValueType declared_type = onnx_import::value_type_of(declared->second);
        if (declared_type.has_shape && !declared_type.dims.empty() && declared_type.dims[0] >= 0) {
          length = declared_type.dims[0];
        }
      }
      if (length < 0) {
        return node_error(Error::kNotSupported, node,
                          "scan output '" + output +
                              "' is as long as the loop runs, which the compiler cannot tell: make the trip count "
                              "a constant and the condition always true, or declare the output's shape in the model");
      }
      type.dims.insert(type.dims.begin(), length);
    }
    PLUGRT_RETURN_IF_ERROR(set_type(node, output, tensor_type(type.elem_type, type.dims)));
  }
  for (const std::string& outer : captured_outer) node.add_input(outer);
  subgraph_attributes_[first_output(node)] = std::move(attributes);
  return Status::ok();
}

Status Importer::read_graph(onnx::ModelProto& model) {
  graph_ = model.mutable_graph();
  for (int i = 0; i < graph_->node_size(); ++i) {
    const onnx::NodeProto& node = graph_->node(i);
    if (node.name().empty() && node.output_size() > 0) labels_.emplace(node.output(0), "#" + std::to_string(i));
  }
  for (const onnx::NodeProto& node : graph_->node()) PLUGRT_RETURN_IF_ERROR(check_node(node));
  if (graph_->sparse_initializer_size() > 0) {
    return error(Error::kNotSupported, "sparse initializers are not supported");
  }
  for (const onnx::TensorProto& initializer : graph_->initializer()) {
    Tensor tensor;
    Status status = onnx_import::tensor_from_proto(initializer, &tensor);
    if (!status.is_ok()) return error(status.code(), "initializer '" + initializer.name() + "' " + status.message());
    data_[initializer.name()] = &initializer;  // the model's own proto: no copy for inference
    add_constant(initializer.name(), std::move(tensor));
  }
  onnx_import::sort_nodes(graph_);
  return Status::ok();
}

Result<std::vector<uint8_t>> Importer::import_graph() {
  PLUGRT_RETURN_IF_ERROR(prepare_inputs());
  // Before folding, which would dequantize the weights of a QDQ group into float32.
  onnx_import::fuse_qdq_groups(graph_, constants_, graph_outputs_);
  onnx_import::remove_dead_nodes(graph_, graph_outputs_);
  PLUGRT_RETURN_IF_ERROR(simplify());
  onnx_import::remove_dead_nodes(graph_, graph_outputs_);
  return write();
}

Result<std::vector<uint8_t>> Importer::run_subgraph(onnx::ModelProto& model) {
  opset_ = model.opset_import(0).version();
  PLUGRT_RETURN_IF_ERROR(read_graph(model));
  return import_graph();
}

Status Importer::bind_input_values(onnx::ModelProto* model) {
  onnx::GraphProto* graph = model->mutable_graph();
  for (const auto& bound : options_.input_values) {
    const std::string& name = bound.first;
    const std::vector<double>& values = bound.second;
    auto input = std::find_if(graph->input().begin(), graph->input().end(),
                              [&](const onnx::ValueInfoProto& info) { return info.name() == name; });
    if (input == graph->input().end()) {
      std::string names;
      for (const onnx::ValueInfoProto& info : graph->input()) names += (names.empty() ? "" : ", ") + info.name();
      return error(Error::kInvalidArgument, "'" + name + "' is not an input of the model, so it cannot be bound to " +
                                                "a value (its inputs: " + names + ")");
    }
    Result<onnx::TensorProto> tensor = onnx_import::bound_input(*input, values, options_.input_shapes);
    if (!tensor.is_ok()) return error(tensor.code(), tensor.status().message());
    graph->mutable_input()->erase(input);
    *graph->add_initializer() = std::move(tensor).value();
  }
  return Status::ok();
}

Result<ImportedModel> Importer::run(onnx::ModelProto& model) {
  bool found = false;
  for (const onnx::OperatorSetIdProto& import : model.opset_import()) {
    if (!is_default_domain(import.domain())) continue;
    opset_ = import.version();
    found = true;
  }
  if (!found) {
    bool training_only = model.graph().node_size() > 0;
    for (const onnx::NodeProto& node : model.graph().node()) {
      if (is_imported_training_op(node)) continue;
      training_only = false;
      if (is_default_domain(node.domain())) continue;
      return error(Error::kNotSupported, "node '" + node.name() + "' (" + node.op_type() + ", domain '" +
                                             node.domain() + "'): domain '" + node.domain() +
                                             "' is not supported; plugrt imports the default ONNX domain only");
    }
    // A model of optimizer ops alone imports only their domain: it is read with the
    // newest default opset plugrt computes in.
    if (!training_only) {
      return error(Error::kInvalidArgument, "the model imports no opset of the default ONNX domain");
    }
    opset_ = kComputedOnnxOpset;
  }
  if (opset_ > 0 && opset_ < kMinOnnxOpset) {  // older models are upgraded first
    Status status = onnx_import::upgrade_opset(&model, opset_, kMinOnnxOpset);
    if (!status.is_ok()) return error(status.code(), status.message());
    opset_ = kMinOnnxOpset;
  }
  if (opset_ > kComputedOnnxOpset && opset_ <= kMaxOnnxOpset) {  // opsets 18 to 21, in their opset-17 forms
    Status status = onnx_import::lower_to_opset_17(&model, opset_);
    if (!status.is_ok()) return error(status.code(), status.message());
    opset_ = kComputedOnnxOpset;
  }
  if (opset_ < kMinOnnxOpset || opset_ > kMaxOnnxOpset) {
    return error(Error::kNotSupported, "opset " + std::to_string(opset_) +
                                           " of the default ONNX domain is not supported (plugrt imports opsets " +
                                           std::to_string(kMinOnnxOpset) + " to " + std::to_string(kMaxOnnxOpset) +
                                           ")");
  }
  PLUGRT_RETURN_IF_ERROR(bind_input_values(&model));
  bool half_in_float32 = false;
  if (options_.half_precision == ImportOptions::HalfPrecision::kFloat32) {
    Result<bool> widened = onnx_import::compute_half_in_float32(&model);
    if (!widened.is_ok()) return error(widened.code(), widened.status().message());
    half_in_float32 = *widened;
  }
  PLUGRT_RETURN_IF_ERROR(read_graph(model));
  try {
    check_with_onnx(model);
  } catch (const std::exception& e) {
    return error(Error::kInvalidArgument, std::string("the ONNX checker refuses the model: ") + e.what());
  }
  PLUGRT_ASSIGN_OR_RETURN(std::vector<uint8_t> graph, import_graph());
  ImportedModel imported;
  imported.graph = std::move(graph);
  imported.opset = opset_;
  imported.producer = model.producer_name();
  if (!model.producer_version().empty()) {
    imported.producer += (imported.producer.empty() ? "" : " ") + model.producer_version();
  }
  imported.folded_nodes = folded_;
  imported.half_in_float32 = half_in_float32;
  return imported;
}

}  // namespace

Result<ImportedModel> import_onnx_bytes(Span<const uint8_t> bytes, const std::string& origin,
                                        const ImportOptions& options) {
  try {
    if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
      return Status(Error::kNotSupported, origin + ": the model is larger than 2 GiB (external data is not supported)");
    }
    onnx::ModelProto model;
    if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return Status(Error::kInvalidArgument, origin + ": not an ONNX model (the protobuf does not parse)");
    }
    Importer importer(origin, options);
    return importer.run(model);
  } catch (const std::bad_alloc&) {
    return Status(Error::kMemoryAllocationFailed, origin + ": out of memory while importing");
  } catch (const std::exception& e) {
    return Status(Error::kInvalidArgument, origin + ": " + e.what());
  } catch (...) {
    return Status(Error::kInternal, origin + ": an unknown exception while importing");
  }
}

Result<ImportedModel> import_onnx_file(const std::string& path, const ImportOptions& options) {
  std::vector<uint8_t> bytes;
  try {
    std::error_code ignored;
    if (std::filesystem::is_directory(path, ignored)) {
      return Status(Error::kAccessFailed, path + ": cannot read the file (it is a directory)");
    }
    std::ifstream file(path, std::ios::binary);
    if (!file) return Status(Error::kAccessFailed, path + ": cannot open the file");
    bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    if (file.bad()) return Status(Error::kAccessFailed, path + ": cannot read the file");
  } catch (const std::exception& e) {
    return Status(Error::kAccessFailed, path + ": cannot read the file: " + e.what());
  }
  return import_onnx_bytes(Span<const uint8_t>(bytes.data(), bytes.size()), path, options);
}

}  // namespace plugrt::compiler
