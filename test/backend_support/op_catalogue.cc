// SPDX-License-Identifier: Apache-2.0
#include "op_catalogue.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "test_graph.h"

namespace plugrt::backend_test {

std::vector<uint8_t> conv_transpose(Ints x_shape, Ints w_shape, Ints y_shape, std::vector<Attribute> attrs, bool bias,
                                    int64_t group) {
  TestGraph g;
  ValueId x = g.input(x_shape);
  std::vector<ValueId> inputs = {x, g.constant(w_shape)};
  if (bias) inputs.push_back(g.constant({w_shape[1] * group}));
  attrs.push_back(I("group", group));
  return g.finish({g.node("ConvTranspose", inputs, y_shape, attrs)});
}

const std::vector<OpCase>& op_catalogue() {
  static const std::vector<OpCase> cases = {
      {"Conv3x3PadBias",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 8, 8});
         return g.finish({g.node("Conv", {x, g.constant({8, 3, 3, 3}), g.constant({8})}, {1, 8, 8, 8},
                                 {Is("pads", {1, 1, 1, 1})})});
       }},
      {"ConvStrideDilationAsymmetricPads",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 4, 11, 10});
         // H: (11 + 0 + 2 - 5) / 2 + 1 = 5; W: (10 + 1 + 0 - 5) / 2 + 1 = 4
         return g.finish({g.node("Conv", {x, g.constant({5, 4, 3, 3})}, {2, 5, 5, 4},
                                 {Is("strides", {2, 2}), Is("dilations", {2, 2}), Is("pads", {0, 1, 2, 0})})});
       }},
      {"ConvGrouped",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 4, 6, 6});
         return g.finish(
             {g.node("Conv", {x, g.constant({6, 2, 3, 3}), g.constant({6})}, {1, 6, 4, 4}, {I("group", 2)})});
       }},
      {"ConvDepthwise",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 4, 7, 7});
         return g.finish({g.node("Conv", {x, g.constant({4, 1, 3, 3}), g.constant({4})}, {1, 4, 7, 7},
                                 {I("group", 4), Is("pads", {1, 1, 1, 1})})});
       }},
      {"ConvDepthwiseMultiplier2",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 6, 6});
         return g.finish(
             {g.node("Conv", {x, g.constant({6, 1, 3, 3})}, {1, 6, 2, 2}, {I("group", 3), Is("strides", {2, 2})})});
       }},
      {"ConvSameUpperStride2",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 9, 9});
         return g.finish({g.node("Conv", {x, g.constant({4, 3, 3, 3})}, {1, 4, 5, 5},
                                 {S("auto_pad", "SAME_UPPER"), Is("strides", {2, 2})})});
       }},
      {"Conv1x1",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 16, 5, 5});
         return g.finish({g.node("Conv", {x, g.constant({8, 16, 1, 1}), g.constant({8})}, {1, 8, 5, 5})});
       }},
      // Output sizes in the comments: stride x (input - 1) + output_padding + (kernel - 1) x
      // dilation + 1 - pads, per spatial axis.
      {"ConvTransposeOutputPaddingPastTheEndPadWithBias",
       [] {  // the end pad less output_padding is negative along H: bias alone in the last row
         return conv_transpose({2, 6, 5, 4}, {6, 4, 3, 3}, {2, 4, 11, 8},
                               {Is("strides", {2, 2}), Is("pads", {1, 0, 0, 1}), Is("output_padding", {1, 0})}, true);
       }},
      {"ConvTransposeDilations",
       [] {  // H: 4 + 2 x 2 + 1 - 0 - 2, W: 2 x 4 + 3 - 1 - 0
         return conv_transpose({1, 3, 5, 5}, {3, 2, 3, 3}, {1, 2, 7, 10},
                               {Is("strides", {1, 2}), Is("dilations", {2, 1}), Is("pads", {0, 1, 2, 0})});
       }},
      {"ConvTransposeDilationStrideAndOutputPadding",
       [] {
         return conv_transpose(
             {2, 2, 4, 3}, {2, 3, 2, 3}, {2, 3, 10, 9},
             {Is("strides", {2, 2}), Is("dilations", {2, 2}), Is("output_padding", {1, 1}), Is("pads", {0, 1, 0, 0})},
             true);
       }},
      {"ConvTransposeGroupedMoreOutputsThanInputsPerGroup",
       [] {  // [C, M / g, k, k]: 2 input and 3 output channels per group
         return conv_transpose({1, 4, 4, 4}, {4, 3, 2, 2}, {1, 6, 8, 8}, {Is("strides", {2, 2})}, true, 2);
       }},
      {"ConvTransposeGroupedFewerOutputsThanInputsPerGroup",
       [] {
         return conv_transpose({2, 9, 3, 5}, {9, 2, 3, 1}, {2, 6, 3, 5}, {Is("pads", {1, 0, 1, 0})}, false, 3);
       }},
      {"ConvTransposeDepthwise",
       [] {
         return conv_transpose({1, 8, 5, 5}, {8, 1, 4, 4}, {1, 8, 10, 10},
                               {Is("strides", {2, 2}), Is("pads", {1, 1, 1, 1})}, true, 8);
       }},
      {"ConvTransposeOutputShape",
       [] {  // natural size 9, asked 8: one pad, at the beginning
         return conv_transpose({1, 3, 4, 4}, {3, 2, 3, 3}, {1, 2, 8, 9},
                               {Is("strides", {2, 2}), Is("output_shape", {8, 9})});
       }},
      {"ConvTransposeOutputShapeLongerThanNatural",
       [] {  // natural size 9, asked 10: the last row holds the bias
         return conv_transpose({1, 3, 4, 4}, {3, 2, 3, 3}, {1, 2, 10, 9},
                               {Is("strides", {2, 2}), Is("output_shape", {1, 2, 10, 9})}, true);
       }},
      {"GemmTransBBias",
       [] {
         TestGraph g;
         ValueId a = g.input({3, 16});
         return g.finish({g.node("Gemm", {a, g.constant({10, 16}), g.constant({10})}, {3, 10}, {I("transB", 1)})});
       }},
      {"GemmAlphaBetaRowBias",
       [] {
         TestGraph g;
         ValueId a = g.input({2, 8});
         return g.finish({g.node("Gemm", {a, g.constant({8, 5}), g.constant({1, 5})}, {2, 5},
                                 {F("alpha", 0.5f), F("beta", 2.0f)})});
       }},
      {"MatMul2d",
       [] {
         TestGraph g;
         ValueId a = g.input({4, 8});
         return g.finish({g.node("MatMul", {a, g.constant({8, 5})}, {4, 5})});
       }},
      {"MatMul3d",
       [] {
         TestGraph g;
         ValueId a = g.input({2, 3, 8});
         return g.finish({g.node("MatMul", {a, g.constant({8, 5})}, {2, 3, 5})});
       }},
      {"Add4dSameShape",
       [] {
         TestGraph g;
         ValueId a = g.input({1, 3, 4, 5}), b = g.input({1, 3, 4, 5});
         return g.finish({g.node("Add", {a, b}, {1, 3, 4, 5})});
       }},
      {"AddPerChannelConstant",
       [] {
         TestGraph g;
         ValueId a = g.input({2, 3, 4, 5});
         return g.finish({g.node("Add", {a, g.constant({3, 1, 1})}, {2, 3, 4, 5})});
       }},
      {"SubScalarMinus4d",
       [] {
         TestGraph g;
         ValueId a = g.input({1, 3, 4, 4});
         return g.finish({g.node("Sub", {g.scalar(1.5f), a}, {1, 3, 4, 4})});
       }},
      {"Mul2dRowConstant",
       [] {
         TestGraph g;
         ValueId a = g.input({4, 6});
         return g.finish({g.node("Mul", {a, g.constant({6})}, {4, 6})});
       }},
      {"Div4dBroadcastBoth",
       [] {
         TestGraph g;
         ValueId a = g.input({1, 4, 5, 1}), b = g.input({1, 4, 1, 6});
         return g.finish({g.node("Div", {a, b}, {1, 4, 5, 6})});
       }},
      {"DivByConstant3d",
       [] {
         TestGraph g;
         ValueId a = g.input({2, 3, 4});
         return g.finish({g.node("Div", {a, g.constant({3, 1}, 0.5f, 2.0f)}, {2, 3, 4})});
       }},
      {"Relu",
       [] {
         return unary("Relu", {1, 3, 4, 4});
       }},
      {"ClipMinMax",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 4, 4});
         return g.finish({g.node("Clip", {x, g.scalar(-0.5f), g.scalar(0.75f)}, {1, 3, 4, 4})});
       }},
      {"ClipRelu6",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 5});
         ValueId scaled = g.node("Mul", {x, g.scalar(4.0f)}, {2, 5});
         return g.finish({g.node("Clip", {scaled, g.scalar(0.0f), g.scalar(6.0f)}, {2, 5})});
       }},
      {"ClipOnlyMax",
       [] {
         TestGraph g;
         ValueId x = g.input({3, 7});
         return g.finish({g.node("Clip", {x, -1, g.scalar(0.25f)}, {3, 7})});
       }},
      {"ClipOpset6Attributes",
       [] {
         TestGraph g(6);
         ValueId x = g.input({3, 7});
         return g.finish({g.node("Clip", {x}, {3, 7}, {F("min", -0.1f), F("max", 0.3f)})});
       }},
      {"Sigmoid",
       [] {
         return unary("Sigmoid", {1, 3, 4, 4});
       }},
      {"HardSwish",
       [] {
         return unary("HardSwish", {1, 3, 4, 4});
       }},
      {"HardSigmoid",
       [] {
         return unary("HardSigmoid", {2, 9}, {F("alpha", 1.0f / 6), F("beta", 0.5f)});
       }},
      {"LeakyRelu",
       [] {
         return unary("LeakyRelu", {1, 3, 4, 4}, {F("alpha", 0.2f)});
       }},
      {"Softmax2dLastAxis",
       [] {
         return unary("Softmax", {3, 10}, {I("axis", -1)});
       }},
      {"Softmax3dLastAxis",
       [] {
         return unary("Softmax", {2, 3, 10}, {I("axis", 2)});
       }},
      {"Softmax4dChannels",
       [] {
         return unary("Softmax", {1, 5, 3, 3}, {I("axis", 1)});
       }},
      {"MaxPool2x2",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 8, 8});
         return g.finish({g.node("MaxPool", {x}, {1, 3, 4, 4}, {Is("kernel_shape", {2, 2}), Is("strides", {2, 2})})});
       }},
      {"MaxPoolDilatedCeilModeSameShape",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 9, 9});
         // extent 5, (9 - 5) / 2 + 1 = 3 with floor and with ceil
         return g.finish(
             {g.node("MaxPool", {x}, {1, 2, 3, 3},
                     {Is("kernel_shape", {3, 3}), Is("strides", {2, 2}), Is("dilations", {2, 2}), I("ceil_mode", 1)})});
       }},
      {"MaxPool3x3Padded",
       [] {
         return unary("MaxPool", {1, 3, 7, 7},
                      {Is("kernel_shape", {3, 3}), Is("pads", {1, 1, 1, 1}), Is("strides", {1, 1})});
       }},
      {"AveragePool2x2",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 8, 8});
         return g.finish(
             {g.node("AveragePool", {x}, {1, 3, 4, 4}, {Is("kernel_shape", {2, 2}), Is("strides", {2, 2})})});
       }},
      {"AveragePool3x3PaddedExcludingPad",
       [] {
         return unary("AveragePool", {1, 3, 6, 6},
                      {Is("kernel_shape", {3, 3}), Is("pads", {1, 1, 1, 1}), I("count_include_pad", 0)});
       }},
      {"GlobalAveragePool",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 6, 5, 7});
         return g.finish({g.node("GlobalAveragePool", {x}, {2, 6, 1, 1})});
       }},
      {"PadConstant4d",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 4, 5});
         return g.finish({g.node("Pad", {x, g.ints({0, 0, 1, 2, 0, 1, 2, 1}), g.scalar(0.5f)}, {1, 4, 7, 8})});
       }},
      {"PadConstant2d",
       [] {
         TestGraph g;
         ValueId x = g.input({3, 4});
         return g.finish({g.node("Pad", {x, g.ints({1, 0, 0, 2})}, {4, 6})});
       }},
      {"ReshapeOneByOneTo2d",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 8, 1, 1});
         return g.finish({g.node("Reshape", {x, g.ints({1, 8})}, {1, 8})});
       }},
      {"ReshapeSingleChannel",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 1, 4, 4});
         return g.finish({g.node("Reshape", {x, g.ints({1, 16})}, {1, 16})});
       }},
      {"Reshape3dTo2d",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 3, 4});
         return g.finish({g.node("Reshape", {x, g.ints({6, 4})}, {6, 4})});
       }},
      {"FlattenAfterGlobalPool",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 6, 5, 5});
         ValueId pooled = g.node("GlobalAveragePool", {x}, {2, 6, 1, 1});
         return g.finish({g.node("Flatten", {pooled}, {2, 6}, {I("axis", 1)})});
       }},
      {"SqueezeAfterGlobalPool",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 6, 4, 4});
         ValueId pooled = g.node("GlobalAveragePool", {x}, {1, 6, 1, 1});
         return g.finish({g.node("Squeeze", {pooled, g.ints({2, 3})}, {1, 6})});
       }},
      {"UnsqueezeTo4dThenScale",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 5});
         ValueId grown = g.node("Unsqueeze", {x, g.ints({2, 3})}, {2, 5, 1, 1});
         return g.finish({g.node("Mul", {grown, g.constant({5, 1, 1})}, {2, 5, 1, 1})});
       }},
      {"BatchNormalization",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 4, 5, 5});
         return g.finish({g.node("BatchNormalization",
                                 {x, g.constant({4}), g.constant({4}), g.constant({4}), g.constant({4}, 0.5f, 2.0f)},
                                 {1, 4, 5, 5}, {F("epsilon", 1e-5f)})});
       }},
      {"ConvBlockToClassifierTwoOutputs",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 12, 12});
         ValueId conv = g.node("Conv", {x, g.constant({8, 3, 3, 3}), g.constant({8})}, {1, 8, 6, 6},
                               {Is("pads", {1, 1, 1, 1}), Is("strides", {2, 2})});
         ValueId clip = g.node("Clip", {conv, g.scalar(0.0f), g.scalar(6.0f)}, {1, 8, 6, 6});
         ValueId dw =
             g.node("Conv", {clip, g.constant({8, 1, 3, 3})}, {1, 8, 6, 6}, {I("group", 8), Is("pads", {1, 1, 1, 1})});
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

std::vector<OpCase> catalogue_except(std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    const bool known =
        std::any_of(op_catalogue().begin(), op_catalogue().end(), [&](const OpCase& c) { return c.name == name; });
    if (!known) throw std::invalid_argument("no op case '" + std::string(name) + "' in the catalogue");
  }
  std::vector<OpCase> kept;
  for (const OpCase& c : op_catalogue()) {
    if (std::find(names.begin(), names.end(), c.name) == names.end()) kept.push_back(c);
  }
  return kept;
}

std::vector<OpCase> joined(std::vector<OpCase> first, const std::vector<OpCase>& second) {
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

}  // namespace plugrt::backend_test
