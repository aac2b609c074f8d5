// SPDX-License-Identifier: Apache-2.0
// `plugrt compile MODEL.onnx -o OUT.prt`: import, simplify, place over the chosen
// backends, lower, write; then the placement: what runs where, at what estimated cost.
#include <fstream>
#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>

#include "command_runtime.h"
#include "commands.h"
#include "compiler.h"
#include "plugrt/backend_options.h"
#include "text.h"

namespace plugrt::tools {

namespace {

using json = nlohmann::json;

struct CompileCommandOptions {
  std::string model;
  std::string output;
  std::string backends;  // comma-separated
  bool no_fallback = false;
  std::string placement = "cost";
  bool no_passes = false;
  bool tune = false;
  double tune_seconds = 120;
  double measure_seconds = 10;
  bool no_profile = false;
  std::vector<std::string> input_shapes;     // NAME=D0,D1,...
  std::vector<std::string> dims;             // NAME=MIN..MAX
  std::vector<std::string> input_values;     // NAME=V0,V1,...
  std::string compute_dtype = "float32";     // of float16 and bfloat16 models: float32 or as-given
  std::vector<std::string> backend_options;  // NAME.KEY=VALUE: compile specs
  PluginSearchOptions plugins;
  bool json = false;
};

/// "x=1,3,224,224" -> ("x", {1, 3, 224, 224}); false when malformed.
bool parse_input_value(const std::string& text, std::string* name, std::vector<double>* values) {
  const size_t equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0) return false;
  *name = text.substr(0, equals);
  values->clear();
  for (const std::string& item : split(text.substr(equals + 1), ',')) {
    char* end = nullptr;
    const double value = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0') return false;
    values->push_back(value);
  }
  return !values->empty();
}

/// "seq=1..256" -> ("seq", {1, 256}); false when malformed.
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
  if (problem.kind == compiler::InputShapeProblem::Kind::kDimRefused) return model + ": --dim: " + problem.reason;
  // Every input that needs a shape, each with the flag that gives it.
  std::string flags, bounds;
  for (const compiler::NeededShape& needed : problem.needed) {
    std::string dims = needed.rank == 0 ? "D0,D1,..." : "";  // rank 0: the model declares none
    for (size_t axis = 0; axis < needed.rank; ++axis) dims += (axis == 0 ? "D" : ",D") + std::to_string(axis);
    flags += " --input-shape " + needed.input + "=" + dims;
    const std::string dim = " --dim " + needed.symbol + "=MIN..MAX";
    if (!needed.symbol.empty() && bounds.find(dim) == std::string::npos) bounds += dim;
  }
  const std::string whose = problem.needed.size() == 1 ? "its shape" : "their shapes";
  return model + ": " + problem.reason + "; give " + whose + ":" + flags +
         (bounds.empty() ? "" : " (or bounds for the dimensions that vary:" + bounds + ")");
}

int run_compile(const CompileCommandOptions& options) {
  compiler::InputShapeProblem shape_problem;
  compiler::ImportOptions import_options;
  import_options.input_shape_problem = &shape_problem;
  SessionOptions shapes;  // the forms the runtime's sessions take too
  for (const std::string& text : options.input_shapes) {
    if (!shapes.add_input_shape(text)) {
      std::cerr << "plugrt compile: --input-shape '" << text << "' is not NAME=D0,D1,...\n";
      return 2;
    }
  }
  import_options.input_shapes = shapes.input_shapes;
  for (const std::string& text : options.input_values) {
    std::string name;
    std::vector<double> values;
    if (!parse_input_value(text, &name, &values)) {
      std::cerr << "plugrt compile: --input-value '" << text << "' is not NAME=V0,V1,...\n";
      return 2;
    }
    import_options.input_values[name] = values;
  }
  import_options.half_precision = options.compute_dtype == "as-given"
                                      ? compiler::ImportOptions::HalfPrecision::kAsGiven
                                      : compiler::ImportOptions::HalfPrecision::kFloat32;
  for (const std::string& text : options.dims) {
    if (!shapes.add_dim(text)) {
      std::cerr << "plugrt compile: --dim '" << text << "' is not NAME=MIN..MAX\n";
      return 2;
    }
  }
  for (const auto& [name, range] : shapes.dims) import_options.dims[name] = compiler::DimBounds{range.min, range.max};
  compiler::CompileOptions compile_options;
  compile_options.backends = split(options.backends, ',');
  compile_options.fallback = !options.no_fallback;
  compile_options.passes = !options.no_passes;
  compile_options.placement =
      options.placement == "first" ? compiler::PlacementRule::kFirstTaker : compiler::PlacementRule::kCost;
  compile_options.producer = "plugrt compile " PLUGRT_VERSION;
  BackendOptions compile_specs;
  if (Status added = compile_specs.add_all(options.backend_options); !added.is_ok()) {
    std::cerr << "plugrt compile: " << added.message() << "\n";
    return 2;
  }
  compile_options.compile_specs = &compile_specs;

  // The machine's cost profile: read unless told not to, written back after --tune.
  placement::CostProfile profile;
  std::string profile_path;
  if (!options.no_profile) {
    const std::string directory = placement::CostProfile::default_directory();
    if (directory.empty() && options.tune) {
      std::cerr << "plugrt compile: --tune: no place for the cost profile (set PLUGRT_CACHE_DIR, XDG_CACHE_HOME "
                   "or HOME)\n";
      return 2;
    }
    if (!directory.empty()) {
      const std::string cpu = placement::CostProfile::this_cpu();
      profile_path = placement::CostProfile::file_for(directory, cpu);
      std::string warning;
      profile = placement::CostProfile::load(profile_path, cpu, &warning);
      if (!warning.empty()) std::cerr << "plugrt compile: warning: " << warning << "\n";
      compile_options.profile = &profile;
    }
  } else if (options.tune) {
    std::cerr << "plugrt compile: --tune and --no-profile contradict each other\n";
    return 2;
  }
  compile_options.tune = options.tune;
  compile_options.tune_options.budget_seconds = options.tune_seconds;
  compile_options.measure_seconds = options.measure_seconds;
  compile_options.tune_options.progress = &std::cerr;

  Result<std::unique_ptr<Runtime>> made = make_runtime(options.plugins);
  if (!made.is_ok()) {
    std::cerr << "plugrt compile: " << made.status().message() << "\n";
    return 1;
  }
  Runtime& runtime = **made;
  // With no --backends, every backend found may be used: register them all, since the
  // compiler lists backends by what the registry holds, not by name.
  if (compile_options.backends.empty()) runtime.load_all();
  Result<compiler::CompiledModel> compiled =
      compiler::compile_onnx_file(options.model, runtime.registry(), compile_options, import_options);
  if (!compiled.is_ok()) {
    const bool shape_error = shape_problem.kind != compiler::InputShapeProblem::Kind::kNone;
    std::cerr << "plugrt compile: "
              << (shape_error ? input_shape_error(options.model, shape_problem) : compiled.status().message()) << "\n";
    return 1;
  }
  const placement::TuneReport& tuned = compiled->summary.tune;
  if (options.tune || tuned.measured > 0) {
    Status saved = profile.save(profile_path);
    if (!saved.is_ok()) {
      std::cerr << "plugrt compile: " << saved.message() << "\n";
      if (options.tune) return 1;
    }
    std::cerr << (options.tune ? "tune: " : "measured: ") << tuned.measured << " measured in " << std::fixed
              << std::setprecision(2) << tuned.seconds << " s, " << tuned.known << " already in the profile, "
              << tuned.failed << " failed, " << tuned.skipped << " left for lack of time, " << tuned.settled
              << " left on backends clearly slower; profile " << profile_path << "\n";
    std::cerr.unsetf(std::ios::floatfield);
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
                            {"fallback_bytes", p.fallback_size},
                            {"blob_names_constants", p.blob_names_constants},
                            {"estimated_us", p.estimated_us},
                            {"unmeasured_choices", p.unmeasured_choices}});
      if (p.measured_us >= 0) partitions.back()["measured_us"] = p.measured_us;
    }
    json result = {{"model", options.model},
                   {"output", output},
                   {"bytes", compiled->program.size()},
                   {"backends", summary.backends},
                   {"placement", summary.placement},
                   {"estimated_us", summary.estimated_us},
                   {"measured_nodes", summary.measured_nodes},
                   {"measured_now", summary.tune.measured},
                   {"profile", profile_path},
                   {"imported_nodes", summary.num_nodes_imported},
                   {"passes", summary.pass_changes},
                   {"nodes", summary.num_nodes},
                   {"partitions", partitions},
                   {"untaken_ops", summary.untaken_ops},
                   {"notes", summary.notes}};
    std::cout << result.dump(2) << "\n";
    return 0;
  }
  std::cout << "compiled " << options.model << " -> " << output << " (" << compiled->program.size() << " bytes, "
            << summary.num_nodes << " nodes)\n";
  for (const std::string& note : summary.notes) std::cout << "note: " << note << "\n";
  if (!summary.pass_changes.empty()) {
    std::cout << "graph passes: " << summary.num_nodes_imported << " -> " << summary.num_nodes << " nodes ("
              << ops_text(summary.pass_changes) << ")\n";
  }
  std::cout << "backends: ";
  for (size_t i = 0; i < summary.backends.size(); ++i) std::cout << (i ? ", " : "") << summary.backends[i];
  std::cout << "\nplacement (" << summary.placement << "): " << summary.partitions.size()
            << (summary.partitions.size() == 1 ? " partition" : " partitions") << ", estimated " << std::fixed
            << std::setprecision(1) << summary.estimated_us << " us";
  if (!profile_path.empty()) std::cout << " (" << summary.measured_nodes << " nodes' costs measured)";
  std::cout << "\n";
  for (const compiler::PartitionSummary& p : summary.partitions) {
    std::cout << "  " << p.name << ": " << p.num_nodes << " nodes, estimated " << p.estimated_us << " us";
    if (p.measured_us >= 0) std::cout << " (measured nodes " << p.measured_us << " us)";
    if (p.unmeasured_choices > 0) {
      std::cout << " (estimated, not measured: " << p.unmeasured_choices << " nodes other backends also take)";
    }
    std::cout << ", blob " << p.blob_size << " bytes";
    if (p.fallback_size > 0) std::cout << ", portable fallback " << p.fallback_size << " bytes";
    if (p.blob_names_constants) std::cout << " (holds the weights the blob names)";
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
                      "Backends that may be used, comma-separated; 'portable' takes what none of them takes "
                      "(default: every backend found with ahead-of-time entries, by name)");
  command
      ->add_option("--placement", options->placement,
                   "cost: the lowest estimated latency of the whole graph (default); first: each node to the "
                   "first backend in --backends order that takes it")
      ->check(CLI::IsMember({"cost", "first"}));
  command->add_flag("--no-graph-passes", options->no_passes,
                    "Place the graph as imported, without the graph passes (no-op and dead node removal, "
                    "chain collapsing, Pad folding)");
  command->add_flag("--tune", options->tune,
                    "Measure each op on each backend that takes it (in this process; progress on stderr) and keep "
                    "the figures in this machine's cost profile, in $PLUGRT_CACHE_DIR, $XDG_CACHE_HOME/plugrt or "
                    "~/.cache/plugrt; later compiles use them");
  command
      ->add_option("--tune-seconds", options->tune_seconds,
                   "Stop measuring after this many seconds; the rest keeps the estimate (default 120)")
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--measure-seconds", options->measure_seconds,
                   "Where two or more backends take a node and the profile has no figure for one of them, measure "
                   "it (as --tune does, for those nodes only) for at most this many seconds; 0: never, and an "
                   "unmeasured backend then loses to a measured one (default 10)")
      ->check(CLI::NonNegativeNumber);
  command->add_flag("--no-profile", options->no_profile,
                    "Ignore the cost profile: place on the built-in estimate alone");
  command->add_flag("--no-fallback", options->no_fallback,
                    "Leave out the portable fallback of each delegated partition (each blob then holds its own "
                    "copy of its weights)");
  command->add_option("--input-shape", options->input_shapes,
                      "NAME=D0,D1,...: a static shape for an input with dynamic dimensions (repeatable; e.g. "
                      "--input-shape input=1,3,224,224; an error names every input that needs one)");
  command->add_option("--input-value", options->input_values,
                      "NAME=V0,V1,...: bind an input to these values (a sample rate, a flag): it becomes a constant, "
                      "no longer an input of the program, and what depends on it folds, control flow included "
                      "(repeatable; e.g. --input-value sr=16000)");
  command
      ->add_option("--compute-dtype", options->compute_dtype,
                   "How a float16 or bfloat16 model computes: float32 (default: weights widened, a Cast at each "
                   "half input and output, so every backend can take it) or as-given")
      ->check(CLI::IsMember({"float32", "as-given"}));
  command->add_option("--dim", options->dims,
                      "NAME=MIN..MAX: keep the ONNX symbolic dimension NAME (a dim_param), which takes sizes from "
                      "MIN to MAX at run time (repeatable)");
  command->add_option("--backend-option", options->backend_options,
                      "NAME.KEY=VALUE: a compile spec for backend NAME, given to its partition and preprocess and "
                      "stored with its blobs for its init (repeatable; the backend defines its keys)");
  add_plugin_search_options(*command, options->plugins);
  command->add_flag("--json", options->json, "Print the summary as JSON");
  command->callback([options, &result] { result.exit_code = run_compile(*options); });
}

}  // namespace plugrt::tools
