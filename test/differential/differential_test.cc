// SPDX-License-Identifier: Apache-2.0
// Every fast backend against portable: a seeded run of random graphs (a few thousand a
// backend; PLUGRT_DIFFERENTIAL_GRAPHS changes how many), and every regression case in
// test/differential/cases/ (graphs that once disagreed, kept as ONNX files).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include <gtest/gtest.h>

#include "differential.h"
#include "onnx_writer.h"
#include "random_graph.h"

namespace plugrt::differential {
namespace {

/// The fast backends built, each with its plugin file.
const std::map<std::string, std::string>& fast_backends() {
  static const std::map<std::string, std::string> backends = [] {
    std::map<std::string, std::string> built;
    if (std::string(PLUGRT_ONEDNN_PLUGIN_FILE) != "") built["onednn"] = PLUGRT_ONEDNN_PLUGIN_FILE;
    if (std::string(PLUGRT_XNNPACK_PLUGIN_FILE) != "") built["xnnpack"] = PLUGRT_XNNPACK_PLUGIN_FILE;
    return built;
  }();
  return backends;
}

std::vector<std::string> fast_backend_names() {
  std::vector<std::string> names;
  for (const auto& [name, file] : fast_backends()) names.push_back(name);
  return names;
}

size_t graphs_per_backend() {
  const char* value = std::getenv("PLUGRT_DIFFERENTIAL_GRAPHS");
  return value != nullptr ? static_cast<size_t>(std::strtoull(value, nullptr, 10)) : 2000;
}

class DifferentialTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    checker_ = std::make_unique<Checker>(std::vector<std::string>{fast_backends().at(GetParam())});
    std::string why;
    if (!checker_->available(GetParam(), &why)) GTEST_SKIP() << GetParam() << " is unavailable: " << why;
  }
  std::unique_ptr<Checker> checker_;
};

TEST_P(DifferentialTest, RandomGraphsAgreeWithPortable) {
  const std::string& backend = GetParam();
  const std::string failures = std::filesystem::temp_directory_path() / "plugrt-differential-failures";
  std::filesystem::create_directories(failures);
  const Campaign campaign = run_campaign(*checker_, backend, 1, graphs_per_backend(), 0, failures);
  for (const Finding& finding : campaign.findings) {
    ADD_FAILURE() << "seed " << finding.seed << " (" << finding.description
                  << "): " << finding.verdict.to_string(backend) << "; graph written to " << finding.saved_as;
  }
  std::cout << backend << ": " << campaign.graphs << " graphs, " << campaign.graphs_on_backend
            << " with nodes on the backend, " << campaign.findings.size() << " disagreements\n";
  // The generator must keep exercising the backend, or the check proves nothing.
  EXPECT_GT(campaign.graphs_on_backend * 10, campaign.graphs * 6);
}

TEST_P(DifferentialTest, RegressionCasesAgreeWithPortable) {
  const std::string& backend = GetParam();
  size_t cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PLUGRT_DIFFERENTIAL_CASES_DIR)) {
    if (entry.path().extension() != ".onnx") continue;
    std::ifstream file(entry.path(), std::ios::binary);
    const std::vector<uint8_t> onnx((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const std::string name = entry.path().filename();
    const Verdict verdict = checker_->check(onnx, reduction_length_of(name), backend, 7);
    EXPECT_TRUE(verdict.agrees()) << name << ": " << verdict.to_string(backend);
    ++cases;
  }
  EXPECT_GT(cases, 0u);
}

/// x [1, 8, 64] -> MatMul with constant weights [64, 32] -> `first` -> `second`, each
/// an element-wise op with a scalar constant: the reduction of a wrong oneDNN post-op
/// chain found on pretrained audio and OCR models.
std::vector<uint8_t> matmul_then(const std::string& first, float a, const std::string& second, float b) {
  OnnxWriter model;
  const Value x = model.input({1, 8, 64});
  std::vector<float> weights(64 * 32);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>((i * 37) % 17) / 17.0f - 0.5f;
  Value y = model.node("MatMul", {x, model.constant({64, 32}, weights)}, {1, 8, 32});
  y = model.node(first, {y, model.constant({}, {a})}, {1, 8, 32});
  y = model.node(second, {y, model.constant({}, {b})}, {1, 8, 32});
  model.output(y);
  return model.serialise();
}

TEST_P(DifferentialTest, MatMulMulDivAgreesWithPortable) {
  const Verdict verdict = checker_->check(matmul_then("Mul", 10.0f, "Div", 2.3025851f), 64, GetParam(), 1);
  EXPECT_TRUE(verdict.agrees()) << verdict.to_string(GetParam());
}

TEST_P(DifferentialTest, MatMulAddMulAgreesWithPortable) {
  const Verdict verdict = checker_->check(matmul_then("Add", 1.0f, "Mul", 2.0f), 64, GetParam(), 1);
  EXPECT_TRUE(verdict.agrees()) << verdict.to_string(GetParam());
}

TEST_P(DifferentialTest, ConvMulAddAgreesWithPortable) {
  OnnxWriter model;
  const Value x = model.input({1, 3, 16, 16});
  std::vector<float> weights(8 * 3 * 3 * 3);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>((i * 13) % 11) / 11.0f - 0.5f;
  Value y =
      model.node("Conv", {x, model.constant({8, 3, 3, 3}, weights)}, {1, 8, 16, 16}, {Attr::is("pads", {1, 1, 1, 1})});
  y = model.node("Mul", {y, model.constant({}, {0.0039215686f})}, {1, 8, 16, 16});
  y = model.node("Add", {y, model.constant({}, {-0.5f})}, {1, 8, 16, 16});
  model.output(y);
  const Verdict verdict = checker_->check(model.serialise(), 27, GetParam(), 1);
  EXPECT_TRUE(verdict.agrees()) << verdict.to_string(GetParam());
}

// About one seed in four makes a quantized graph, which states a bound for each output;
// the others state none (every output float).
TEST(DifferentialGenerator, AboutOneGraphInFourIsQuantized) {
  size_t quantized = 0, exact = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    const RandomGraph graph = generate_graph(seed);
    const std::vector<OutputBound> bounds = output_bounds(graph.onnx);
    const bool has_quantized_op = graph.description.find("QuantizeLinear") != std::string::npos;
    EXPECT_EQ(!bounds.empty(), has_quantized_op) << "seed " << seed << ": " << graph.description;
    quantized += !bounds.empty();
    for (const OutputBound& bound : bounds) exact += bound.quanta == 0 || (bound.quanta < 0 && bound.absolute == 0);
  }
  EXPECT_GT(quantized, 60u);
  EXPECT_LT(quantized, 140u);
  EXPECT_GT(exact, 5u) << "outputs that must agree exactly (bound 0) check QuantizeLinear's exactness";
}

std::string backend_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(FastBackends, DifferentialTest, ::testing::ValuesIn(fast_backend_names()), backend_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DifferentialTest);

}  // namespace
}  // namespace plugrt::differential
