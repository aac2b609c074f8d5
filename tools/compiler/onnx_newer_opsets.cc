// SPDX-License-Identifier: Apache-2.0
// Models of opsets 18 to 21, read natively: ONNX 1.12 (Debian's, whose schemas and shape
// inference the importer uses) knows opsets up to 17, and its version converter cannot
// bring newer models down. So each node whose signature changed after 17 is written in its
// opset-17 form, each op added after 17 that opset 17 can express is decomposed, and the
// model is then imported as opset 17:
//   Reduce* but ReduceSum (18): axes from a constant input become the attribute;
//     noop_with_empty_axes with no axes becomes an Identity;
//   Split (18): num_outputs goes (the outputs say how many; an uneven split is refused
//     by shape inference, naming the node);
//   Resize (18, 19): antialias 0 and keep_aspect_ratio_policy "stretch" go (their
//     defaults); others are refused;
//   AveragePool (19): dilations of 1 go;
//   Cast, CastLike (19): saturate goes (it concerns float8 types only);
//   Mish (18): x * Tanh(Softplus(x)); Gelu (20): its erf or tanh formula, which the graph
//     passes and backends recognise.
// What has no opset-17 form (Pad with axes, GroupNormalization, DFT, float8 and 4-bit
// types...) is refused naming the node, its op and its opset.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <onnx/defs/schema.h>

#include "onnx_internal.h"

namespace plugrt::compiler::onnx_import {

namespace {

void remove_attribute(onnx::NodeProto* node, const std::string& name) {
  auto* attributes = node->mutable_attribute();
  for (int i = 0; i < attributes->size(); ++i) {
    if (attributes->Get(i).name() == name) {
      attributes->DeleteSubrange(i, 1);
      return;
    }
  }
}

/// The int64 values of `name` when a Constant node of `nodes` or an initializer of
/// `graph` holds them.
bool constant_ints(const onnx::GraphProto& graph, const std::vector<onnx::NodeProto>& nodes, const std::string& name,
                   std::vector<int64_t>* values) {
  Tensor tensor;
  for (const onnx::TensorProto& initializer : graph.initializer()) {
    if (initializer.name() == name && tensor_from_proto(initializer, &tensor).is_ok()) break;
  }
  for (const onnx::NodeProto& node : nodes) {
    if (node.op_type() == "Constant" && node.output_size() == 1 && node.output(0) == name) {
      if (!constant_node_value(node, &tensor).is_ok()) return false;
    }
  }
  if (tensor.dtype != DType::kInt64) return false;
  values->resize(tensor.bytes.size() / sizeof(int64_t));
  if (!values->empty()) std::memcpy(values->data(), tensor.bytes.data(), tensor.bytes.size());
  return true;
}

class Lowering {
 public:
  explicit Lowering(int64_t opset) : opset_(opset) {}

  /// Rewrites `graph`'s nodes, and those of every subgraph, in place.
  Status graph(onnx::GraphProto* graph) {
    nodes_ = std::vector<onnx::NodeProto>(graph->node().begin(), graph->node().end());
    const std::vector<onnx::NodeProto> nodes = nodes_;
    graph->clear_node();
    for (onnx::NodeProto node : nodes) {
      for (onnx::AttributeProto& a : *node.mutable_attribute()) {
        if (a.has_g()) PLUGRT_RETURN_IF_ERROR(Lowering(opset_).graph(a.mutable_g()));
        for (onnx::GraphProto& g : *a.mutable_graphs()) PLUGRT_RETURN_IF_ERROR(Lowering(opset_).graph(&g));
      }
      PLUGRT_RETURN_IF_ERROR(lower(&node, graph));
    }
    return Status::ok();
  }

 private:
  Status refuse(const onnx::NodeProto& node, const std::string& why) const {
    return Status(Error::kNotSupported,
                  "node '" + node.name() + "' (" + node.op_type() + ", opset " + std::to_string(opset_) + "): " + why);
  }

  /// Appends `node`, rewritten, to `out`.
  Status lower(onnx::NodeProto* node, onnx::GraphProto* out) {
    const std::string& op = node->op_type();
    if (!node->domain().empty() && node->domain() != "ai.onnx") {
      *out->add_node() = *node;  // the importer refuses other domains, naming them
      return Status::ok();
    }
    if ((op == "Mish" || op == "Gelu") &&
        (node->input_size() != 1 || node->output_size() != 1 || node->input(0).empty() || node->output(0).empty())) {
      return refuse(*node, "takes one input and gives one output");
    }
    if (op == "Mish") return mish(*node, out);
    if (op == "Gelu") return gelu(*node, out);
    if (op.rfind("Reduce", 0) == 0 && op != "ReduceSum") PLUGRT_RETURN_IF_ERROR(reduce(*out, node));
    if (op == "Split") remove_attribute(node, "num_outputs");
    if (op == "Resize") PLUGRT_RETURN_IF_ERROR(resize(node));
    if (op == "AveragePool") PLUGRT_RETURN_IF_ERROR(unit_dilations(node));
    if (op == "Cast" || op == "CastLike") remove_attribute(node, "saturate");
    if (op == "Pad" && node->input_size() > 3 && !node->input(3).empty()) {
      return refuse(*node, "Pad with axes (opset 18) is not supported; give pads for every axis");
    }
    if (onnx::OpSchemaRegistry::Schema(op, 17, "") == nullptr) {
      return refuse(*node, "op '" + op + "' has no form in opset 17, the newest plugrt computes");
    }
    *out->add_node() = *node;
    return Status::ok();
  }

  Status reduce(const onnx::GraphProto& in, onnx::NodeProto* node) {
    const onnx::AttributeProto* noop = find_attribute(*node, "noop_with_empty_axes");
    const bool no_op_when_empty = noop != nullptr && noop->i() != 0;
    remove_attribute(node, "noop_with_empty_axes");
    if (node->input_size() < 2 || node->input(1).empty()) {
      if (node->input_size() > 1) node->mutable_input()->DeleteSubrange(1, node->input_size() - 1);
      if (no_op_when_empty) {  // no axes: the input as it is
        node->set_op_type("Identity");
        node->clear_attribute();
      }
      return Status::ok();
    }
    std::vector<int64_t> axes;
    if (!constant_ints(in, nodes_, node->input(1), &axes)) {
      return refuse(*node, "its axes are computed at run time; plugrt takes constant axes");
    }
    node->mutable_input()->DeleteSubrange(1, node->input_size() - 1);
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name("axes");
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t axis : axes) a->add_ints(axis);
    return Status::ok();
  }

  Status resize(onnx::NodeProto* node) {
    if (const onnx::AttributeProto* a = find_attribute(*node, "antialias"); a != nullptr && a->i() != 0) {
      return refuse(*node, "antialias is not supported");
    }
    if (const onnx::AttributeProto* a = find_attribute(*node, "keep_aspect_ratio_policy");
        a != nullptr && a->s() != "stretch") {
      return refuse(*node, "keep_aspect_ratio_policy '" + a->s() + "' is not supported");
    }
    if (find_attribute(*node, "axes") != nullptr) return refuse(*node, "axes is not supported; give every axis");
    if (const onnx::AttributeProto* a = find_attribute(*node, "coordinate_transformation_mode");
        a != nullptr && a->s() == "half_pixel_symmetric") {
      return refuse(*node, "coordinate_transformation_mode 'half_pixel_symmetric' is not supported");
    }
    remove_attribute(node, "antialias");
    remove_attribute(node, "keep_aspect_ratio_policy");
    return Status::ok();
  }

  Status unit_dilations(onnx::NodeProto* node) {
    const onnx::AttributeProto* dilations = find_attribute(*node, "dilations");
    if (dilations == nullptr) return Status::ok();
    for (int64_t d : dilations->ints()) {
      if (d != 1) return refuse(*node, "dilations other than 1 are not supported");
    }
    remove_attribute(node, "dilations");
    return Status::ok();
  }

  /// A new value name that no model name can take.
  std::string fresh(const onnx::NodeProto& node, const std::string& what) {
    return node.output(0) + "/plugrt_" + what + std::to_string(count_++);
  }

  std::string scalar(onnx::GraphProto* out, const onnx::NodeProto& node, float value) {
    onnx::NodeProto* constant = out->add_node();
    constant->set_op_type("Constant");
    constant->set_name(fresh(node, "constant"));
    constant->add_output(constant->name());
    onnx::AttributeProto* a = constant->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_float_data(value);
    return constant->output(0);
  }

  std::string unary(onnx::GraphProto* out, const onnx::NodeProto& node, const std::string& op,
                    std::vector<std::string> inputs, const std::string& output = "") {
    onnx::NodeProto* added = out->add_node();
    added->set_op_type(op);
    added->set_name(fresh(node, op));
    for (const std::string& input : inputs) added->add_input(input);
    added->add_output(output.empty() ? added->name() : output);
    return added->output(0);
  }

  Status mish(const onnx::NodeProto& node, onnx::GraphProto* out) {  // x * tanh(softplus(x))
    const std::string& x = node.input(0);
    const std::string soft = unary(out, node, "Softplus", {x});
    const std::string tanh = unary(out, node, "Tanh", {soft});
    unary(out, node, "Mul", {x, tanh}, node.output(0));
    return Status::ok();
  }

  Status gelu(const onnx::NodeProto& node, onnx::GraphProto* out) {
    const onnx::AttributeProto* a = find_attribute(node, "approximate");
    const std::string approximate = a != nullptr ? a->s() : "none";
    const std::string& x = node.input(0);
    std::string inner;
    if (approximate == "none") {  // 0.5 * x * (1 + erf(x / sqrt(2))), as PyTorch exports it
      inner = unary(out, node, "Erf", {unary(out, node, "Div", {x, scalar(out, node, std::sqrt(2.0f))})});
    } else if (approximate == "tanh") {  // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
      const std::string cube = unary(out, node, "Mul", {unary(out, node, "Mul", {x, x}), x});
      const std::string sum =
          unary(out, node, "Add", {x, unary(out, node, "Mul", {cube, scalar(out, node, 0.044715f)})});
      inner = unary(out, node, "Tanh", {unary(out, node, "Mul", {sum, scalar(out, node, 0.7978845608f)})});
    } else {
      return refuse(node, "approximate '" + approximate + "' is unknown");
    }
    const std::string one_plus = unary(out, node, "Add", {inner, scalar(out, node, 1.0f)});
    const std::string product = unary(out, node, "Mul", {x, one_plus});
    unary(out, node, "Mul", {product, scalar(out, node, 0.5f)}, node.output(0));
    return Status::ok();
  }

  int64_t opset_;
  std::vector<onnx::NodeProto> nodes_;  // the graph's nodes as the model has them
  int count_ = 0;
};

}  // namespace

Status lower_to_opset_17(onnx::ModelProto* model, int64_t opset) {
  Lowering lowering(opset);
  PLUGRT_RETURN_IF_ERROR(lowering.graph(model->mutable_graph()));
  for (onnx::OperatorSetIdProto& import : *model->mutable_opset_import()) {
    if (import.domain().empty() || import.domain() == "ai.onnx") import.set_version(17);
  }
  // ONNX 1.12's checker reads IR versions up to 8; what newer versions add (float8 and
  // 4-bit types) plugrt refuses on its own, naming the value.
  if (model->ir_version() > 8) model->set_ir_version(8);
  return Status::ok();
}

}  // namespace plugrt::compiler::onnx_import
