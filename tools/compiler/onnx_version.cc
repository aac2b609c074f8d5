// SPDX-License-Identifier: Apache-2.0
// Upgrading models of opsets below the importer's range with ONNX's version converter.
//
// The converter trusts its input, and fuzzed models crashed it more than once, so the
// model is checked first for what it relies on: the ONNX checker's rules, every name
// defined, and the ranks its Gemm 6 to 7 adapter indexes without looking. (Running it in a
// forked child was tried: a fork from a process with other threads can deadlock in the
// child, which an AddressSanitizer build of the conformance run did; and ONNX's own shape
// inference crashed on fuzzed old models, so it cannot fill in the shapes either.)
#include <onnx/checker.h>
#include <onnx/version_converter/convert.h>

#include <map>
#include <set>
#include <string>

#include "onnx_internal.h"

namespace plugrt::compiler::onnx_import {

namespace {

/// A name that a node input or a graph output uses but nothing defines, or "". The
/// converter looks each one up and writes through what it finds (a fuzzed model whose
/// output no node writes crashed it), and the checker does not look for them.
std::string undefined_name(const onnx::GraphProto& graph) {
  std::set<std::string> defined;
  for (const onnx::ValueInfoProto& input : graph.input()) defined.insert(input.name());
  for (const onnx::TensorProto& initializer : graph.initializer()) defined.insert(initializer.name());
  for (const onnx::NodeProto& node : graph.node()) defined.insert(node.output().begin(), node.output().end());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) {
      if (!input.empty() && defined.count(input) == 0) return input;
    }
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    if (defined.count(output.name()) == 0) return output.name();
  }
  return "";
}

/// The rank of each value whose shape the model states (graph inputs, initializers,
/// value_info), as the converter sees them.
std::map<std::string, int> stated_ranks(const onnx::GraphProto& graph) {
  std::map<std::string, int> ranks;
  auto note = [&](const onnx::ValueInfoProto& info) {
    if (info.type().has_tensor_type() && info.type().tensor_type().has_shape()) {
      ranks[info.name()] = info.type().tensor_type().shape().dim_size();
    }
  };
  for (const onnx::ValueInfoProto& input : graph.input()) note(input);
  for (const onnx::ValueInfoProto& info : graph.value_info()) note(info);
  for (const onnx::TensorProto& initializer : graph.initializer()) ranks[initializer.name()] = initializer.dims_size();
  return ranks;
}

/// Why the converter's Gemm 6 to 7 adapter cannot take the model, or "": it reads the
/// first two dimensions of inputs A and B from their stated shapes without checking that
/// there are two (a scalar A made it read through a null pointer).
std::string unstated_gemm_rank(const onnx::GraphProto& graph) {
  const std::map<std::string, int> ranks = stated_ranks(graph);
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() != "Gemm" || !(node.domain().empty() || node.domain() == "ai.onnx")) continue;
    for (int i = 0; i < 2 && i < node.input_size(); ++i) {
      const auto rank = ranks.find(node.input(i));
      if (rank != ranks.end() && rank->second == 2) continue;
      return "node '" + node.name() + "' (Gemm): the converter needs input " + (i == 0 ? "A" : "B") + " ('" +
             node.input(i) + "') to have a stated 2-D shape, and it has " +
             (rank == ranks.end() ? std::string("none (give it a value_info)")
                                  : "rank " + std::to_string(rank->second));
    }
  }
  return "";
}

}  // namespace

namespace {

/// ONNX 1.12's converter turns an opset-1 to 4 Reshape's `shape` attribute into a
/// Constant input whose tensor has the values but no dims (a scalar holding several
/// elements, which nothing accepts): such a Constant gets the one dimension its values
/// give, in `graph` and its subgraphs.
void repair_shape_constants(onnx::GraphProto* graph) {
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) repair_shape_constants(attribute.mutable_g());
      for (onnx::GraphProto& subgraph : *attribute.mutable_graphs()) repair_shape_constants(&subgraph);
      if (node.op_type() != "Constant" || attribute.name() != "value" || !attribute.has_t()) continue;
      onnx::TensorProto* tensor = attribute.mutable_t();
      if (tensor->dims_size() == 0 && tensor->data_type() == onnx::TensorProto::INT64 &&
          tensor->int64_data_size() > 1) {
        tensor->add_dims(tensor->int64_data_size());
      }
    }
  }
}

}  // namespace

Status upgrade_opset(onnx::ModelProto* model, int64_t from, int64_t to) {
  const std::string cannot = "opset " + std::to_string(from) +
                             " of the default ONNX domain cannot be upgraded to opset " + std::to_string(to) +
                             " (plugrt imports opsets " + std::to_string(to) + " and later): ";
  try {
    onnx::checker::check_model(*model);
  } catch (const std::exception& e) {
    return Status(Error::kInvalidArgument, cannot + "the ONNX checker refuses the model: " + e.what());
  }
  if (const std::string name = undefined_name(model->graph()); !name.empty()) {
    return Status(Error::kInvalidArgument,
                  cannot + "'" + name + "' is used but no input, initializer or node defines it");
  }
  if (const std::string why = unstated_gemm_rank(model->graph()); !why.empty()) {
    return Status(Error::kNotSupported,
                  cannot + why + "; or export the model at opset " + std::to_string(to) + " or later");
  }
  try {
    onnx::ModelProto upgraded = onnx::version_conversion::ConvertVersion(*model, static_cast<int>(to));
    model->Swap(&upgraded);
  } catch (const std::exception& e) {
    return Status(Error::kNotSupported, cannot + "ONNX's version converter says: " + e.what());
  }
  repair_shape_constants(model->mutable_graph());
  return Status::ok();
}

}  // namespace plugrt::compiler::onnx_import
