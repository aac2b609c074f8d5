// `plugrt compile MODEL.onnx -o OUT.prt`: import, partition over the chosen backends,
// lower, write; then a summary of what runs where.
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "command_runtime.h"
#include "commands.h"
#include "text.h"
#include "compiler.h"

namespace plugrt::tools {

namespace {

using json = nlohmann::json;

struct CompileCommandOptions {
  std::string model;
  std::string output;
  std::string backends;  // comma-separated
  bool no_fallback = false;
  std::vector<std::string> input_shapes;  // NAME=D0,D1,...
  PluginSearchOptions plugins;
  bool json = false;
};

/// "x=1,3,224,224" -> ("x", {1, 3, 224, 224}); false when malformed.
bool parse_input_shape(const std::string& text, std::string* name, std::vector<int64_t>* shape) {
  const size_t equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0) return false;
  *name = text.substr(0, equals);
  shape->clear();
  for (const std::string& dim : split(text.substr(equals + 1), ',')) {
    char* end = nullptr;
    const long long value = std::strtoll(dim.c_str(), &end, 10);
    if (end == dim.c_str() || *end != '\0' || value < 0) return false;
    shape->push_back(value);
  }
  return true;
}

std::string ops_text(const std::map<std::string, size_t>& ops) {
  std::string text;
  for (const auto& [op, count] : ops) text += (text.empty() ? "" : ", ") + op + " x" + std::to_string(count);
  return text;
}

/// The importer's input-shape problem worded for this command's flag.
std::string input_shape_error(const std::string& model, const compiler::InputShapeProblem& problem) {
  if (problem.kind == compiler::InputShapeProblem::Kind::kShapeRefused) {
    return model + ": --input-shape: " + problem.reason;
  }
  std::string dims = problem.rank == 0 ? "D0,D1,..." : "";  // rank 0: the model declares none
  for (size_t axis = 0; axis < problem.rank; ++axis) dims += (axis == 0 ? "D" : ",D") + std::to_string(axis);
  return model + ": " + problem.reason + "; give its shape with --input-shape " + problem.input + "=" + dims;
}

int run_compile(const CompileCommandOptions& options) {
  compiler::InputShapeProblem shape_problem;
  compiler::ImportOptions import_options;
  import_options.input_shape_problem = &shape_problem;
  for (const std::string& text : options.input_shapes) {
    std::string name;
    std::vector<int64_t> shape;
    if (!parse_input_shape(text, &name, &shape)) {
      std::cerr << "plugrt compile: --input-shape '" << text << "' is not NAME=D0,D1,...\n";
      return 2;
    }
    import_options.input_shapes[name] = shape;
  }
  compiler::CompileOptions compile_options;
  compile_options.backends = split(options.backends, ',');
  compile_options.fallback = !options.no_fallback;
  compile_options.producer = "plugrt compile " PLUGRT_VERSION;

  CommandRuntime runtime(options.plugins);
  if (!runtime.status().is_ok()) {
    std::cerr << "plugrt compile: " << runtime.status().message() << "\n";
    return 1;
  }
  Result<compiler::CompiledModel> compiled =
      compiler::compile_onnx_file(options.model, runtime.registry(), compile_options, import_options);
  if (!compiled.is_ok()) {
    const bool shape_error = shape_problem.kind != compiler::InputShapeProblem::Kind::kNone;
    std::cerr << "plugrt compile: "
              << (shape_error ? input_shape_error(options.model, shape_problem) : compiled.status().message()) << "\n";
    return 1;
  }
  const std::string output = options.output.empty() ? options.model + ".prt" : options.output;
  std::ofstream out(output, std::ios::binary);
  out.write(reinterpret_cast<const char*>(compiled->program.data()),
            static_cast<std::streamsize>(compiled->program.size()));
  out.close();
  if (!out) {
    std::cerr << "plugrt compile: " << output << ": cannot write the program\n";
    return 1;
  }

  const compiler::CompileSummary& summary = compiled->summary;
  if (options.json) {
    json partitions = json::array();
    for (const compiler::PartitionSummary& p : summary.partitions) {
      partitions.push_back({{"name", p.name},
                            {"backend", p.backend},
                            {"nodes", p.num_nodes},
                            {"ops", p.op_counts},
                            {"blob_bytes", p.blob_size},
                            {"fallback_bytes", p.fallback_size}});
    }
    json result = {{"model", options.model},        {"output", output},
                   {"bytes", compiled->program.size()}, {"backends", summary.backends},
                   {"nodes", summary.num_nodes},    {"partitions", partitions},
                   {"untaken_ops", summary.untaken_ops}};
    std::cout << result.dump(2) << "\n";
    return 0;
  }
  std::cout << "compiled " << options.model << " -> " << output << " (" << compiled->program.size()
            << " bytes, " << summary.num_nodes << " nodes)\n";
  std::cout << "backends, in priority order: ";
  for (size_t i = 0; i < summary.backends.size(); ++i) std::cout << (i ? ", " : "") << summary.backends[i];
  std::cout << "\n";
  for (const compiler::PartitionSummary& p : summary.partitions) {
    std::cout << "  " << p.name << ": " << p.num_nodes << " nodes, blob " << p.blob_size << " bytes";
    if (p.fallback_size > 0) std::cout << ", portable fallback " << p.fallback_size << " bytes";
    std::cout << "\n    " << ops_text(p.op_counts) << "\n";
  }
  if (!summary.untaken_ops.empty()) {
    std::cout << "ops no chosen backend took (run on portable): " << ops_text(summary.untaken_ops) << "\n";
  }
  return 0;
}

}  // namespace

void add_compile_command(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<CompileCommandOptions>();
  CLI::App* command = app.add_subcommand("compile", "Compile an ONNX model into a plugrt program (.prt)");
  command->add_option("MODEL", options->model, "The ONNX model (.onnx)")->required();
  command->add_option("-o,--output", options->output, "The program file to write (default: MODEL.prt)");
  command->add_option("--backends", options->backends,
                      "Backends in priority order, comma-separated; 'portable' takes the rest "
                      "(default: every backend found: xnnpack, onednn, others by name, then portable)");
  command->add_flag("--no-fallback", options->no_fallback,
                    "Leave out the portable fallback of each delegated partition");
  command->add_option("--input-shape", options->input_shapes,
                      "NAME=D0,D1,...: a static shape for an input with dynamic dimensions (repeatable)");
  add_plugin_search_options(*command, options->plugins);
  command->add_flag("--json", options->json, "Print the summary as JSON");
  command->callback([options, &result] { result.exit_code = run_compile(*options); });
}

}  // namespace plugrt::tools
