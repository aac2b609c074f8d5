// SPDX-License-Identifier: Apache-2.0
// Every op the XNNPACK backend takes, against the portable backend on the same graph;
// and ops or forms it must leave to portable, which still give the right results.
#include <gtest/gtest.h>

#include "xnnpack_test_support.h"

namespace plugrt::xnnpack_test {
namespace {

// Output sizes in the comments: stride x (input - 1) + output_padding + (kernel - 1) x
// dilation + 1 - pads, per spatial axis.
std::vector<OpCase> own_cases() {
  return {
      {"ConvTransposeUpsampling2x2WithBias",
       [] {  // U-Net's upsampling: 2 x 5 + 2
         return conv_transpose({2, 8, 6, 6}, {8, 4, 2, 2}, {2, 4, 12, 12}, {Is("strides", {2, 2})}, true);
       }},
      {"ConvTransposeWiderChannels",
       [] {  // enough channels for XNNPACK's blocked kernels: 2 x 7 + 3 + 1 - 2
         return conv_transpose({1, 16, 8, 8}, {16, 24, 3, 3}, {1, 24, 16, 16},
                               {Is("strides", {2, 2}), Is("pads", {1, 1, 1, 1}), Is("output_padding", {1, 1})}, true);
       }},
      {"ConvTransposeStride1",
       [] {  // 4 + 3 - 2
         return conv_transpose({1, 3, 5, 5}, {3, 4, 3, 3}, {1, 4, 5, 5}, {Is("pads", {1, 1, 1, 1})});
       }},
      {"ConvTransposeAsymmetricPadsAndStrides",
       [] {  // H: 2 x 4 + 3 - 0 - 1, W: 3 x 3 + 2 - 2 - 0
         return conv_transpose({1, 3, 5, 4}, {3, 4, 3, 2}, {1, 4, 10, 9},
                               {Is("strides", {2, 3}), Is("pads", {0, 2, 1, 0})}, true);
       }},
      {"ConvTransposeDepthwiseMultiplier2",
       [] {  // 2 x 4 + 3 + 1 - 2
         return conv_transpose({1, 4, 5, 5}, {4, 2, 3, 3}, {1, 8, 10, 10},
                               {Is("strides", {2, 2}), Is("pads", {1, 1, 1, 1}), Is("output_padding", {1, 1})}, false,
                               4);
       }},
      {"ConvTransposeSameUpper",
       [] {  // natural 2 x 4 + 3 = 11, asked 10: the odd pad at the end
         return conv_transpose({1, 3, 5, 5}, {3, 2, 3, 3}, {1, 2, 10, 10},
                               {Is("strides", {2, 2}), S("auto_pad", "SAME_UPPER")}, true);
       }},
      {"ConvTransposeSameLower",
       [] {  // the odd pad at the beginning
         return conv_transpose({1, 3, 5, 5}, {3, 2, 3, 3}, {1, 2, 10, 10},
                               {Is("strides", {2, 2}), S("auto_pad", "SAME_LOWER")});
       }},
      {"ConvTransposeSameLongerThanNatural",
       [] {  // natural 3 x 4 + 2 = 14, asked 15: the last row and column hold the bias
         return conv_transpose({1, 2, 5, 5}, {2, 3, 2, 2}, {1, 3, 15, 15},
                               {Is("strides", {3, 3}), S("auto_pad", "SAME_UPPER")}, true);
       }},
      {"ConvTransposeValid",
       [] {  // H: 2 x 3 + 3, W: 3 + 3
         return conv_transpose({1, 2, 4, 4}, {2, 3, 3, 3}, {1, 3, 9, 6},
                               {Is("strides", {2, 1}), S("auto_pad", "VALID")}, true);
       }},
      {"ConvTransposeThenRelu",
       [] {  // XNNPACK fuses the clamp into the deconvolution
         TestGraph g;
         ValueId x = g.input({1, 4, 5, 5});
         ValueId up = g.node("ConvTranspose", {x, g.constant({4, 3, 3, 3}), g.constant({3})}, {1, 3, 9, 9},
                             {Is("strides", {2, 2}), Is("pads", {1, 1, 1, 1})});
         return g.finish({g.node("Relu", {up}, {1, 3, 9, 9})});
       }},
      {"ConvTransposeThenClip",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 4, 5, 5});
         ValueId up = g.node("ConvTranspose", {x, g.constant({4, 6, 2, 2})}, {1, 6, 10, 10}, {Is("strides", {2, 2})});
         return g.finish({g.node("Clip", {up, g.scalar(-0.5f), g.scalar(0.5f)}, {1, 6, 10, 10})});
       }},
      {"ConvDownThenConvTransposeUpWithSkip",
       [] {  // an encoder step and its decoder step, the skip added
         TestGraph g;
         ValueId x = g.input({1, 4, 8, 8});
         ValueId down = g.node("Conv", {x, g.constant({8, 4, 3, 3}), g.constant({8})}, {1, 8, 4, 4},
                               {Is("strides", {2, 2}), Is("pads", {1, 1, 1, 1})});
         ValueId relu = g.node("Relu", {down}, {1, 8, 4, 4});
         ValueId up = g.node("ConvTranspose", {relu, g.constant({8, 4, 2, 2}), g.constant({4})}, {1, 4, 8, 8},
                             {Is("strides", {2, 2})});
         ValueId sum = g.node("Add", {up, x}, {1, 4, 8, 8});
         return g.finish({g.node("Relu", {sum}, {1, 4, 8, 8})});
       }},
  };
}

// Every case of the shared catalogue (test/backend_support/op_catalogue.h) and its own.
std::vector<OpCase> taken_cases() { return joined(op_catalogue(), own_cases()); }

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
      {"ConvTranspose1d", "ConvTranspose",
       [] {
         return conv_transpose({1, 2, 8}, {2, 3, 3}, {1, 3, 10}, {});
       }},
      {"ConvTranspose3d", "ConvTranspose",
       [] {
         return conv_transpose({1, 2, 3, 4, 3}, {2, 3, 2, 2, 2}, {1, 3, 6, 5, 6}, {Is("strides", {2, 1, 2})});
       }},
      {"ConvTransposeRunTimeWeights", "ConvTranspose",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 4, 4}), w = g.input({2, 3, 3, 3});
         return g.finish({g.node("ConvTranspose", {x, w}, {1, 3, 6, 6})});
       }},
      {"ConvTransposeOutputLongerByAStride", "ConvTranspose",
       [] {  // natural 6 at stride 1, asked 7: XNNPACK's adjustment stays below the stride
         return conv_transpose({1, 2, 4, 4}, {2, 3, 3, 3}, {1, 3, 7, 6}, {Is("output_shape", {7, 6})}, true);
       }},
      {"ConvTransposeOutputShorterThanTheStride", "ConvTranspose",
       [] {  // W: 3 x 0 + 3 - 2 = 1 column at stride 3 (the differential test's seed 14,333)
         return conv_transpose({2, 3, 5, 1}, {3, 7, 3, 3}, {2, 7, 15, 1},
                               {Is("strides", {3, 3}), Is("pads", {0, 0, 0, 2})}, true);
       }},
      {"ConvTransposeOutputPaddingAtStride1", "ConvTranspose",
       [] {  // output_padding below the dilation, not the stride: 3 + 2 x 2 + 1 + 1
         return conv_transpose({1, 2, 4, 4}, {2, 3, 3, 3}, {1, 3, 9, 8},
                               {Is("dilations", {2, 2}), Is("output_padding", {1, 0})});
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
