// Every op the XNNPACK backend takes, against the portable backend on the same graph;
// and ops or forms it must leave to portable, which still give the right results.
#include <gtest/gtest.h>

#include "xnnpack_test_support.h"

namespace plugrt::xnnpack_test {
namespace {

const std::vector<OpCase>& taken_cases() {
  static const std::vector<OpCase> cases = {
      {"Conv3x3PadBias", [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 8, 8});
         return g.finish({g.node("Conv", {x, g.constant({8, 3, 3, 3}), g.constant({8})}, {1, 8, 8, 8},
                                 {Is("pads", {1, 1, 1, 1})})});
       }},
      {"ConvStrideDilationAsymmetricPads", [] {
         TestGraph g;
         ValueId x = g.input({2, 4, 11, 10});
         // H: (11 + 0 + 2 - 5) / 2 + 1 = 5; W: (10 + 1 + 0 - 5) / 2 + 1 = 4
         return g.finish({g.node("Conv", {x, g.constant({5, 4, 3, 3})}, {2, 5, 5, 4},
                                 {Is("strides", {2, 2}), Is("dilations", {2, 2}), Is("pads", {0, 1, 2, 0})})});
       }},
      {"ConvGrouped", [] {
         TestGraph g;
         ValueId x = g.input({1, 4, 6, 6});
         return g.finish({g.node("Conv", {x, g.constant({6, 2, 3, 3}), g.constant({6})}, {1, 6, 4, 4},
                                 {I("group", 2)})});
       }},
      {"ConvDepthwise", [] {
         TestGraph g;
         ValueId x = g.input({1, 4, 7, 7});
         return g.finish({g.node("Conv", {x, g.constant({4, 1, 3, 3}), g.constant({4})}, {1, 4, 7, 7},
                                 {I("group", 4), Is("pads", {1, 1, 1, 1})})});
       }},
      {"ConvDepthwiseMultiplier2", [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 6, 6});
         return g.finish({g.node("Conv", {x, g.constant({6, 1, 3, 3})}, {1, 6, 2, 2},
                                 {I("group", 3), Is("strides", {2, 2})})});
       }},
      {"ConvSameUpperStride2", [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 9, 9});
         return g.finish({g.node("Conv", {x, g.constant({4, 3, 3, 3})}, {1, 4, 5, 5},
                                 {S("auto_pad", "SAME_UPPER"), Is("strides", {2, 2})})});
       }},
      {"Conv1x1", [] {
         TestGraph g;
         ValueId x = g.input({1, 16, 5, 5});
         return g.finish({g.node("Conv", {x, g.constant({8, 16, 1, 1}), g.constant({8})}, {1, 8, 5, 5})});
       }},
      {"GemmTransBBias", [] {
         TestGraph g;
         ValueId a = g.input({3, 16});
         return g.finish({g.node("Gemm", {a, g.constant({10, 16}), g.constant({10})}, {3, 10}, {I("transB", 1)})});
       }},
      {"GemmAlphaBetaRowBias", [] {
         TestGraph g;
         ValueId a = g.input({2, 8});
         return g.finish({g.node("Gemm", {a, g.constant({8, 5}), g.constant({1, 5})}, {2, 5},
                                 {F("alpha", 0.5f), F("beta", 2.0f)})});
       }},
      {"MatMul2d", [] {
         TestGraph g;
         ValueId a = g.input({4, 8});
         return g.finish({g.node("MatMul", {a, g.constant({8, 5})}, {4, 5})});
       }},
      {"MatMul3d", [] {
         TestGraph g;
         ValueId a = g.input({2, 3, 8});
         return g.finish({g.node("MatMul", {a, g.constant({8, 5})}, {2, 3, 5})});
       }},
      {"Add4dSameShape", [] {
         TestGraph g;
         ValueId a = g.input({1, 3, 4, 5}), b = g.input({1, 3, 4, 5});
         return g.finish({g.node("Add", {a, b}, {1, 3, 4, 5})});
       }},
      {"AddPerChannelConstant", [] {
         TestGraph g;
         ValueId a = g.input({2, 3, 4, 5});
         return g.finish({g.node("Add", {a, g.constant({3, 1, 1})}, {2, 3, 4, 5})});
       }},
      {"SubScalarMinus4d", [] {
         TestGraph g;
         ValueId a = g.input({1, 3, 4, 4});
         return g.finish({g.node("Sub", {g.scalar(1.5f), a}, {1, 3, 4, 4})});
       }},
      {"Mul2dRowConstant", [] {
         TestGraph g;
         ValueId a = g.input({4, 6});
         return g.finish({g.node("Mul", {a, g.constant({6})}, {4, 6})});
       }},
      {"Div4dBroadcastBoth", [] {
         TestGraph g;
         ValueId a = g.input({1, 4, 5, 1}), b = g.input({1, 4, 1, 6});
         return g.finish({g.node("Div", {a, b}, {1, 4, 5, 6})});
       }},
      {"DivByConstant3d", [] {
         TestGraph g;
         ValueId a = g.input({2, 3, 4});
         return g.finish({g.node("Div", {a, g.constant({3, 1}, 0.5f, 2.0f)}, {2, 3, 4})});
       }},
      {"Relu", [] { return unary("Relu", {1, 3, 4, 4}); }},
      {"ClipMinMax", [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 4, 4});
         return g.finish({g.node("Clip", {x, g.scalar(-0.5f), g.scalar(0.75f)}, {1, 3, 4, 4})});
       }},
      {"ClipRelu6", [] {
         TestGraph g;
         ValueId x = g.input({2, 5});
         ValueId scaled = g.node("Mul", {x, g.scalar(4.0f)}, {2, 5});
         return g.finish({g.node("Clip", {scaled, g.scalar(0.0f), g.scalar(6.0f)}, {2, 5})});
       }},
      {"ClipOnlyMax", [] {
         TestGraph g;
         ValueId x = g.input({3, 7});
         return g.finish({g.node("Clip", {x, -1, g.scalar(0.25f)}, {3, 7})});
       }},
      {"ClipOpset6Attributes", [] {
         TestGraph g(6);
         ValueId x = g.input({3, 7});
         return g.finish({g.node("Clip", {x}, {3, 7}, {F("min", -0.1f), F("max", 0.3f)})});
       }},
      {"Sigmoid", [] { return unary("Sigmoid", {1, 3, 4, 4}); }},
      {"HardSwish", [] { return unary("HardSwish", {1, 3, 4, 4}); }},
      {"HardSigmoid", [] { return unary("HardSigmoid", {2, 9}, {F("alpha", 1.0f / 6), F("beta", 0.5f)}); }},
      {"LeakyRelu", [] { return unary("LeakyRelu", {1, 3, 4, 4}, {F("alpha", 0.2f)}); }},
      {"Softmax2dLastAxis", [] { return unary("Softmax", {3, 10}, {I("axis", -1)}); }},
      {"Softmax3dLastAxis", [] { return unary("Softmax", {2, 3, 10}, {I("axis", 2)}); }},
      {"Softmax4dChannels", [] { return unary("Softmax", {1, 5, 3, 3}, {I("axis", 1)}); }},
      {"MaxPool2x2", [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 8, 8});
         return g.finish({g.node("MaxPool", {x}, {1, 3, 4, 4}, {Is("kernel_shape", {2, 2}), Is("strides", {2, 2})})});
       }},
      {"MaxPoolDilatedCeilModeSameShape", [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 9, 9});
         // extent 5, (9 - 5) / 2 + 1 = 3 with floor and with ceil
         return g.finish({g.node("MaxPool", {x}, {1, 2, 3, 3},
                                 {Is("kernel_shape", {3, 3}), Is("strides", {2, 2}), Is("dilations", {2, 2}),
                                  I("ceil_mode", 1)})});
       }},
      {"MaxPool3x3Padded", [] {
         return unary("MaxPool", {1, 3, 7, 7},
                      {Is("kernel_shape", {3, 3}), Is("pads", {1, 1, 1, 1}), Is("strides", {1, 1})});
       }},
      {"AveragePool2x2", [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 8, 8});
         return g.finish(
             {g.node("AveragePool", {x}, {1, 3, 4, 4}, {Is("kernel_shape", {2, 2}), Is("strides", {2, 2})})});
       }},
      {"AveragePool3x3PaddedExcludingPad", [] {
         return unary("AveragePool", {1, 3, 6, 6},
                      {Is("kernel_shape", {3, 3}), Is("pads", {1, 1, 1, 1}), I("count_include_pad", 0)});
       }},
      {"GlobalAveragePool", [] {
         TestGraph g;
         ValueId x = g.input({2, 6, 5, 7});
         return g.finish({g.node("GlobalAveragePool", {x}, {2, 6, 1, 1})});
       }},
      {"PadConstant4d", [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 4, 5});
         return g.finish({g.node("Pad", {x, g.ints({0, 0, 1, 2, 0, 1, 2, 1}), g.scalar(0.5f)}, {1, 4, 7, 8})});
       }},
      {"PadConstant2d", [] {
         TestGraph g;
         ValueId x = g.input({3, 4});
         return g.finish({g.node("Pad", {x, g.ints({1, 0, 0, 2})}, {4, 6})});
       }},
      {"ReshapeOneByOneTo2d", [] {
         TestGraph g;
         ValueId x = g.input({1, 8, 1, 1});
         return g.finish({g.node("Reshape", {x, g.ints({1, 8})}, {1, 8})});
       }},
      {"ReshapeSingleChannel", [] {
         TestGraph g;
         ValueId x = g.input({1, 1, 4, 4});
         return g.finish({g.node("Reshape", {x, g.ints({1, 16})}, {1, 16})});
       }},
      {"Reshape3dTo2d", [] {
         TestGraph g;
         ValueId x = g.input({2, 3, 4});
         return g.finish({g.node("Reshape", {x, g.ints({6, 4})}, {6, 4})});
       }},
      {"FlattenAfterGlobalPool", [] {
         TestGraph g;
         ValueId x = g.input({2, 6, 5, 5});
         ValueId pooled = g.node("GlobalAveragePool", {x}, {2, 6, 1, 1});
         return g.finish({g.node("Flatten", {pooled}, {2, 6}, {I("axis", 1)})});
       }},
      {"SqueezeAfterGlobalPool", [] {
         TestGraph g;
         ValueId x = g.input({1, 6, 4, 4});
         ValueId pooled = g.node("GlobalAveragePool", {x}, {1, 6, 1, 1});
         return g.finish({g.node("Squeeze", {pooled, g.ints({2, 3})}, {1, 6})});
       }},
      {"UnsqueezeTo4dThenScale", [] {
         TestGraph g;
         ValueId x = g.input({2, 5});
         ValueId grown = g.node("Unsqueeze", {x, g.ints({2, 3})}, {2, 5, 1, 1});
         return g.finish({g.node("Mul", {grown, g.constant({5, 1, 1})}, {2, 5, 1, 1})});
       }},
      {"BatchNormalization", [] {
         TestGraph g;
         ValueId x = g.input({1, 4, 5, 5});
         return g.finish({g.node("BatchNormalization",
                                 {x, g.constant({4}), g.constant({4}), g.constant({4}), g.constant({4}, 0.5f, 2.0f)},
                                 {1, 4, 5, 5}, {F("epsilon", 1e-5f)})});
       }},
      {"ConvBlockToClassifierTwoOutputs", [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 12, 12});
         ValueId conv = g.node("Conv", {x, g.constant({8, 3, 3, 3}), g.constant({8})}, {1, 8, 6, 6},
                               {Is("pads", {1, 1, 1, 1}), Is("strides", {2, 2})});
         ValueId clip = g.node("Clip", {conv, g.scalar(0.0f), g.scalar(6.0f)}, {1, 8, 6, 6});
         ValueId dw = g.node("Conv", {clip, g.constant({8, 1, 3, 3})}, {1, 8, 6, 6},
                             {I("group", 8), Is("pads", {1, 1, 1, 1})});
         ValueId act = g.node("HardSwish", {dw}, {1, 8, 6, 6});
         ValueId sum = g.node("Add", {act, clip}, {1, 8, 6, 6});
         ValueId pooled = g.node("GlobalAveragePool", {sum}, {1, 8, 1, 1});
         ValueId flat = g.node("Flatten", {pooled}, {1, 8}, {I("axis", 1)});
         ValueId fc = g.node("Gemm", {flat, g.constant({4, 8}), g.constant({4})}, {1, 4}, {I("transB", 1)});
         return g.finish({g.node("Softmax", {fc}, {1, 4}, {I("axis", 1)}), sum});
       }},
  };
  return cases;
}

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
      {"Softmax4dLastAxis", "Softmax", [] { return unary("Softmax", {1, 3, 4, 5}, {I("axis", -1)}); }},
      {"Reshape4dWithSpatialDims", "Reshape", [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 3, 4});
         ValueId relu = g.node("Relu", {x}, {1, 2, 3, 4});
         return g.finish({g.node("Reshape", {relu, g.ints({1, 24})}, {1, 24})});
       }},
      {"FlattenOf4d", "Flatten", [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 3, 3});
         ValueId relu = g.node("Relu", {x}, {1, 2, 3, 3});
         return g.finish({g.node("Flatten", {relu}, {1, 18}, {I("axis", 1)})});
       }},
      {"MatMulOfTwoRunTimeValues", "MatMul", [] {
         TestGraph g;
         ValueId a = g.input({3, 4}), b = g.input({4, 5});
         return g.finish({g.node("MatMul", {a, b}, {3, 5})});
       }},
      {"MatMul4d", "MatMul", [] {
         TestGraph g;
         ValueId a = g.input({1, 2, 3, 4});
         return g.finish({g.node("MatMul", {a, g.constant({4, 5})}, {1, 2, 3, 5})});
       }},
      {"AveragePoolCountingPads", "AveragePool", [] {
         return unary("AveragePool", {1, 2, 5, 5},
                      {Is("kernel_shape", {3, 3}), Is("pads", {1, 1, 1, 1}), I("count_include_pad", 1)});
       }},
      {"AddBroadcasting2dInto4d", "Add", [] {
         TestGraph g;
         ValueId a = g.input({1, 2, 3, 4}), b = g.input({3, 4});
         return g.finish({g.node("Add", {a, b}, {1, 2, 3, 4})});
       }},
      {"Conv1d", "Conv", [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 8});
         return g.finish({g.node("Conv", {x, g.constant({3, 2, 3})}, {1, 3, 6})});
       }},
      {"PadReflect", "Pad", [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 4, 4});
         return g.finish({g.node("Pad", {x, g.ints({0, 0, 1, 1, 0, 0, 1, 1})}, {1, 2, 6, 6}, {S("mode", "reflect")})});
       }},
      {"GemmTransA", "Gemm", [] {
         TestGraph g;
         ValueId a = g.input({8, 2});
         return g.finish({g.node("Gemm", {a, g.constant({8, 5})}, {2, 5}, {I("transA", 1)})});
       }},
      {"Tanh", "Tanh", [] { return unary("Tanh", {2, 8}); }},
  };
  return cases;
}

class XnnpackRefusalTest : public ::testing::TestWithParam<RefusedCase> {
 protected:
  XnnpackEnvironment env_;
};

TEST_P(XnnpackRefusalTest, LeavesTheNodeToPortable) {
  expect_left_to_portable(env_, "xnnpack", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Refusals, XnnpackRefusalTest, ::testing::ValuesIn(refused_cases()),
                         [](const ::testing::TestParamInfo<RefusedCase>& param) { return param.param.name; });

}  // namespace
}  // namespace plugrt::xnnpack_test
