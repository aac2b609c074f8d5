// SPDX-License-Identifier: Apache-2.0
// A program of one portable Relu, for the placement tests that read programs back.
#ifndef PLUGRT_PLACEMENT_TEST_RELU_PROGRAM_H_
#define PLUGRT_PLACEMENT_TEST_RELU_PROGRAM_H_

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/program.h"
#include "plugrt/program_builder.h"

namespace plugrt::testing {

/// A method declaring x and y float32 [n], run by one portable delegate whose graph is a
/// Relu of float32 [graph_n] (by default n: a graph that agrees with the declaration).
inline Program relu_program(int64_t n, int64_t graph_n = -1) {
  if (graph_n < 0) graph_n = n;
  GraphBuilder graph;
  const ValueId x = graph.add_value("x", DType::kFloat32, {graph_n});
  const ValueId y = graph.add_value("y", DType::kFloat32, {graph_n});
  graph.add_node("Relu", "relu", {x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  ProgramBuilder builder;
  MethodBuilder& method = builder.add_method("forward");
  const uint32_t in = method.add_value("x", DType::kFloat32, {n});
  const uint32_t out = method.add_value("y", DType::kFloat32, {n});
  method.add_input(in);
  method.add_output(out);
  method.add_instruction(method.add_delegate("portable:0", kPortableBackendName, graph.finish()), {in}, {out});
  Result<std::vector<uint8_t>> bytes = builder.finish();
  EXPECT_TRUE(bytes.is_ok());
  Result<Program> program = Program::from_bytes(*bytes, "relu.prt");
  EXPECT_TRUE(program.is_ok());
  return *program;
}

}  // namespace plugrt::testing

#endif  // PLUGRT_PLACEMENT_TEST_RELU_PROGRAM_H_
