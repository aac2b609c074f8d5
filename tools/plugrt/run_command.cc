// SPDX-License-Identifier: Apache-2.0
// `plugrt run PROGRAM.prt`: run "forward" once on inputs from .npy files (or seeded
// random ones), write the outputs, and say where each part ran and why.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "command_runtime.h"
#include "commands.h"
#include "plugrt/runtime/report_json.h"
#include "program_session.h"
#include "text.h"

namespace plugrt::tools {

namespace {

using json = nlohmann::json;

struct RunOptions {
  std::string program;
  std::vector<std::string> inputs;
  std::string output_dir;
  LoadSettings load;
  bool report = false;
  bool check = false;
  std::vector<std::string> expected;  // NAME=FILE.npy
  double tolerance = 1e-4;
  uint64_t seed = 0;
  PluginSearchOptions plugins;
  bool json = false;
};

/// A file name for an output: its name with path separators and odd characters replaced.
std::string file_name_for(const std::string& output_name, size_t index) {
  std::string name = output_name.empty() ? "output_" + std::to_string(index) : output_name;
  for (char& c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  return name + ".npy";
}

int fail(const std::string& message) {
  std::cerr << "plugrt run: " << message << "\n";
  return 1;
}

int run_program(const RunOptions& options) {
  Result<std::unique_ptr<Runtime>> runtime = make_runtime(options.plugins);
  if (!runtime.is_ok()) return fail(runtime.status().message());
  Result<Program> program = Program::load(options.program);
  if (!program.is_ok()) return fail(program.status().message());
  const auto load_start = std::chrono::steady_clock::now();
  Result<Method> method = (*runtime)->load_method(*program, "forward", options.load);
  if (!method.is_ok()) return fail(method.status().message());
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
  if (Status status = fill_inputs(*method, options.inputs, options.seed); !status.is_ok())
    return fail(status.message());

  const auto start = std::chrono::steady_clock::now();
  ExecuteOptions limit;  // --execute-timeout-ms bounds every call, on any backend
  limit.timeout = std::chrono::milliseconds(options.plugins.execute_timeout_ms);
  if (Status status = method->execute(limit); !status.is_ok()) return fail(status.message());
  const double milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  if (!options.output_dir.empty()) {
    // Like `mkdir -p`: a missing directory and its parents are made.
    std::error_code error;
    std::filesystem::create_directories(options.output_dir, error);
    if (error) return fail("--output-dir '" + options.output_dir + "': cannot create it: " + error.message());
  }
  json outputs = json::array();
  for (size_t i = 0; i < method->num_outputs(); ++i) {
    const TensorSpec& spec = method->output_spec(i);
    const DLTensor& tensor = method->output(i);  // this run's shape (a dimension may vary)
    json entry = {{"name", spec.name},
                  {"dtype", std::string(to_string(spec.dtype))},
                  {"shape", std::vector<int64_t>(tensor.shape, tensor.shape + tensor.ndim)}};
    if (!options.output_dir.empty()) {
      const std::string path = options.output_dir + "/" + file_name_for(spec.name, i);
      if (Status status = write_npy(path, output_array(*method, i)); !status.is_ok()) return fail(status.message());
      entry["file"] = path;
    }
    outputs.push_back(std::move(entry));
  }

  // Agreement with the portable backend: the same inputs through the fallback blobs.
  json agreement;
  if (options.check) {
    LoadSettings portable = options.load;
    portable.backends = {"portable"};
    portable.placement = "as-compiled";
    Result<Method> reference = (*runtime)->load_method(*program, "forward", portable);
    if (!reference.is_ok()) return fail("--check: " + reference.status().message());
    if (Status status = fill_inputs(*reference, options.inputs, options.seed); !status.is_ok()) {
      return fail(status.message());
    }
    if (Status status = reference->execute(limit); !status.is_ok()) return fail("--check: " + status.message());
    double worst = 0;
    for (size_t i = 0; i < method->num_outputs(); ++i) {
      worst = std::max(worst, max_abs_difference(output_array(*method, i), output_array(*reference, i)));
    }
    agreement = {{"max_abs_difference", worst}};
  }

  // Expected outputs: each must match within the tolerance (float32) or exactly.
  json expectations = json::array();
  bool mismatch = false;
  for (const std::string& argument : options.expected) {
    const size_t equals = argument.find('=');
    if (equals == std::string::npos || equals == 0) return fail("--expect '" + argument + "' is not NAME=FILE.npy");
    const std::string name = argument.substr(0, equals);
    size_t index = method->num_outputs();
    for (size_t i = 0; i < method->num_outputs(); ++i) {
      if (method->output_spec(i).name == name) index = i;
    }
    if (index == method->num_outputs()) return fail("--expect: the program has no output '" + name + "'");
    Result<NpyArray> want = read_npy(argument.substr(equals + 1));
    if (!want.is_ok()) return fail(want.status().message());
    const double difference = max_abs_difference(output_array(*method, index), *want);
    const bool matches = difference <= options.tolerance;
    mismatch = mismatch || !matches;
    expectations.push_back({{"output", name}, {"max_abs_difference", difference}, {"matches", matches}});
  }

  if (options.json) {
    json result = {{"program", options.program},
                   {"load_ms", load_ms},
                   {"latency_ms", milliseconds},
                   {"placement_policy", method->report().placement},
                   {"placement", delegates_json(method->report())},
                   {"outputs", outputs}};
    if (!method->report().placement_note.empty()) result["placement_note"] = method->report().placement_note;
    if (!method->report().placement_measured.empty()) {
      result["placement_measured"] = method->report().placement_measured;
    }
    if (!options.expected.empty()) result["expected"] = expectations;
    if (options.check) result["agreement_with_portable"] = agreement;
    std::cout << result.dump(2) << "\n";
    return mismatch ? 1 : 0;
  }
  std::cout << "ran " << options.program << " in " << milliseconds << " ms (loaded in " << load_ms << " ms, placement "
            << method->report().placement << ")\n";
  if (options.report) {
    if (!method->report().placement_note.empty()) {
      std::cout << "  placement auto not used: " << method->report().placement_note << "\n";
    }
    if (!method->report().placement_measured.empty()) {
      std::cout << "  placement auto " << method->report().placement_measured << "\n";
    }
    for (const DelegatePlacement& d : method->report().delegates) {
      std::cout << "  " << d.delegate << " ran on " << d.backend << " (" << d.origin << ")";
      if (d.isolated && !d.fell_back) std::cout << ", isolated";
      std::cout << ", blob from " << d.blob_origin;
      if (d.fell_back) std::cout << ", fallback: " << d.reason;
      if (!d.fell_back && !d.verification.empty()) std::cout << ", verification " << d.verification;
      if (!d.placement_reason.empty()) std::cout << "; " << d.placement_reason;
      std::cout << "\n";
    }
  }
  for (const json& output : outputs) {
    std::cout << "  output " << output["name"].get<std::string>() << ": " << output["dtype"].get<std::string>() << " "
              << shape_text(output["shape"].get<std::vector<int64_t>>());
    if (output.contains("file")) std::cout << " -> " << output["file"].get<std::string>();
    std::cout << "\n";
  }
  if (options.check) {
    std::cout << "  agreement with portable: max abs difference " << agreement["max_abs_difference"].get<double>()
              << "\n";
  }
  for (const json& e : expectations) {
    std::cout << "  output " << e["output"].get<std::string>()
              << (e["matches"].get<bool>() ? " matches" : " DIFFERS FROM")
              << " the expected values (max abs difference " << e["max_abs_difference"].get<double>() << ", tolerance "
              << options.tolerance << ")\n";
  }
  if (mismatch) std::cerr << "plugrt run: an output differs from its expected values\n";
  return mismatch ? 1 : 0;
}

}  // namespace

void add_run_command(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand("run", "Run a program's forward method once");
  command->add_option("PROGRAM", options->program, "The program (.prt)")->required();
  command->add_option("--input", options->inputs,
                      "NAME=FILE.npy for an input (repeatable); inputs not given get seeded random values");
  command->add_option("--output-dir", options->output_dir,
                      "Write each output to DIR/<output name>.npy (DIR and its parents are created when missing)");
  add_load_options(*command, options->load);
  command->add_flag("--report", options->report,
                    "Say which backend ran each part, where its blob came from, and why (fallbacks included)");
  command->add_flag("--check", options->check,
                    "Also run the same inputs on the portable backend and print the largest difference");
  command->add_option("--expect", options->expected,
                      "NAME=FILE.npy: fail unless output NAME matches these values (repeatable)");
  command->add_option("--tolerance", options->tolerance, "Largest absolute difference --expect accepts (default 1e-4)");
  command->add_option("--seed", options->seed, "Seed of the random inputs (default 0)");
  add_plugin_search_options(*command, options->plugins);
  add_isolation_options(*command, options->plugins);
  command->add_flag("--json", options->json, "Print machine-readable JSON");
  command->callback([options, &result] { result.exit_code = run_program(*options); });
}

}  // namespace plugrt::tools
