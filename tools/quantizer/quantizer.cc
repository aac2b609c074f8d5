// SPDX-License-Identifier: Apache-2.0
#include "quantizer.h"

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>

#include "calibration.h"
#include "candidates.h"
#include "dynamic_writer.h"
#include "graph_edit.h"
#include "qdq_writer.h"

namespace plugrt::quantizer {

namespace {

/// The lowest opset of each form: per-axis DequantizeLinear (static), DynamicQuantizeLinear.
constexpr int64_t kStaticOpset = 13;
constexpr int64_t kDynamicOpset = 11;

Result<onnx::ModelProto> read_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Error::kAccessFailed, path + ": cannot read the model");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes) || !model.has_graph()) {
    return Status(Error::kInvalidArgument, path + ": not an ONNX model (it does not parse as a ModelProto)");
  }
  return model;
}

Status write_model(const onnx::ModelProto& model, const std::string& path) {
  std::string bytes;
  std::ofstream out(path, std::ios::binary);
  if (!model.SerializeToString(&bytes) || !out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    return Status(Error::kAccessFailed, path + ": cannot write the quantized model");
  }
  return Status::ok();
}

/// The graph's inputs that no initializer gives.
std::vector<std::string> model_inputs(const onnx::GraphProto& graph) {
  std::set<std::string> constants;
  for (const onnx::TensorProto& tensor : graph.initializer()) constants.insert(tensor.name());
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (constants.count(input.name()) == 0) names.push_back(input.name());
  }
  return names;
}

/// One report row per candidate; the excluded ones say so. Errors: a name in --exclude
/// that names no node of the model.
Result<std::vector<NodeReport>> initial_report(const std::vector<Candidate>& candidates, const QuantizeOptions& options,
                                               const onnx::GraphProto& graph, const std::set<std::string>& gemms) {
  std::vector<NodeReport> rows;
  std::set<std::string> names;
  for (const onnx::NodeProto& node : graph.node()) names.insert(node.name());
  for (const std::string& name : options.exclude) {
    if (names.count(name) == 0) {
      return Status(Error::kInvalidArgument, options.model + ": --exclude: the model has no node named '" + name + "'");
    }
  }
  for (const Candidate& c : candidates) {
    NodeReport row{c.name, gemms.count(c.name) != 0 ? "Gemm" : c.op_type, c.output, true, "", 0, 1};
    if (options.exclude.count(c.name) != 0) row.quantized = false, row.reason = "excluded (--exclude)";
    if (options.dynamic && c.op_type != "MatMul")
      row.quantized = false, row.reason = "dynamic quantization takes MatMul and Gemm only";
    if (options.dynamic) row.output = c.node_output;
    rows.push_back(row);
  }
  return rows;
}

std::vector<Candidate> chosen(const std::vector<Candidate>& candidates, const std::vector<NodeReport>& rows) {
  std::vector<Candidate> out;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (rows[i].quantized) out.push_back(candidates[i]);
  }
  return out;
}

/// Writes the chosen nodes into a copy of a model.
using Writer = std::function<void(onnx::GraphProto*, const std::vector<Candidate>&)>;

/// Writes the report's quantized nodes into a copy of `prepared`, measures each one's
/// output error and the model outputs' on `samples` (none: no measure) and fills the
/// report; returns the copy.
Result<onnx::ModelProto> quantize_and_measure(const onnx::ModelProto& prepared,
                                              const std::vector<Candidate>& candidates, const Writer& write,
                                              const std::vector<Sample>& samples, const QuantizeOptions& options,
                                              Registry& registry, QuantizeReport* report) {
  onnx::ModelProto model = prepared;
  write(model.mutable_graph(), chosen(candidates, report->nodes));
  if (samples.empty()) return model;
  std::vector<std::string> compared;
  for (const NodeReport& row : report->nodes) {
    if (row.quantized) compared.push_back(row.output);
  }
  for (const onnx::ValueInfoProto& output : prepared.graph().output()) compared.push_back(output.name());
  PLUGRT_ASSIGN_OR_RETURN(auto errors, measure_error(prepared, model, compared, samples, options, registry));
  for (NodeReport& row : report->nodes) {
    auto found = errors.find(row.output);
    if (!row.quantized || found == errors.end()) continue;
    row.relative_l2 = found->second.relative_l2;
    row.cosine = found->second.cosine;
  }
  report->outputs.clear();
  for (const onnx::ValueInfoProto& output : prepared.graph().output()) {
    auto found = errors.find(output.name());
    if (found != errors.end())
      report->outputs.push_back({output.name(), found->second.relative_l2, found->second.cosine});
  }
  return model;
}

/// Marks the quantized nodes above the tolerance float; true when there was one.
bool apply_tolerance(double tolerance, std::vector<NodeReport>* rows) {
  bool changed = false;
  for (NodeReport& row : *rows) {
    if (tolerance <= 0 || !row.quantized || row.relative_l2 <= tolerance) continue;
    char text[96];
    std::snprintf(text, sizeof(text), "left float: relative error %.4g above the tolerance %.4g", row.relative_l2,
                  tolerance);
    row.quantized = false;
    row.reason = text;
    changed = true;
  }
  return changed;
}

/// The activations the chosen nodes read and write.
std::vector<std::string> activations(const std::vector<Candidate>& chosen) {
  std::set<std::string> names;
  for (const Candidate& c : chosen) {
    names.insert(c.input);
    names.insert(c.output);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

/// Quantizes with `write`, then, where a node's error is above the tolerance, again
/// without it; writes the model.
Result<QuantizeReport> quantize_with(const onnx::ModelProto& prepared, const std::vector<Candidate>& candidates,
                                     const Writer& write, const std::vector<Sample>& samples, QuantizeReport report,
                                     const QuantizeOptions& options, Registry& registry) {
  report.samples = samples.size();
  PLUGRT_ASSIGN_OR_RETURN(onnx::ModelProto model,
                          quantize_and_measure(prepared, candidates, write, samples, options, registry, &report));
  if (!samples.empty() && apply_tolerance(options.tolerance, &report.nodes)) {
    PLUGRT_ASSIGN_OR_RETURN(model,
                            quantize_and_measure(prepared, candidates, write, samples, options, registry, &report));
  }
  PLUGRT_RETURN_IF_ERROR(write_model(model, options.output));
  return report;
}

Result<QuantizeReport> quantize_static(const onnx::ModelProto& prepared, const std::vector<Candidate>& candidates,
                                       QuantizeReport report, const QuantizeOptions& options, Registry& registry) {
  PLUGRT_ASSIGN_OR_RETURN(std::vector<Sample> samples, read_samples(options.calibrate, model_inputs(prepared.graph())));
  const std::vector<std::string> tensors = activations(chosen(candidates, report.nodes));
  PLUGRT_ASSIGN_OR_RETURN(Ranges ranges, calibrate(prepared, tensors, samples, options, registry));
  const Writer write = [&](onnx::GraphProto* graph, const std::vector<Candidate>& quantized) {
    write_qdq(graph, quantized, ranges, options.int8_activations);
  };
  return quantize_with(prepared, candidates, write, samples, std::move(report), options, registry);
}

/// Dynamic quantization; with calibration samples, the report measures its errors.
Result<QuantizeReport> quantize_dynamic(const onnx::ModelProto& prepared, const std::vector<Candidate>& candidates,
                                        QuantizeReport report, const QuantizeOptions& options, Registry& registry) {
  std::vector<Sample> samples;
  if (!options.calibrate.empty()) {
    PLUGRT_ASSIGN_OR_RETURN(samples, read_samples(options.calibrate, model_inputs(prepared.graph())));
  }
  const Writer write = [](onnx::GraphProto* graph, const std::vector<Candidate>& quantized) {
    write_dynamic(graph, quantized);
  };
  return quantize_with(prepared, candidates, write, samples, std::move(report), options, registry);
}

}  // namespace

Result<QuantizeReport> quantize_model(const QuantizeOptions& options, Registry& registry) {
  PLUGRT_ASSIGN_OR_RETURN(onnx::ModelProto model, read_model(options.model));
  const int64_t opset = default_opset(model), needed = options.dynamic ? kDynamicOpset : kStaticOpset;
  if (opset < needed) {
    return Status(Error::kNotSupported, options.model + ": opset " + std::to_string(opset) + "; " +
                                            (options.dynamic ? "dynamic" : "static") + " quantization needs opset " +
                                            std::to_string(needed) + " or newer");
  }
  const std::set<std::string> gemms = prepare_graph(model.mutable_graph());
  const std::vector<Candidate> candidates = find_candidates(model.graph());
  QuantizeReport report;
  PLUGRT_ASSIGN_OR_RETURN(report.nodes, initial_report(candidates, options, model.graph(), gemms));
  if (options.dynamic) return quantize_dynamic(model, candidates, std::move(report), options, registry);
  return quantize_static(model, candidates, std::move(report), options, registry);
}

std::string report_text(const QuantizeReport& report) {
  std::ostringstream out;
  out << "node\top\tquantized\trelative_l2\tcosine\tnote\n";
  for (const NodeReport& row : report.nodes) {
    out << row.node << "\t" << row.op_type << "\t" << (row.quantized ? "yes" : "no") << "\t";
    char figures[64];
    std::snprintf(figures, sizeof(figures), "%.6f\t%.6f", row.relative_l2, row.cosine);
    out << (row.quantized && report.samples > 0 ? figures : "-\t-") << "\t" << row.reason << "\n";
  }
  for (const OutputReport& output : report.outputs) {
    char figures[96];
    std::snprintf(figures, sizeof(figures), "relative_l2 %.6f, cosine %.6f", output.relative_l2, output.cosine);
    out << "model output '" << output.output << "': " << figures << "\n";
  }
  return out.str();
}

}  // namespace plugrt::quantizer
