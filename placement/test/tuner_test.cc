// SPDX-License-Identifier: Apache-2.0
// The tuner measures each op signature once per backend and keeps the figures.
#include "plugrt/placement/tuner.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/placement/cost_model.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::placement {
namespace {

using ::testing::HasSubstr;

/// x -> Relu -> Relu -> Sigmoid -> y: two distinct op signatures in three nodes.
std::vector<uint8_t> relu_relu_sigmoid() {
  GraphBuilder g;
  ValueId x = g.add_value("x", DType::kFloat32, {64});
  ValueId a = g.add_value("a", DType::kFloat32, {64});
  ValueId b = g.add_value("b", DType::kFloat32, {64});
  ValueId y = g.add_value("y", DType::kFloat32, {64});
  g.add_node("Relu", "r1", {x}, {a});
  g.add_node("Relu", "r2", {a}, {b});
  g.add_node("Sigmoid", "s", {b}, {y});
  g.add_input(x);
  g.add_output(y);
  return g.finish();
}

TEST(Tuner, MeasuresEachSignatureOnceAndSkipsWhatIsKnown) {
  const std::vector<uint8_t> bytes = relu_relu_sigmoid();
  const ir::Graph& graph = *ir::GetGraph(bytes.data());
  const RegisteredBackend& portable = builtin_portable_backend();
  CostProfile profile("cpu");
  std::ostringstream progress;
  TuneOptions options;
  options.progress = &progress;
  const TuneReport report = tune(bytes, {{portable, {true, true, true}}}, profile, options);
  EXPECT_EQ(report.measured, 2u);
  EXPECT_EQ(report.failed, 0u);
  EXPECT_EQ(profile.size(), 2u);
  EXPECT_TRUE(profile.find(backend_build(portable), op_signature(graph, 0)).has_value());
  EXPECT_TRUE(profile.find(backend_build(portable), op_signature(graph, 2)).has_value());
  EXPECT_THAT(progress.str(), HasSubstr("tune: [1/2] Relu (node 0) on portable: "));

  const TuneReport again = tune(bytes, {{portable, {true, true, true}}}, profile, options);
  EXPECT_EQ(again.measured, 0u);
  EXPECT_EQ(again.known, 2u);
}

TEST(Tuner, MeasuresOnlyWhatTheBackendTakesAndStopsAtTheBudget) {
  const std::vector<uint8_t> bytes = relu_relu_sigmoid();
  CostProfile profile("cpu");
  TuneOptions options;
  EXPECT_EQ(tune(bytes, {{builtin_portable_backend(), {false, false, true}}}, profile, options).measured, 1u);

  CostProfile none("cpu");
  options.budget_seconds = -1;  // spent before the first
  const TuneReport report = tune(bytes, {{builtin_portable_backend(), {true, true, true}}}, none, options);
  EXPECT_EQ(report.measured, 0u);
  EXPECT_EQ(report.skipped, 2u);
}

TEST(Tuner, MeasuresASignatureOnTheFirstNodeTheBackendTakesAndReportsEachFigure) {
  // Node 0 and node 1 share a signature; the backend takes only node 1.
  const std::vector<uint8_t> bytes = relu_relu_sigmoid();
  CostProfile profile("cpu");
  const TuneReport report = tune(bytes, {{builtin_portable_backend(), {false, true, false}}}, profile, TuneOptions());
  EXPECT_EQ(report.measured, 1u);
  ASSERT_EQ(report.figures.size(), 1u);
  EXPECT_EQ(report.figures[0].node, 1u);
  EXPECT_EQ(report.figures[0].op, "Relu");
  EXPECT_EQ(report.figures[0].backend, "portable");
  EXPECT_GE(report.figures[0].us, 0.0);
  EXPECT_GE(report.seconds, 0.0);
}

}  // namespace
}  // namespace plugrt::placement
