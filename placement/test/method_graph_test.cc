// SPDX-License-Identifier: Apache-2.0
// A method's graph read back for placement at load: a delegate's portable graph that
// says other than the program's declared values is refused, not run with its own shapes.
#include "plugrt/placement/method_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/program_builder.h"

namespace plugrt::placement {
namespace {

using ::testing::HasSubstr;

/// A method declaring x and y float32 [declared], run by one delegate whose graph is a
/// Relu of float32 [graph_n].
Program relu_program(int64_t declared, int64_t graph_n) {
  GraphBuilder graph;
  const ValueId x = graph.add_value("x", DType::kFloat32, {graph_n});
  const ValueId y = graph.add_value("y", DType::kFloat32, {graph_n});
  graph.add_node("Relu", "relu", {x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  ProgramBuilder builder;
  MethodBuilder& method = builder.add_method("forward");
  const uint32_t in = method.add_value("x", DType::kFloat32, {declared});
  const uint32_t out = method.add_value("y", DType::kFloat32, {declared});
  method.add_input(in);
  method.add_output(out);
  method.add_instruction(method.add_delegate("portable:0", kPortableBackendName, graph.finish()), {in}, {out});
  Result<std::vector<uint8_t>> bytes = builder.finish();
  EXPECT_TRUE(bytes.is_ok());
  Result<Program> program = Program::from_bytes(*bytes, "relu.prt");
  EXPECT_TRUE(program.is_ok());
  return *program;
}

TEST(MethodGraphTest, AGraphThatAgreesWithTheDeclaredValuesIsRead) {
  const Program program = relu_program(8, 8);
  Result<MethodContents> contents = program.contents("forward");
  ASSERT_TRUE(contents.is_ok());
  EXPECT_TRUE(method_graph(*contents).is_ok());
}

TEST(MethodGraphTest, AGraphWhoseShapesDisagreeWithTheDeclaredValuesIsRefused) {
  const Program program = relu_program(8, 4);
  Result<MethodContents> contents = program.contents("forward");
  ASSERT_TRUE(contents.is_ok());
  Result<MethodGraph> graph = method_graph(*contents);
  ASSERT_FALSE(graph.is_ok());
  EXPECT_EQ(graph.code(), Error::kInvalidProgram);
  EXPECT_THAT(graph.status().message(),
              HasSubstr("its portable graph's input 0 is float32 [4], but the program declares 'x' float32 [8]"));
}

}  // namespace
}  // namespace plugrt::placement
