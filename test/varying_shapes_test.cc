// SPDX-License-Identifier: Apache-2.0
// Dimensions that vary, end to end: models exported from PyTorch with a symbolic length
// (models/export_models.py: varying_encoder, varying_conv1d), compiled once with bounds
// for it (ImportOptions::dims, as `plugrt compile --dim`), then run at several lengths
// (1, a few, the export's, the maximum) over each backend set built here: portable
// alone, each plugin (dlopen) with portable, all of them. Each result is checked against
// PyTorch's outputs; inputs out of bounds or of the wrong rank are refused by name.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler.h"
#include "npy.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/method.h"
#include "plugrt/placement/load_placer.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"

namespace plugrt::testing {
namespace {

using ::testing::HasSubstr;

std::string model_path(const std::string& file) { return std::string(PLUGRT_MODELS_DIR) + "/" + file; }

struct VaryingModel {
  std::string name;
  std::string symbol;
  int64_t max = 0;
  std::vector<std::string> samples;  ///< the export's sample shapes, as in the file names
  bool all_on_onednn = true;         ///< oneDNN takes every node
};

const VaryingModel kEncoder{"varying_encoder", "seq", 64, {"", "1x1x64.", "1x5x64.", "1x64x64."}};
const VaryingModel kConv1d{"varying_conv1d", "len", 64, {"", "1x8x1.", "1x8x7.", "1x8x64."}};
// Positions from torch.arange(seq): a Range whose limit is a shape value.
// (oneDNN leaves the Range and the embedding's Gather to portable.)
const VaryingModel kPositions{"varying_positions", "seq", 64, {"", "1x1x32.", "1x9x32.", "1x64x32."}, false};

/// A backend set: the plugin files loaded next to the built-in portable backend.
struct BackendSet {
  std::string label;
  std::vector<std::string> plugins;
};

std::vector<BackendSet> backend_sets() {
  std::vector<BackendSet> sets = {{"portable", {}}};
  std::vector<std::string> all;
  for (const char* file : {PLUGRT_ONEDNN_PLUGIN_FILE, PLUGRT_XNNPACK_PLUGIN_FILE}) {
    if (std::string(file).empty()) continue;
    sets.push_back({std::string(file).find("onednn") != std::string::npos ? "onednn" : "xnnpack", {file}});
    all.push_back(file);
  }
  if (all.size() > 1) sets.push_back({"all", all});
  return sets;
}

class VaryingShapesTest : public ::testing::TestWithParam<std::tuple<VaryingModel, BackendSet>> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(register_builtin_backends(registry_).is_ok());
    loader_.emplace(registry_, plugins::SearchPathOptions::explicit_files_only());
    for (const std::string& plugin : std::get<1>(GetParam()).plugins) {
      ASSERT_TRUE(loader_->load(plugin).is_ok()) << plugin;
    }
  }

  /// The model compiled over this set's backends with its symbol in 1..max.
  Result<Program> compile(const VaryingModel& model) {
    compiler::ImportOptions import;
    import.dims[model.symbol] = {1, model.max};
    PLUGRT_ASSIGN_OR_RETURN(
        compiler::CompiledModel compiled,
        compiler::compile_onnx_file(model_path(model.name + ".onnx"), registry_, compiler::CompileOptions{}, import));
    return Program::from_bytes(compiled.program, model.name + ".prt");
  }

  Registry registry_;
  std::optional<plugins::PluginLoader> loader_;
};

/// Runs `method` at each of the model's samples in turn (and the first again, as a
/// server would), checking PyTorch's outputs.
void run_samples(const VaryingModel& model, Method& method) {
  std::vector<std::string> samples = model.samples;
  samples.push_back(model.samples[1]);
  for (const std::string& sample : samples) {
    SCOPED_TRACE(model.name + "." + sample + "input.npy");
    Result<tools::NpyArray> input = tools::read_npy(model_path(model.name + "." + sample + "input.npy"));
    Result<tools::NpyArray> expected = tools::read_npy(model_path(model.name + "." + sample + "output.npy"));
    ASSERT_TRUE(input.is_ok() && expected.is_ok());
    ASSERT_TRUE(method.set_input(0, tools::dltensor_view(*input)).is_ok());
    Status status = method.execute();
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    const DLTensor& output = method.output(0);
    ASSERT_EQ(std::vector<int64_t>(output.shape, output.shape + output.ndim), expected->shape);
    const auto* actual = static_cast<const float*>(output.data);
    double worst = 0;
    for (size_t i = 0; i < expected->data.size() / sizeof(float); ++i) {
      float want;
      std::memcpy(&want, expected->data.data() + i * sizeof(float), sizeof(float));
      worst = std::max(worst, static_cast<double>(std::fabs(actual[i] - want)));
    }
    EXPECT_LT(worst, 1e-4) << "largest difference from PyTorch";
  }
}

/// Whether `backend` may run a delegate of `model` placed over `set`. oneDNN and
/// XNNPACK take dimensions that vary (lowered per shape); oneDNN takes every node of
/// most of these models, XNNPACK some (the rest runs on portable).
bool runs_on(const std::string& backend, const VaryingModel& model, const BackendSet& set) {
  const bool onednn = std::any_of(set.plugins.begin(), set.plugins.end(),
                                  [](const std::string& file) { return file.find("onednn") != std::string::npos; });
  if (onednn && model.all_on_onednn) return backend == "onednn";
  return backend == "portable" || (!set.plugins.empty() && (backend == "xnnpack" || backend == "onednn"));
}

TEST_P(VaryingShapesTest, CompiledOnceRunsAtEachLengthAsPyTorchDoes) {
  const VaryingModel& model = std::get<0>(GetParam());
  Result<Program> program = compile(model);
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  Result<MethodSummary> summary = program->describe("forward");
  ASSERT_EQ(summary->symbols.size(), 1u);
  // Each delegated partition's fallback graph is stored once, within its blob.
  for (const DelegateSummary& delegate : summary->delegates) {
    if (delegate.fallback_size > 0) {
      EXPECT_TRUE(delegate.fallback_within_blob) << delegate.name;
    }
  }
  Result<Method> method = Method::load(*program, "forward", registry_);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  for (const DelegatePlacement& delegate : method->report().delegates) {
    EXPECT_TRUE(runs_on(delegate.backend, model, std::get<1>(GetParam())))
        << delegate.delegate << " on " << delegate.backend;
  }
  run_samples(model, *method);
}

TEST_P(VaryingShapesTest, CompiledForPortableAndPlacedAtLoadRunsAtEachLength) {
  const VaryingModel& model = std::get<0>(GetParam());
  Registry portable_only;
  ASSERT_TRUE(register_builtin_backends(portable_only).is_ok());
  compiler::ImportOptions import;
  import.dims[model.symbol] = {1, model.max};
  compiler::CompileOptions options;
  options.backends = {"portable"};
  Result<compiler::CompiledModel> compiled =
      compiler::compile_onnx_file(model_path(model.name + ".onnx"), portable_only, options, import);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  Result<Program> program = Program::from_bytes(compiled->program, model.name + ".prt");
  ASSERT_TRUE(program.is_ok());
  placement::LoadPlacerOptions placer_options;
  placer_options.cache_directory.clear();  // no blob cache: lowered here each time
  placement::LoadPlacer placer(placer_options);
  MethodOptions load;
  load.placement = PlacementPolicy::kAuto;
  load.placer = &placer;
  Result<Method> method = Method::load(*program, "forward", registry_, load);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_EQ(method->report().placement_note, "");
  for (const DelegatePlacement& delegate : method->report().delegates) {
    EXPECT_TRUE(runs_on(delegate.backend, model, std::get<1>(GetParam())))
        << delegate.delegate << " on " << delegate.backend;
  }
  run_samples(model, *method);
}

TEST_P(VaryingShapesTest, InputsOutOfBoundsOrOfTheWrongRankAreRefusedByName) {
  const VaryingModel& model = std::get<0>(GetParam());
  Result<Program> program = compile(model);
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  Result<Method> method = Method::load(*program, "forward", registry_);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  Result<tools::NpyArray> input = tools::read_npy(model_path(model.name + ".input.npy"));
  ASSERT_TRUE(input.is_ok());
  const size_t axis = model.symbol == "seq" ? 1 : 2;

  tools::NpyArray too_long = *input;
  too_long.shape[axis] = model.max + 1;
  too_long.data.resize(too_long.data.size() / static_cast<size_t>(input->shape[axis]) *
                       static_cast<size_t>(model.max + 1));
  Status status = method->set_input(0, tools::dltensor_view(too_long));
  EXPECT_FALSE(status.is_ok());
  EXPECT_THAT(status.message(),
              HasSubstr("input 0 'input': dimension " + std::to_string(axis) + " is " + std::to_string(model.max + 1) +
                        "; its bound is " + std::to_string(model.max)));

  tools::NpyArray flat = *input;
  flat.shape = {static_cast<int64_t>(input->data.size() / sizeof(float))};
  status = method->set_input(0, tools::dltensor_view(flat));
  EXPECT_FALSE(status.is_ok());
  EXPECT_THAT(status.message(), HasSubstr("input 0 'input'"));
  EXPECT_THAT(status.message(), HasSubstr("rank"));

  // The method still runs after the refusals.
  ASSERT_TRUE(method->set_input(0, tools::dltensor_view(*input)).is_ok());
  EXPECT_TRUE(method->execute().is_ok());
}

std::string test_name(const ::testing::TestParamInfo<std::tuple<VaryingModel, BackendSet>>& info) {
  return std::get<0>(info.param).name + "_on_" + std::get<1>(info.param).label;
}

INSTANTIATE_TEST_SUITE_P(Models, VaryingShapesTest,
                         ::testing::Combine(::testing::Values(kEncoder, kConv1d, kPositions),
                                            ::testing::ValuesIn(backend_sets())),
                         test_name);

TEST(VaryingShapesImport, ASymbolicDimensionWithoutBoundsIsRefusedNamingItAndTheOption) {
  Registry registry;
  ASSERT_TRUE(register_builtin_backends(registry).is_ok());
  compiler::InputShapeProblem problem;
  compiler::ImportOptions import;
  import.input_shape_problem = &problem;
  auto refusal = [&] {
    return compiler::compile_onnx_file(model_path("varying_conv1d.onnx"), registry, compiler::CompileOptions{}, import)
        .status();
  };
  Status status = refusal();
  ASSERT_FALSE(status.is_ok());
  EXPECT_THAT(status.message(), HasSubstr("dynamic dimension 2 ('len')"));
  EXPECT_THAT(status.message(), HasSubstr("ImportOptions::dims"));
  EXPECT_EQ(problem.kind, compiler::InputShapeProblem::Kind::kShapeNeeded);
  EXPECT_EQ(problem.symbol, "len");

  import.dims["length"] = {1, 8};  // not a dim_param of the model
  status = refusal();
  ASSERT_FALSE(status.is_ok());
  EXPECT_THAT(status.message(), HasSubstr("no input of the model has a dimension named 'length'"));
  EXPECT_EQ(problem.kind, compiler::InputShapeProblem::Kind::kDimRefused);

  import.dims.clear();
  import.dims["len"] = {9, 8};
  status = refusal();
  ASSERT_FALSE(status.is_ok());
  EXPECT_THAT(status.message(), HasSubstr("the bounds of 'len', 9..8"));
}

// The Conv1d net on XNNPACK splits after its strided convolution: the partitions there
// see only expressions of 'len' (ABI 1.6: the host passes its value with each call).
// They stay on XNNPACK, in this process and isolated in a backend host alike.
TEST(VaryingShapesOnXnnpack, PartitionsWhoseInputsDoNotGiveTheSymbolRunOnTheHostsValues) {
  if (std::string(PLUGRT_XNNPACK_PLUGIN_FILE).empty()) GTEST_SKIP() << "built without the XNNPACK backend";
  // A registry with the XNNPACK plugin, loaded in this process or isolated.
  auto with_xnnpack = [](Registry& registry, bool isolated) {
    EXPECT_TRUE(register_builtin_backends(registry).is_ok());
    plugins::SearchPathOptions search = plugins::SearchPathOptions::explicit_files_only();
    if (isolated) {
      search.isolated_backends = {"xnnpack"};
      search.isolation.backend_host = PLUGRT_BACKEND_HOST_FILE;
    }
    auto loader = std::make_unique<plugins::PluginLoader>(registry, search);
    EXPECT_TRUE(loader->load(PLUGRT_XNNPACK_PLUGIN_FILE).is_ok());
    return loader;
  };
  Registry compiling;
  const auto compiling_loader = with_xnnpack(compiling, false);
  compiler::ImportOptions import;
  import.dims[kConv1d.symbol] = {1, kConv1d.max};
  Result<compiler::CompiledModel> compiled =
      compiler::compile_onnx_file(model_path(kConv1d.name + ".onnx"), compiling, compiler::CompileOptions{}, import);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  Result<Program> program = Program::from_bytes(compiled->program, kConv1d.name + ".prt");
  ASSERT_TRUE(program.is_ok());
  for (const bool isolated : {false, true}) {
    SCOPED_TRACE(isolated ? "isolated" : "in process");
    Registry registry;
    const auto loader = with_xnnpack(registry, isolated);
    Result<Method> method = Method::load(*program, "forward", registry);
    ASSERT_TRUE(method.is_ok()) << method.status().to_string();
    size_t on_xnnpack = 0;
    for (const DelegatePlacement& delegate : method->report().delegates) {
      on_xnnpack += delegate.backend == "xnnpack" ? 1 : 0;
      EXPECT_EQ(delegate.isolated, isolated && delegate.backend == "xnnpack") << delegate.delegate;
    }
    EXPECT_GT(on_xnnpack, 1u) << method->report().to_string();
    run_samples(kConv1d, *method);
  }
}

}  // namespace
}  // namespace plugrt::testing
