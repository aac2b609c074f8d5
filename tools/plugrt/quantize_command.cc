// SPDX-License-Identifier: Apache-2.0
// `plugrt quantize MODEL.onnx -o MODEL.int8.onnx`: post-training quantization into QDQ
// ONNX (tools/quantizer), then a report of each node's quantization error.
#include <fstream>
#include <iostream>

#include "command_runtime.h"
#include "commands.h"
#include "quantizer.h"
#include "text.h"

namespace plugrt::tools {

namespace {

struct QuantizeCommandOptions {
  quantizer::QuantizeOptions quantize;
  std::string activations = "uint8";
  std::string observer = "minmax";
  std::string exclude;  // comma-separated
  std::string report;
  PluginSearchOptions plugins;
};

/// MODEL.onnx -> MODEL.int8.onnx
std::string default_output(const std::string& model) {
  const bool onnx = model.size() > 5 && model.compare(model.size() - 5, 5, ".onnx") == 0;
  const std::string stem = onnx ? model.substr(0, model.size() - 5) : model;
  return stem + ".int8.onnx";
}

/// The library's options from the flags; an exit code (2) when they contradict each other.
int resolve_options(QuantizeCommandOptions& options) {
  quantizer::QuantizeOptions& q = options.quantize;
  if (q.output.empty()) q.output = default_output(q.model);
  q.int8_activations = options.activations == "int8";
  q.observer = options.observer == "percentile" ? quantizer::Observer::kPercentile
               : options.observer == "entropy"  ? quantizer::Observer::kEntropy
                                                : quantizer::Observer::kMinMax;
  for (const std::string& name : split(options.exclude, ',')) {
    if (!name.empty()) q.exclude.insert(name);
  }
  if (!q.dynamic && q.calibrate.empty()) {
    std::cerr << "plugrt quantize: " << q.model << ": static quantization needs --calibrate DIR (or --dynamic)\n";
    return 2;
  }
  return 0;
}

/// The summary line, then the report on stdout or in --report FILE.
int print_report(const QuantizeCommandOptions& options, const quantizer::QuantizeReport& report) {
  const quantizer::QuantizeOptions& q = options.quantize;
  size_t quantized = 0;
  for (const quantizer::NodeReport& row : report.nodes) quantized += row.quantized ? 1 : 0;
  std::cout << "quantized " << q.model << " -> " << q.output << " (" << quantized << " of " << report.nodes.size()
            << " nodes, " << (q.dynamic ? "dynamic" : "static") << ", " << report.samples << " calibration samples)\n";
  if (options.report.empty()) {
    std::cout << quantizer::report_text(report);
    return 0;
  }
  std::ofstream out(options.report);
  out << quantizer::report_text(report);
  if (!out) {
    std::cerr << "plugrt quantize: " << options.report << ": cannot write the report\n";
    return 1;
  }
  return 0;
}

int run_quantize(QuantizeCommandOptions& options) {
  if (int refused = resolve_options(options); refused != 0) return refused;
  Result<std::unique_ptr<Runtime>> runtime = make_runtime(options.plugins);
  if (!runtime.is_ok()) {
    std::cerr << "plugrt quantize: " << runtime.status().message() << "\n";
    return 1;
  }
  Result<quantizer::QuantizeReport> report = quantizer::quantize_model(options.quantize, (*runtime)->registry());
  if (!report.is_ok()) {
    std::cerr << "plugrt quantize: " << report.status().message() << "\n";
    return 1;
  }
  return print_report(options, *report);
}

}  // namespace

void add_quantize_command(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<QuantizeCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "quantize", "Quantize an ONNX model to int8 (static, calibrated; or dynamic), written as QDQ ONNX");
  command->add_option("MODEL", options->quantize.model, "The float ONNX model (.onnx)")->required();
  command->add_option("-o,--output", options->quantize.output, "The QDQ model to write (default: MODEL.int8.onnx)");
  command->add_option("--calibrate", options->quantize.calibrate,
                      "DIR of calibration samples: DIR/*.npy for a model with one input, "
                      "DIR/<sample>/<input name>.npy otherwise");
  command->add_option("--activations", options->activations, "uint8 (default) or int8, asymmetric, per tensor")
      ->check(CLI::IsMember({"uint8", "int8"}));
  command
      ->add_option("--observer", options->observer,
                   "How an activation's range is chosen: minmax (default), percentile (of |x|) or entropy "
                   "(least KL divergence, as TensorRT calibrates)")
      ->check(CLI::IsMember({"minmax", "percentile", "entropy"}));
  command->add_option("--percentile", options->quantize.percentile, "The percentile of |x| kept (default 99.99)")
      ->check(CLI::Range(50.0, 100.0));
  command->add_option("--exclude", options->exclude, "NODE_NAME,...: nodes left float");
  command->add_option("--tolerance", options->quantize.tolerance,
                      "Leave float each node whose output's relative L2 error on the calibration set is above "
                      "this (default: none is)");
  command->add_option("--report", options->report, "Write the per-node report to FILE instead of stdout");
  command->add_flag("--dynamic", options->quantize.dynamic,
                    "Dynamic quantization of MatMul and Gemm (int8 weights per channel, activations quantized at "
                    "run time: DynamicQuantizeLinear + MatMulInteger); needs no calibration, but with --calibrate "
                    "the report measures each node's error");
  add_plugin_search_options(*command, options->plugins);
  command->callback([options, &result] { result.exit_code = run_quantize(*options); });
}

}  // namespace plugrt::tools
