// SPDX-License-Identifier: Apache-2.0
// A method's graph read back for placement at load: a delegate's portable graph that
// says other than the program's declared values is refused, not run with its own shapes.
#include "plugrt/placement/method_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "relu_program.h"

namespace plugrt::placement {
namespace {

using ::testing::HasSubstr;

using testing::relu_program;

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
