// SPDX-License-Identifier: Apache-2.0
// plugrt-contract-test --plugin P --model M.onnx --input NAME=FILE.npy ... --expect NAME=FILE.npy ...
// Imports the model, asks the plugin's partition for every node (and says which it
// took), compiles it for the plugin alone, loads it (init) with verification at load
// (each partition against its portable fallback on seeded inputs, as `plugrt run
// --verify` does), runs it once (execute) and compares each expected output under the
// ONNX test runner's tolerances (compare.h).
#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "backend_coverage.h"
#include "compare.h"
#include "compiler.h"
#include "npy.h"
#include "onnx_importer.h"
#include "plugin_session.h"
#include "plugrt/backend_options.h"
#include "plugrt/method.h"
#include "plugrt/program.h"
#include "plugrt/runtime/runtime.h"
#include "program_session.h"
#include "runner_modes.h"

namespace plugrt::contract_runner {

namespace {

constexpr char kTool[] = "plugrt-contract-test --model";

int fail(const std::string& message) {
  std::cerr << kTool << ": " << message << "\n";
  return 1;
}

int usage_error(const std::string& message) {
  std::cerr << kTool << ": " << message << "\n";
  return 2;
}

/// "NAME=FILE.npy" arguments of `flag`, read; the first error names the flag.
Result<std::map<std::string, tools::NpyArray>> read_arrays(const std::vector<std::string>& arguments,
                                                           const std::string& flag) {
  std::map<std::string, tools::NpyArray> arrays;
  for (const std::string& argument : arguments) {
    const size_t equals = argument.find('=');
    if (equals == std::string::npos || equals == 0) {
      return Status(Error::kInvalidArgument, flag + " '" + argument + "' is not NAME=FILE.npy");
    }
    PLUGRT_ASSIGN_OR_RETURN(tools::NpyArray array, tools::read_npy(argument.substr(equals + 1)));
    if (!arrays.emplace(argument.substr(0, equals), std::move(array)).second) {
      return Status(Error::kInvalidArgument, flag + " names '" + argument.substr(0, equals) + "' twice");
    }
  }
  return arrays;
}

/// "NAME=MIN..MAX" or "NAME=VALUE" arguments of --dim, read.
Result<std::map<std::string, compiler::DimBounds>> read_dims(const std::vector<std::string>& arguments) {
  std::map<std::string, compiler::DimBounds> dims;
  for (const std::string& argument : arguments) {
    SessionOptions parsed;  // the form plugrt compile --dim takes
    const bool single = argument.find("..") == std::string::npos;
    const std::string text = single ? argument + ".." + argument.substr(argument.rfind('=') + 1) : argument;
    if (argument.find('=') == std::string::npos || !parsed.add_dim(text)) {
      return Status(Error::kInvalidArgument, "--dim '" + argument + "' is not NAME=MIN..MAX or NAME=VALUE");
    }
    for (const auto& [name, range] : parsed.dims) dims[name] = compiler::DimBounds{range.min, range.max};
  }
  return dims;
}

/// The importer's complaint about input shapes, worded for this mode's flags.
std::string shape_error(const std::string& model, const compiler::InputShapeProblem& problem, const Status& status) {
  using Kind = compiler::InputShapeProblem::Kind;
  if (problem.kind == Kind::kShapeRefused) return model + ": --input: " + problem.reason;
  if (problem.kind == Kind::kDimRefused) return model + ": --dim: " + problem.reason;
  if (problem.kind == Kind::kShapeNeeded) {
    return model + ": " + problem.reason + "; give it with --input " + problem.input + "=FILE.npy" +
           (problem.symbol.empty() ? "" : " (or keep it symbolic: --dim " + problem.symbol + "=MIN..MAX)");
  }
  return status.message();
}

/// Imports the model. The inputs' shapes fix its dynamic dimensions, except where `dims`
/// keeps them symbolic: an input's shape is given only when the model asks for it.
Result<compiler::ImportedModel> import_model(const std::string& model,
                                             const std::map<std::string, tools::NpyArray>& inputs,
                                             const std::map<std::string, compiler::DimBounds>& dims) {
  compiler::InputShapeProblem problem;
  compiler::ImportOptions import_options;
  import_options.input_shape_problem = &problem;
  import_options.dims = dims;
  if (dims.empty()) {
    for (const auto& [name, array] : inputs) import_options.input_shapes[name] = array.shape;
  }
  for (;;) {
    problem = compiler::InputShapeProblem{};
    Result<compiler::ImportedModel> imported = compiler::import_onnx_file(model, import_options);
    if (imported.is_ok()) return imported;
    const Status why(imported.code(), shape_error(model, problem, imported.status()));
    if (problem.kind != compiler::InputShapeProblem::Kind::kShapeNeeded) return why;
    size_t added = 0;
    for (const compiler::NeededShape& needed : problem.needed) {
      auto given = inputs.find(needed.input);
      if (given == inputs.end() || import_options.input_shapes.count(needed.input) != 0) continue;
      import_options.input_shapes[needed.input] = given->second.shape;
      ++added;
    }
    if (added == 0) return why;
  }
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  return text + "]";
}

/// Runs the model on `backend` alone; prints what happened; 0 when every expected output matched.
int check_backend(PluginSession& session, const std::string& backend, const ModelCheckOptions& options,
                  const std::vector<uint8_t>& graph, const std::map<std::string, tools::NpyArray>& expected) {
  std::cout << "backend '" << backend << "':\n";
  BackendOptions compile_specs, runtime_options;
  if (Status added = compile_specs.add_all(options.compile_specs); !added.is_ok()) return fail(added.message());
  if (Status added = runtime_options.add_all(options.runtime_options); !added.is_ok()) return fail(added.message());
  const std::vector<plugrt_option> specs = compile_specs.for_backend(backend);
  Result<conformance::Coverage> coverage = conformance::partition_coverage(
      session.registry(), backend, graph, Span<const plugrt_option>(specs.data(), specs.size()));
  if (!coverage.is_ok()) return fail("partition: " + coverage.status().to_string());
  std::cout << "  partition " << coverage->describe() << "\n";
  for (const std::string& node : coverage->taken) std::cout << "    took " << node << "\n";
  if (!coverage->refused.empty()) {
    return fail("backend '" + backend + "' does not take every node of " + options.model +
                ", so the model cannot run through it alone; --model checks models the plugin runs entirely");
  }

  compiler::CompileOptions compile_options;
  compile_options.backends = {backend};
  compile_options.producer = "plugrt-contract-test";
  compile_options.compile_specs = &compile_specs;
  Result<compiler::CompiledModel> compiled = compiler::compile_graph(graph, session.registry(), compile_options);
  if (!compiled.is_ok()) return fail("preprocess: " + compiled.status().message());
  if (std::string elsewhere = conformance::placed_elsewhere(compiled->summary, backend); !elsewhere.empty()) {
    return fail("the compiled program runs " + elsewhere + ", not only '" + backend + "'");
  }
  for (const compiler::PartitionSummary& partition : compiled->summary.partitions) {
    std::cout << "  preprocess: " << partition.name << ", " << partition.num_nodes << " nodes, blob "
              << partition.blob_size << " bytes"
              << (partition.blob_names_constants ? ", names its constants (the program lends them at init)" : "")
              << "\n";
  }

  Result<Program> program = Program::from_bytes(compiled->program, options.model);
  if (!program.is_ok()) return fail(program.status().to_string());
  MethodOptions method_options;
  method_options.allowed_backends = {backend};
  method_options.verify = true;
  method_options.backend_options = &runtime_options;
  Result<Method> method = Method::load(*program, "forward", session.run_registry(), method_options);
  if (!method.is_ok()) return fail("init: " + method.status().to_string());
  for (const DelegatePlacement& placement : method->report().delegates) {
    if (placement.fell_back) return fail("init: " + placement.delegate + " fell back to portable: " + placement.reason);
    std::cout << "  verification of " << placement.delegate << ": " << placement.verification << "\n";
  }
  Result<plugrt::RegisteredBackend> runs_on = session.run_registry().find_backend(backend);
  const bool isolated = runs_on.is_ok() && runs_on->plugin().isolated;
  std::cout << "  init: " << method->report().delegates.size() << " handle(s)"
            << (isolated ? ", isolated in plugrt-backend-host processes" : "") << "\n";

  for (size_t i = 0; i < method->num_inputs(); ++i) {
    const std::string& name = method->input_spec(i).name;
    bool given = false;
    for (const std::string& argument : options.inputs) given = given || argument.rfind(name + "=", 0) == 0;
    if (!given) return fail("--input: the model's input '" + name + "' has no NAME=FILE.npy");
  }
  if (Status status = tools::fill_inputs(*method, options.inputs, 0); !status.is_ok()) {
    return fail("--input: " + status.message());
  }
  if (Status status = method->execute(); !status.is_ok()) return fail("execute: " + status.to_string());
  // An isolated backend that crashed or hung ran the call on its portable fallback instead.
  for (const DelegatePlacement& placement : method->report().delegates) {
    if (placement.fell_back) {
      return fail("execute: " + placement.delegate + " fell back to portable: " + placement.reason);
    }
  }
  std::cout << "  execute: ok\n";

  bool all_match = true;
  for (const auto& [name, want] : expected) {
    size_t index = method->num_outputs();
    for (size_t i = 0; i < method->num_outputs(); ++i) {
      if (method->output_spec(i).name == name) index = i;
    }
    if (index == method->num_outputs()) return fail("--expect: the model has no output '" + name + "'");
    const tools::NpyArray got = tools::output_array(*method, index);
    std::string mismatch;
    if (got.dtype != want.dtype || got.shape != want.shape) {
      mismatch = "the plugin gives " + std::string(to_string(got.dtype)) + " " + shape_text(got.shape) + ", expected " +
                 std::string(to_string(want.dtype)) + " " + shape_text(want.shape);
    } else {
      const size_t count = got.data.size() / std::max<size_t>(dtype_size(got.dtype), 1);
      mismatch = conformance::compare_elements(got.dtype, got.shape, got.data.data(), want.data.data(), count);
    }
    all_match = all_match && mismatch.empty();
    std::cout << "  output '" << name << "': " << (mismatch.empty() ? "matches" : "DIFFERS: " + mismatch) << "\n";
  }
  return all_match ? 0 : 1;
}

}  // namespace

int run_model_check(const ModelCheckOptions& options) {
  if (options.expected.empty()) {
    std::cerr << kTool << ": give at least one --expect NAME=FILE.npy: without one nothing is checked\n";
    return 2;
  }
  Result<std::map<std::string, tools::NpyArray>> inputs = read_arrays(options.inputs, "--input");
  if (!inputs.is_ok()) return fail(inputs.status().message());
  Result<std::map<std::string, tools::NpyArray>> expected = read_arrays(options.expected, "--expect");
  if (!expected.is_ok()) return fail(expected.status().message());

  Result<std::map<std::string, compiler::DimBounds>> dims = read_dims(options.dims);
  if (!dims.is_ok()) return usage_error(dims.status().message());
  Result<compiler::ImportedModel> imported = import_model(options.model, *inputs, *dims);
  if (!imported.is_ok()) return fail(imported.status().message());
  for (const auto& [name, bounds] : *dims) {
    std::cout << "dimension kept symbolic: " << name << "=" << bounds.min << ".." << bounds.max << "\n";
  }

  Result<std::unique_ptr<PluginSession>> session =
      PluginSession::open(options.plugin_path, options.backend, options.isolated);
  if (!session.is_ok()) return fail(session.status().message());
  int exit_code = 0;
  for (const std::string& backend : (*session)->backends()) {
    if (check_backend(**session, backend, options, imported->graph, *expected) != 0) exit_code = 1;
  }
  std::cout << (exit_code == 0 ? "every expected output matched (float: |got - want| <= 1e-5 + 1e-3 * |want|; "
                                 "integers and bool: exact)\n"
                               : "the model check FAILED\n");
  return exit_code;
}

}  // namespace plugrt::contract_runner
