// SPDX-License-Identifier: Apache-2.0
// Every op the XNNPACK backend takes, against the portable backend on the same graph;
// and ops or forms it must leave to portable, which still give the right results.
#include <gtest/gtest.h>

#include "xnnpack_test_support.h"

namespace plugrt::xnnpack_test {
namespace {

// Every case of the shared catalogue (test/backend_support/op_catalogue.h): it has none of
// its own.
const std::vector<OpCase>& taken_cases() { return op_catalogue(); }

class XnnpackOpTest : public ::testing::TestWithParam<OpCase> {
 protected:
  XnnpackEnvironment env_;
};

TEST_P(XnnpackOpTest, TakesEveryNodeAndMatchesPortable) {
  expect_taken_and_matching_portable(env_, "xnnpack", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(taken_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& param) { return param.param.name; });

// ---- Forms XNNPACK must not take: they stay on portable, and the results stay right.

const std::vector<RefusedCase>& refused_cases() {
  static const std::vector<RefusedCase> cases = {
      {"Softmax4dLastAxis", "Softmax",
       [] {
         return unary("Softmax", {1, 3, 4, 5}, {I("axis", -1)});
       }},
      {"Reshape4dWithSpatialDims", "Reshape",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 3, 4});
         ValueId relu = g.node("Relu", {x}, {1, 2, 3, 4});
         return g.finish({g.node("Reshape", {relu, g.ints({1, 24})}, {1, 24})});
       }},
      {"FlattenOf4d", "Flatten",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 3, 3});
         ValueId relu = g.node("Relu", {x}, {1, 2, 3, 3});
         return g.finish({g.node("Flatten", {relu}, {1, 18}, {I("axis", 1)})});
       }},
      {"MatMulOfTwoRunTimeValues", "MatMul",
       [] {
         TestGraph g;
         ValueId a = g.input({3, 4}), b = g.input({4, 5});
         return g.finish({g.node("MatMul", {a, b}, {3, 5})});
       }},
      {"MatMul4d", "MatMul",
       [] {
         TestGraph g;
         ValueId a = g.input({1, 2, 3, 4});
         return g.finish({g.node("MatMul", {a, g.constant({4, 5})}, {1, 2, 3, 5})});
       }},
      {"AveragePoolCountingPads", "AveragePool",
       [] {
         return unary("AveragePool", {1, 2, 5, 5},
                      {Is("kernel_shape", {3, 3}), Is("pads", {1, 1, 1, 1}), I("count_include_pad", 1)});
       }},
      {"AddBroadcasting2dInto4d", "Add",
       [] {
         TestGraph g;
         ValueId a = g.input({1, 2, 3, 4}), b = g.input({3, 4});
         return g.finish({g.node("Add", {a, b}, {1, 2, 3, 4})});
       }},
      {"Conv1d", "Conv",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 8});
         return g.finish({g.node("Conv", {x, g.constant({3, 2, 3})}, {1, 3, 6})});
       }},
      {"PadReflect", "Pad",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 4, 4});
         return g.finish({g.node("Pad", {x, g.ints({0, 0, 1, 1, 0, 0, 1, 1})}, {1, 2, 6, 6}, {S("mode", "reflect")})});
       }},
      {"GemmTransA", "Gemm",
       [] {
         TestGraph g;
         ValueId a = g.input({8, 2});
         return g.finish({g.node("Gemm", {a, g.constant({8, 5})}, {2, 5}, {I("transA", 1)})});
       }},
      {"Tanh", "Tanh",
       [] {
         return unary("Tanh", {2, 8});
       }},
  };
  return cases;
}

class XnnpackRefusalTest : public ::testing::TestWithParam<RefusedCase> {
 protected:
  XnnpackEnvironment env_;
};

TEST_P(XnnpackRefusalTest, LeavesTheNodeToPortable) { expect_left_to_portable(env_, "xnnpack", GetParam()); }

INSTANTIATE_TEST_SUITE_P(Refusals, XnnpackRefusalTest, ::testing::ValuesIn(refused_cases()),
                         [](const ::testing::TestParamInfo<RefusedCase>& param) { return param.param.name; });

}  // namespace
}  // namespace plugrt::xnnpack_test
