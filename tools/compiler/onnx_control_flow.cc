// SPDX-License-Identifier: Apache-2.0
// Control flow in the ONNX importer: an If whose condition is a constant at import is
// replaced by the nodes of the branch it takes; any other If, Loop or Scan keeps its
// subgraphs, each imported as a graph of its own (subgraph_model makes it one).
#include "onnx_internal.h"

namespace plugrt::compiler::onnx_import {

namespace {

/// Names a graph defines itself: its inputs, initializers and node outputs.
std::set<std::string> defined_in(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const onnx::ValueInfoProto& input : graph.input()) names.insert(input.name());
  for (const onnx::TensorProto& initializer : graph.initializer()) names.insert(initializer.name());
  for (const onnx::NodeProto& node : graph.node()) names.insert(node.output().begin(), node.output().end());
  return names;
}

/// Renames, in `graph` and the graphs nested in it, every use of a name of `renames`
/// that the graph does not define itself (those uses reach the enclosing scope).
void rename_outer_uses(onnx::GraphProto* graph, const std::map<std::string, std::string>& renames) {
  const std::set<std::string> local = defined_in(*graph);
  std::map<std::string, std::string> outer;
  for (const auto& [from, to] : renames) {
    if (local.count(from) == 0) outer.emplace(from, to);
  }
  if (outer.empty()) return;
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    for (int k = 0; k < node.input_size(); ++k) {
      auto it = outer.find(node.input(k));
      if (it != outer.end()) node.set_input(k, it->second);
    }
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) rename_outer_uses(attribute.mutable_g(), outer);
      for (onnx::GraphProto& nested : *attribute.mutable_graphs()) rename_outer_uses(&nested, outer);
    }
  }
  for (onnx::ValueInfoProto& output : *graph->mutable_output()) {
    auto it = outer.find(output.name());
    if (it != outer.end()) output.set_name(it->second);
  }
}

void collect_outer_uses(const onnx::GraphProto& graph, std::set<std::string>* uses) {
  const std::set<std::string> local = defined_in(graph);
  std::set<std::string> nested_uses;
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) {
      if (!input.empty()) nested_uses.insert(input);
    }
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g()) collect_outer_uses(attribute.g(), &nested_uses);
      for (const onnx::GraphProto& nested : attribute.graphs()) collect_outer_uses(nested, &nested_uses);
    }
  }
  for (const onnx::ValueInfoProto& output : graph.output()) nested_uses.insert(output.name());
  for (const std::string& name : nested_uses) {
    if (local.count(name) == 0) uses->insert(name);
  }
}

}  // namespace

std::set<std::string> implicit_inputs(const onnx::NodeProto& node) {
  std::set<std::string> uses;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.has_g()) collect_outer_uses(attribute.g(), &uses);
    for (const onnx::GraphProto& nested : attribute.graphs()) collect_outer_uses(nested, &uses);
  }
  return uses;
}

Status inline_if_branch(const onnx::NodeProto& node, bool condition, const std::string& prefix,
                        std::vector<onnx::NodeProto>* nodes, std::vector<onnx::TensorProto>* initializers) {
  const char* const wanted = condition ? "then_branch" : "else_branch";
  const onnx::GraphProto* branch = nullptr;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == wanted && attribute.type() == onnx::AttributeProto::GRAPH) branch = &attribute.g();
  }
  if (branch == nullptr) return Status(Error::kInvalidArgument, std::string("has no graph '") + wanted + "'");
  if (branch->output_size() != node.output_size()) {
    return Status(Error::kInvalidArgument, std::string(wanted) + " has " + std::to_string(branch->output_size()) +
                                               " outputs; the If has " + std::to_string(node.output_size()));
  }
  if (branch->sparse_initializer_size() > 0) {
    return Status(Error::kNotSupported, std::string(wanted) + " has sparse initializers");
  }
  // The branch's own names get the prefix, so they cannot meet names of the outer graph.
  std::map<std::string, std::string> renames;
  for (const std::string& name : defined_in(*branch)) renames.emplace(name, prefix + name);
  onnx::GraphProto copy = *branch;
  for (onnx::NodeProto& inner : *copy.mutable_node()) {
    for (int k = 0; k < inner.input_size(); ++k) {
      auto it = renames.find(inner.input(k));
      if (it != renames.end()) inner.set_input(k, it->second);
    }
    for (int k = 0; k < inner.output_size(); ++k) {
      if (!inner.output(k).empty()) inner.set_output(k, renames.at(inner.output(k)));
    }
    if (!inner.name().empty()) inner.set_name(prefix + inner.name());
    for (onnx::AttributeProto& attribute : *inner.mutable_attribute()) {
      if (attribute.has_g()) rename_outer_uses(attribute.mutable_g(), renames);
      for (onnx::GraphProto& nested : *attribute.mutable_graphs()) rename_outer_uses(&nested, renames);
    }
    nodes->push_back(std::move(inner));
  }
  for (const onnx::TensorProto& initializer : copy.initializer()) {
    initializers->push_back(initializer);
    initializers->back().set_name(renames.at(initializer.name()));
  }
  // Each If output is an Identity of the branch's output (a branch-local or outer name).
  for (int k = 0; k < node.output_size(); ++k) {
    if (node.output(k).empty()) continue;
    const std::string& source = copy.output(k).name();
    auto it = renames.find(source);
    onnx::NodeProto identity;
    identity.set_op_type("Identity");
    identity.set_name(prefix + "output_" + std::to_string(k));
    identity.add_input(it != renames.end() ? it->second : source);
    identity.add_output(node.output(k));
    nodes->push_back(std::move(identity));
  }
  return Status::ok();
}

Status subgraph_model(const onnx::GraphProto& body, int64_t opset, const std::vector<onnx::TypeProto>& formal_types,
                      const std::vector<std::pair<std::string, onnx::TypeProto>>& captured,
                      const std::map<std::string, const Tensor*>& constants, onnx::ModelProto* model) {
  if (static_cast<size_t>(body.input_size()) != formal_types.size()) {
    return Status(Error::kInvalidArgument, "subgraph '" + body.name() + "' has " + std::to_string(body.input_size()) +
                                               " inputs; the node gives it " + std::to_string(formal_types.size()));
  }
  if (body.sparse_initializer_size() > 0) {
    return Status(Error::kNotSupported, "subgraph '" + body.name() + "' has sparse initializers");
  }
  model->Clear();
  model->set_ir_version(onnx::IR_VERSION);
  onnx::OperatorSetIdProto* import = model->add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  onnx::GraphProto* graph = model->mutable_graph();
  *graph = body;
  for (size_t k = 0; k < formal_types.size(); ++k) {
    *graph->mutable_input(static_cast<int>(k))->mutable_type() = formal_types[k];
  }
  for (const auto& [name, type] : captured) {
    onnx::ValueInfoProto* input = graph->add_input();
    input->set_name(name);
    *input->mutable_type() = type;
  }
  for (const auto& [name, tensor] : constants) tensor_to_proto(*tensor, name, graph->add_initializer());
  // An output that is an input of the subgraph is written by an Identity: the graph IR
  // wants every output written by a node.
  std::set<std::string> inputs;
  for (const onnx::ValueInfoProto& input : graph->input()) inputs.insert(input.name());
  for (onnx::ValueInfoProto& output : *graph->mutable_output()) {
    if (inputs.count(output.name()) == 0) continue;
    onnx::NodeProto* identity = graph->add_node();
    identity->set_op_type("Identity");
    identity->add_input(output.name());
    output.set_name(output.name() + "/passed");
    identity->add_output(output.name());
  }
  return Status::ok();
}

}  // namespace plugrt::compiler::onnx_import
