// SPDX-License-Identifier: Apache-2.0
// Placement by measurement (placement/README.md, "Backends nobody measured"): a correct but
// slow plugin whose name sorts first ("blas", test/plugins/naive_plugin.cc) is dropped next
// to oneDNN. With an empty cache and no profile, placement at load measures both where
// they compete and keeps the slow one off; without measuring, a measured backend wins over
// an unmeasured one, and a choice nobody measured says so.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/method.h"
#include "plugrt/placement/compile.h"
#include "plugrt/placement/cost_profile.h"
#include "plugrt/placement/load_placer.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "scratch_directory.h"

namespace plugrt::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string model_path(const std::string& file) { return std::string(PLUGRT_MODELS_DIR) + "/" + file; }

/// x [8, 64] -> Gemm -> Relu -> Gemm -> y [8, 16]: an MLP the slow plugin takes whole.
std::vector<uint8_t> gemm_relu_graph() {
  GraphBuilder g;
  std::vector<float> w1(64 * 128), w2(128 * 16), b1(128, 0.01f), b2(16, -0.02f);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = static_cast<float>(i % 13) / 13.0f - 0.5f;
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = static_cast<float>(i % 7) / 7.0f - 0.4f;
  const ValueId x = g.add_value("x", DType::kFloat32, {8, 64});
  const ValueId h = g.add_value("h", DType::kFloat32, {8, 128}), r = g.add_value("r", DType::kFloat32, {8, 128});
  const ValueId y = g.add_value("y", DType::kFloat32, {8, 16});
  g.add_node("Gemm", "gemm1", {x, g.add_constant_f32("w1", {64, 128}, w1), g.add_constant_f32("b1", {128}, b1)}, {h});
  g.add_node("Relu", "relu", {h}, {r});
  g.add_node("Gemm", "gemm2", {r, g.add_constant_f32("w2", {128, 16}, w2), g.add_constant_f32("b2", {16}, b2)}, {y});
  g.add_input(x);
  g.add_output(y);
  return g.finish();
}

/// `model` ("gemm_relu", or a bundled ONNX model) compiled where only the portable backend
/// exists, as a program shipped to any device.
Result<Program> portable_program(const std::string& model) {
  Registry portable_only;
  PLUGRT_RETURN_IF_ERROR(register_builtin_backends(portable_only));
  compiler::CompileOptions options;
  options.backends = {"portable"};
  Result<compiler::CompiledModel> compiled =
      model == "gemm_relu" ? placement::compile_graph(gemm_relu_graph(), portable_only, options)
                           : compiler::compile_onnx_file(model_path(model + ".onnx"), portable_only, options);
  if (!compiled.is_ok()) return compiled.status();
  return Program::from_bytes(compiled->program, model + ".prt");
}

/// Runs `method` on inputs of small deterministic values; its first output.
std::vector<float> run_once(Method& method) {
  std::vector<std::vector<float>> inputs(method.num_inputs());
  for (size_t i = 0; i < inputs.size(); ++i) {
    size_t count = 1;
    for (int64_t d : method.input_spec(i).shape) count *= static_cast<size_t>(d);
    inputs[i].resize(count);
    for (size_t k = 0; k < count; ++k) inputs[i][k] = static_cast<float>(k % 17) / 8.5f - 1.0f;
    DLTensor view = method.input(i);
    view.data = inputs[i].data();
    EXPECT_TRUE(method.set_input(i, view).is_ok());
  }
  const Status status = method.execute();
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  const DLTensor& out = method.output(0);
  size_t count = 1;
  for (int32_t d = 0; d < out.ndim; ++d) count *= static_cast<size_t>(out.shape[d]);
  const float* data = static_cast<const float*>(out.data);
  return std::vector<float>(data, data + count);
}

class MeasuredPlacementTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { set_up(GetParam()); }

  void set_up(const std::string& model) {
    if (std::string(PLUGRT_ONEDNN_PLUGIN_FILE).empty()) GTEST_SKIP() << "the onednn plugin is not built";
    scratch_.emplace("measured_placement");
    ASSERT_TRUE(register_builtin_backends(registry_).is_ok());
    loader_.emplace(registry_, plugins::SearchPathOptions::explicit_files_only());
    ASSERT_TRUE(loader_->load(PLUGRT_ONEDNN_PLUGIN_FILE).is_ok());
    ASSERT_TRUE(loader_->load(std::string(PLUGRT_TEST_PLUGIN_DIR) + "/libplugrt_naive_blas.so").is_ok());
    model_ = model;
    Result<Program> program = portable_program(model);
    ASSERT_TRUE(program.is_ok()) << program.status().to_string();
    program_.emplace(std::move(program).value());
    // What the program computes as compiled, on the portable backend.
    Result<Method> reference = Method::load(*program_, "forward", registry_, MethodOptions());
    ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
    reference_ = run_once(*reference);
  }

  std::string cache_dir() const { return scratch_->path() + "/cache"; }

  /// Loads "forward" with placement auto over a fresh placer (as a new process would), and
  /// checks that it computes what the portable backend does.
  LoadReport load_and_check(double measure_seconds) {
    placement::LoadPlacerOptions placer_options;
    placer_options.cache_directory = cache_dir();
    placer_options.measure_seconds = measure_seconds;
    placement::LoadPlacer placer(placer_options);
    MethodOptions options;
    options.placement = PlacementPolicy::kAuto;
    options.placer = &placer;
    Result<Method> method = Method::load(*program_, "forward", registry_, options);
    EXPECT_TRUE(method.is_ok()) << method.status().to_string();
    if (!method.is_ok()) return {};
    const std::vector<float> got = run_once(*method);
    EXPECT_EQ(got.size(), reference_.size());
    for (size_t i = 0; i < got.size() && i < reference_.size(); ++i) {
      EXPECT_NEAR(got[i], reference_[i], 1e-4 + 1e-4 * std::fabs(reference_[i])) << "element " << i;
    }
    return method->report();
  }

  /// How many of the report's delegates run on `backend`.
  static size_t delegates_on(const LoadReport& report, const std::string& backend) {
    size_t count = 0;
    for (const DelegatePlacement& d : report.delegates) count += d.backend == backend ? 1 : 0;
    return count;
  }

  std::optional<ScratchDirectory> scratch_;
  Registry registry_;
  std::optional<plugins::PluginLoader> loader_;
  std::string model_;
  std::optional<Program> program_;
  std::vector<float> reference_;
};

TEST_P(MeasuredPlacementTest, WithNoProfileTheFirstLoadMeasuresAndTheSlowPluginTakesNothing) {
  const LoadReport first = load_and_check(30);
  EXPECT_EQ(delegates_on(first, "blas"), 0u) << first.to_string();
  EXPECT_GE(delegates_on(first, "onednn"), 1u) << first.to_string();
  EXPECT_THAT(first.placement_measured, HasSubstr("on blas"));
  EXPECT_THAT(first.placement_measured, HasSubstr("on onednn"));
  EXPECT_THAT(first.placement_measured, HasSubstr("kept in the cost profile"));
  const std::string cpu = placement::CostProfile::this_cpu();
  std::string warning;
  const placement::CostProfile kept =
      placement::CostProfile::load(placement::CostProfile::file_for(cache_dir(), cpu), cpu, &warning);
  EXPECT_GT(kept.size(), 0u) << warning;

  // A second load measures nothing and places the same.
  const LoadReport second = load_and_check(30);
  EXPECT_EQ(second.placement_measured, "");
  EXPECT_EQ(delegates_on(second, "blas"), 0u) << second.to_string();
}

TEST_P(MeasuredPlacementTest, WithoutMeasuringAMeasuredBackendWinsOverAnUnmeasuredOne) {
  // oneDNN measured on this machine before (as `plugrt compile --tune --backends onednn`).
  compiler::CompileOptions options;
  options.backends = {"onednn", "portable"};
  placement::CostProfile profile(placement::CostProfile::this_cpu());
  options.profile = &profile;
  options.tune = true;
  Result<compiler::CompiledModel> tuned =
      model_ == "gemm_relu" ? placement::compile_graph(gemm_relu_graph(), registry_, options)
                            : compiler::compile_onnx_file(model_path(model_ + ".onnx"), registry_, options);
  ASSERT_TRUE(tuned.is_ok()) << tuned.status().to_string();
  ASSERT_GT(tuned->summary.tune.measured, 0u);
  ASSERT_TRUE(profile.save(placement::CostProfile::file_for(cache_dir(), profile.cpu())).is_ok());

  const LoadReport report = load_and_check(0);
  EXPECT_EQ(report.placement_measured, "");
  EXPECT_EQ(delegates_on(report, "blas"), 0u) << report.to_string();
}

TEST_P(MeasuredPlacementTest, ADamagedProfileIsIgnoredAndTheReportSaysSo) {
  const std::string path = placement::CostProfile::file_for(cache_dir(), placement::CostProfile::this_cpu());
  fs::create_directories(cache_dir());
  fs::permissions(cache_dir(), fs::perms::owner_all, fs::perm_options::replace);
  std::ofstream(path) << "not a profile\n";
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  const LoadReport report = load_and_check(30);
  EXPECT_THAT(report.placement_measured, HasSubstr("read no figures: " + path));
  EXPECT_THAT(report.placement_measured, HasSubstr("kept in the cost profile"));  // measured again, and rewritten
  EXPECT_EQ(delegates_on(report, "blas"), 0u) << report.to_string();
}

INSTANTIATE_TEST_SUITE_P(Models, MeasuredPlacementTest, ::testing::Values("gemm_relu", "mlp", "tiny_cnn"));

/// Where nothing is measured and measuring is off, equal estimates go by name: the slow
/// plugin takes the MLP it can run whole, and every report of that choice says so.
class UnmeasuredPlacementTest : public MeasuredPlacementTest {
 protected:
  void SetUp() override { set_up("gemm_relu"); }
};

TEST_F(UnmeasuredPlacementTest, WithNothingMeasuredTheOrderDecidesAndTheReportSaysSo) {
  const LoadReport report = load_and_check(0);
  EXPECT_EQ(report.placement_measured, "");
  ASSERT_EQ(report.delegates.size(), 1u) << report.to_string();
  EXPECT_EQ(report.delegates[0].backend, "blas");
  EXPECT_THAT(report.delegates[0].placement_reason, HasSubstr("(estimated, not measured: 3 of its nodes"));

  // Measuring allowed: the same load measures and moves it.
  const LoadReport measured = load_and_check(30);
  EXPECT_THAT(measured.placement_measured, HasSubstr("Gemm on blas"));
  ASSERT_EQ(measured.delegates.size(), 1u) << measured.to_string();
  EXPECT_EQ(measured.delegates[0].backend, "onednn") << measured.to_string();
}

}  // namespace
}  // namespace plugrt::testing
