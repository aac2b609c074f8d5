// Upgrading models of opsets below the importer's range with ONNX's version converter.
#include <onnx/checker.h>
#include <onnx/version_converter/convert.h>

#include <set>
#include <string>

#include "onnx_internal.h"

namespace plugrt::compiler::onnx_import {

namespace {

/// A name that a node input or a graph output uses but nothing defines, or "". ONNX's
/// converter looks each one up and writes through what it finds (a fuzzed model whose
/// output no node writes crashed it), and its checker does not look for them.
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

}  // namespace

Status upgrade_opset(onnx::ModelProto* model, int64_t from, int64_t to) {
  const std::string cannot = "opset " + std::to_string(from) + " of the default ONNX domain cannot be upgraded to opset " +
                             std::to_string(to) + " (plugrt imports opsets " + std::to_string(to) + " and later): ";
  // The converter trusts its input: a malformed graph crashes it (found by the ONNX
  // importer fuzzer), so the ONNX checker sees the model first.
  try {
    onnx::checker::check_model(*model);
  } catch (const std::exception& e) {
    return Status(Error::kInvalidArgument, cannot + "the ONNX checker refuses the model: " + e.what());
  }
  if (const std::string name = undefined_name(model->graph()); !name.empty()) {
    return Status(Error::kInvalidArgument, cannot + "'" + name + "' is used but no input, initializer or node defines it");
  }
  try {
    onnx::ModelProto upgraded = onnx::version_conversion::ConvertVersion(*model, static_cast<int>(to));
    model->Swap(&upgraded);
  } catch (const std::exception& e) {
    return Status(Error::kNotSupported, cannot + "ONNX's version converter says: " + e.what());
  }
  return Status::ok();
}

}  // namespace plugrt::compiler::onnx_import
