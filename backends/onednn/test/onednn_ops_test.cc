// SPDX-License-Identifier: Apache-2.0
// Every op the oneDNN backend takes, against the portable backend on the same graph
// (and, for the few portable lacks, against values computed here); and forms it must
// leave to portable, which still give the right results.
#include <algorithm>
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onednn_test_support.h"
#include "plugrt/program.h"

namespace plugrt::onednn_test {
namespace {

using ::testing::IsEmpty;

/// `op` applied to |x| + 0.1, for ops defined on positive numbers.
std::vector<uint8_t> positive_unary(const std::string& op, Ints shape) {
  TestGraph g;
  ValueId x = g.input(shape);
  ValueId magnitude = g.node("Abs", {x}, shape);
  ValueId shifted = g.node("Add", {magnitude, g.scalar(0.1f)}, shape);
  return g.finish({g.node(op, {shifted}, shape)});
}

/// x * 0.5 * (1 + erf(x / sqrt(2))) as PyTorch writes GELU.
ValueId gelu(TestGraph& g, ValueId x, Ints shape) {
  ValueId scaled = g.node("Div", {x, g.scalar(1.4142135f)}, shape);
  ValueId erf = g.node("Erf", {scaled}, shape);
  ValueId sum = g.node("Add", {erf, g.scalar(1.0f)}, shape);
  ValueId product = g.node("Mul", {x, sum}, shape);
  return g.node("Mul", {product, g.scalar(0.5f)}, shape);
}

/// Layer normalization over the last axis as opsets before 17 write it.
ValueId decomposed_layer_norm(TestGraph& g, ValueId x, Ints shape) {
  Ints reduced = shape;
  reduced.back() = 1;
  ValueId mean = g.node("ReduceMean", {x}, reduced, {Is("axes", {-1})});
  ValueId centered = g.node("Sub", {x, mean}, shape);
  ValueId squared = g.node("Pow", {centered, g.scalar(2.0f)}, shape);
  ValueId variance = g.node("ReduceMean", {squared}, reduced, {Is("axes", {-1})});
  ValueId padded = g.node("Add", {variance, g.scalar(1e-5f)}, reduced);
  ValueId deviation = g.node("Sqrt", {padded}, reduced);
  ValueId normalized = g.node("Div", {centered, deviation}, shape);
  ValueId scaled = g.node("Mul", {normalized, g.constant({shape.back()})}, shape);
  return g.node("Add", {scaled, g.constant({shape.back()})}, shape);
}

/// A bidirectional LSTM of batch 20: above the hand-written step's batch limit, so a plan
/// for one thread runs it on oneDNN's LSTM primitive (a plan for more, on the step).
std::vector<uint8_t> lstm_batch_of_twenty() {
  TestGraph g;
  ValueId x = g.input({4, 20, 6});
  std::vector<ValueId> out =
      g.node_outputs("LSTM", {x, g.constant({2, 32, 6}), g.constant({2, 32, 8}), g.constant({2, 64})},
                     {{4, 2, 20, 8}, {2, 20, 8}, {2, 20, 8}}, {I("hidden_size", 8), S("direction", "bidirectional")});
  return g.finish(out);
}

/// ShuffleNet's channel shuffle of `x` ([N, C, ...]) into `groups` groups: Reshape to
/// [N, groups, C / groups, ...], Transpose of those two axes, Reshape back.
ValueId channel_shuffle(TestGraph& g, ValueId x, Ints shape, int64_t groups) {
  Ints grouped = shape;
  grouped[1] = shape[1] / groups;
  grouped.insert(grouped.begin() + 1, groups);
  Ints swapped = grouped, perm;
  std::swap(swapped[1], swapped[2]);
  for (size_t d = 0; d < grouped.size(); ++d) perm.push_back(static_cast<int64_t>(d));
  std::swap(perm[1], perm[2]);
  ValueId split = g.node("Reshape", {x, g.ints(grouped)}, grouped);
  ValueId transposed = g.node("Transpose", {split}, swapped, {Is("perm", perm)});
  return g.node("Reshape", {transposed, g.ints(shape)}, shape);
}

/// One nearest Resize of a fresh input to `y_shape`, by `scales` or (when empty) sizes.
std::vector<uint8_t> resize_nearest(Ints x_shape, Ints y_shape, std::vector<float> scales, const char* transform,
                                    const char* rounding) {
  TestGraph g;
  ValueId x = g.input(x_shape);
  std::vector<ValueId> inputs = {x, kNoValue, scales.empty() ? kNoValue : g.floats(scales)};
  if (scales.empty()) inputs.push_back(g.ints(y_shape));
  return g.finish(
      {g.node("Resize", inputs, y_shape,
              {S("mode", "nearest"), S("coordinate_transformation_mode", transform), S("nearest_mode", rounding)})});
}

const std::vector<OpCase>& own_cases() {
  static const std::vector<OpCase> cases = {
      {"ConvDepthwise16Channels",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 16, 7, 7});
         return g.finish({g.node("Conv", {x, g.constant({16, 1, 3, 3}), g.constant({16})}, {1, 16, 7, 7},
                                 {I("group", 16), Is("pads", {1, 1, 1, 1})})});
       }},
      {"Conv1d",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 4, 12});
         return g.finish({g.node("Conv", {x, g.constant({6, 4, 3})}, {1, 6, 10})});
       }},
      {"ConvChainWithFusedReluResidualAndBatchNorm",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 16, 10, 10});
         ValueId conv = g.node("Conv", {x, g.constant({16, 16, 3, 3})}, {1, 16, 10, 10}, {Is("pads", {1, 1, 1, 1})});
         ValueId norm =
             g.node("BatchNormalization",
                    {conv, g.constant({16}), g.constant({16}), g.constant({16}), g.constant({16}, 0.5f, 2.0f)},
                    {1, 16, 10, 10});
         ValueId relu = g.node("Relu", {norm}, {1, 16, 10, 10});
         ValueId conv2 = g.node("Conv", {relu, g.constant({16, 16, 1, 1}), g.constant({16})}, {1, 16, 10, 10});
         ValueId sum = g.node("Add", {conv2, x}, {1, 16, 10, 10});
         ValueId clip = g.node("Clip", {sum, g.scalar(0.0f), g.scalar(6.0f)}, {1, 16, 10, 10});
         ValueId pooled = g.node("MaxPool", {clip}, {1, 16, 5, 5}, {Is("kernel_shape", {2, 2}), Is("strides", {2, 2})});
         return g.finish({g.node("GlobalAveragePool", {pooled}, {1, 16, 1, 1})});
       }},
      {"DenseBlockConcatInConvolutionLayoutThenBatchNormRelu",
       [] {
         // DenseNet's layer: the concat of convolution results, then a pre-activation
         // batch normalization with its Relu fused; one input stays a graph input.
         TestGraph g;
         ValueId x = g.input({1, 16, 8, 8});
         ValueId a = g.node("Conv", {x, g.constant({16, 16, 1, 1})}, {1, 16, 8, 8});
         ValueId b = g.node("Conv", {x, g.constant({8, 16, 3, 3})}, {1, 8, 8, 8}, {Is("pads", {1, 1, 1, 1})});
         ValueId joined = g.node("Concat", {x, a, b}, {1, 40, 8, 8}, {I("axis", 1)});
         ValueId norm =
             g.node("BatchNormalization",
                    {joined, g.constant({40}), g.constant({40}), g.constant({40}), g.constant({40}, 0.5f, 2.0f)},
                    {1, 40, 8, 8});
         ValueId relu = g.node("Relu", {norm}, {1, 40, 8, 8});
         ValueId pooled =
             g.node("AveragePool", {relu}, {1, 40, 4, 4}, {Is("kernel_shape", {2, 2}), Is("strides", {2, 2})});
         return g.finish({pooled, g.node("Concat", {b, a}, {1, 24, 8, 8}, {I("axis", 1)})});
       }},
      {"DenseBlockConcatenatesInPlace",
       [] {
         // Three DenseNet layers: each reads the concat of the block's input and every
         // new map so far, so all three concats are prefixes of one buffer that the
         // convolutions write in place. The maps are 16-channel multiples; small weights
         // keep the sums near 1, where float32 agrees to the test's tolerance.
         TestGraph g;
         ValueId x = g.input({1, 8, 10, 10});
         std::vector<ValueId> features{
             g.node("Conv", {x, g.constant({32, 8, 3, 3})}, {1, 32, 10, 10}, {Is("pads", {1, 1, 1, 1})})};
         ValueId joined = features[0];
         for (int64_t channels = 32; channels < 80; channels += 16) {
           ValueId norm = g.node("BatchNormalization",
                                 {joined, g.constant({channels}), g.constant({channels}), g.constant({channels}),
                                  g.constant({channels}, 0.5f, 2.0f)},
                                 {1, channels, 10, 10});
           ValueId squeezed = g.node(
               "Relu",
               {g.node("Conv",
                       {g.node("Relu", {norm}, {1, channels, 10, 10}), g.constant({32, channels, 1, 1}, -0.2f, 0.2f)},
                       {1, 32, 10, 10})},
               {1, 32, 10, 10});
           features.push_back(g.node("Conv", {squeezed, g.constant({16, 32, 3, 3}, -0.2f, 0.2f)}, {1, 16, 10, 10},
                                     {Is("pads", {1, 1, 1, 1})}));
           joined = g.node("Concat", features, {1, channels + 16, 10, 10}, {I("axis", 1)});
         }
         return g.finish(
             {g.node("GlobalAveragePool", {joined}, {1, 80, 1, 1}), g.node("Sigmoid", {joined}, {1, 80, 10, 10})});
       }},
      {"DenseBlockAfterPoolingWithAReshapedPrefix",
       [] {
         // The block's input comes from a pooling; one concat is read again through a
         // Reshape, and a member is read on its own as well.
         TestGraph g;
         ValueId x = g.input({1, 16, 12, 12});
         ValueId pooled = g.node("MaxPool", {g.node("Conv", {x, g.constant({16, 16, 1, 1})}, {1, 16, 12, 12})},
                                 {1, 16, 6, 6}, {Is("kernel_shape", {2, 2}), Is("strides", {2, 2})});
         ValueId a = g.node("Conv", {pooled, g.constant({16, 16, 3, 3})}, {1, 16, 6, 6}, {Is("pads", {1, 1, 1, 1})});
         ValueId first = g.node("Concat", {pooled, a}, {1, 32, 6, 6}, {I("axis", 1)});
         ValueId b = g.node("Conv", {first, g.constant({32, 32, 1, 1})}, {1, 32, 6, 6});
         ValueId second = g.node("Concat", {pooled, a, b}, {1, 64, 6, 6}, {I("axis", 1)});
         ValueId flat = g.node("Reshape", {first, g.ints({1, 1152})}, {1, 1152});
         return g.finish({flat, g.node("Relu", {second}, {1, 64, 6, 6}), g.node("Tanh", {a}, {1, 16, 6, 6})});
       }},
      {"BatchNormThenReluThenSigmoidAndLeakyRelu",
       [] {
         // Relu rides in the normalization; the rest run as their own steps.
         TestGraph g;
         ValueId x = g.input({2, 6, 5, 5});
         auto norm = [&](ValueId in) {
           return g.node("BatchNormalization",
                         {in, g.constant({6}), g.constant({6}), g.constant({6}), g.constant({6}, 0.5f, 2.0f)},
                         {2, 6, 5, 5});
         };
         ValueId relu = g.node("Relu", {norm(x)}, {2, 6, 5, 5});
         ValueId sigmoid = g.node("Sigmoid", {relu}, {2, 6, 5, 5});
         ValueId leaky = g.node("LeakyRelu", {norm(sigmoid)}, {2, 6, 5, 5}, {F("alpha", 0.1f)});
         return g.finish({leaky});
       }},
      {"ConvThenSiLUPatternAndSigmoidGate",
       [] {
         // x * Sigmoid(x) becomes one swish fused into the convolution; the gate of a
         // squeeze-and-excitation block (a Sigmoid times another value) stays two ops.
         TestGraph g;
         ValueId x = g.input({1, 8, 6, 6});
         ValueId conv = g.node("Conv", {x, g.constant({8, 8, 3, 3})}, {1, 8, 6, 6}, {Is("pads", {1, 1, 1, 1})});
         ValueId gate = g.node("Sigmoid", {conv}, {1, 8, 6, 6});
         ValueId silu = g.node("Mul", {gate, conv}, {1, 8, 6, 6});
         ValueId squeezed = g.node("GlobalAveragePool", {silu}, {1, 8, 1, 1});
         ValueId scale = g.node("Sigmoid", {squeezed}, {1, 8, 1, 1});
         return g.finish({g.node("Mul", {silu, scale}, {1, 8, 6, 6})});
       }},
      {"ConvTranspose1dStridePadsOutputPadding",
       [] {  // 2 x 6 + 1 + 3 - 1 - 1
         return conv_transpose({1, 4, 7}, {4, 3, 3}, {1, 3, 14},
                               {Is("strides", {2}), Is("pads", {1, 1}), Is("output_padding", {1})});
       }},
      {"ConvTranspose1dGroupedDilated",
       [] {
         return conv_transpose(
             {1, 6, 9}, {6, 2, 3}, {1, 4, 23},
             {Is("strides", {2}), Is("dilations", {3}), Is("pads", {0, 1}), Is("output_padding", {1})}, true, 2);
       }},
      {"ConvTranspose3d",
       [] {
         return conv_transpose({1, 2, 3, 4, 3}, {2, 3, 2, 2, 2}, {1, 3, 6, 5, 6}, {Is("strides", {2, 1, 2})}, true);
       }},
      {"ConvTransposeSameUpper",
       [] {
         return conv_transpose({1, 3, 4, 5}, {3, 2, 3, 3}, {1, 2, 8, 10},
                               {Is("strides", {2, 2}), S("auto_pad", "SAME_UPPER")}, true);
       }},
      {"ConvTransposeSameLowerKernelBelowStride",
       [] {  // the natural size 5 falls short of 2 x 3: the last row and column hold the bias
         return conv_transpose({1, 2, 3, 3}, {2, 2, 1, 1}, {1, 2, 6, 6},
                               {Is("strides", {2, 2}), S("auto_pad", "SAME_LOWER")}, true);
       }},
      {"ConvTransposeValidWithOutputPadding",
       [] {
         return conv_transpose({1, 2, 3, 3}, {2, 2, 2, 2}, {1, 2, 10, 7},
                               {Is("strides", {3, 2}), S("auto_pad", "VALID"), Is("output_padding", {2, 1})});
       }},
      {"ConvTransposeThenReluScaleAndClip",
       [] {  // the chain runs as steps after the deconvolution (a fused one is slow)
         TestGraph g;
         ValueId x = g.input({2, 8, 6, 6});
         ValueId up = g.node("ConvTranspose", {x, g.constant({8, 4, 2, 2}), g.constant({4})}, {2, 4, 12, 12},
                             {Is("strides", {2, 2})});
         ValueId relu = g.node("Relu", {up}, {2, 4, 12, 12});
         ValueId scaled = g.node("Mul", {relu, g.constant({1, 4, 1, 1})}, {2, 4, 12, 12});
         ValueId shifted = g.node("Add", {scaled, g.scalar(0.25f)}, {2, 4, 12, 12});
         return g.finish({g.node("Clip", {shifted, g.scalar(-0.5f), g.scalar(0.5f)}, {2, 4, 12, 12})});
       }},
      {"GroupedConvTransposeThenBatchNormAndSigmoid",
       [] {  // the normalization folds into the deconvolution's weights and bias (groups 2)
         TestGraph g;
         ValueId x = g.input({1, 8, 5, 5});
         ValueId up = g.node("ConvTranspose", {x, g.constant({8, 3, 2, 2}), g.constant({6})}, {1, 6, 10, 10},
                             {Is("strides", {2, 2}), I("group", 2)});
         ValueId norm = g.node("BatchNormalization",
                               {up, g.constant({6}), g.constant({6}), g.constant({6}), g.constant({6}, 0.5f, 2.0f)},
                               {1, 6, 10, 10});
         return g.finish({g.node("Sigmoid", {norm}, {1, 6, 10, 10})});
       }},
      {"ConvTransposeThenResidualAddAndLeakyRelu",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 4, 3, 3}), skip = g.input({1, 4, 6, 6});
         ValueId up = g.node("ConvTranspose", {x, g.constant({4, 4, 2, 2})}, {1, 4, 6, 6}, {Is("strides", {2, 2})});
         ValueId sum = g.node("Add", {skip, up}, {1, 4, 6, 6});
         return g.finish({g.node("LeakyRelu", {sum}, {1, 4, 6, 6}, {F("alpha", 0.1f)})});
       }},
      {"UNetDecoderStep",
       [] {  // encoder, upsampling, skip connection joined, decoder convolution
         TestGraph g;
         ValueId x = g.input({1, 4, 8, 8});
         ValueId skip = g.node(
             "Relu",
             {g.node("Conv", {x, g.constant({8, 4, 3, 3}), g.constant({8})}, {1, 8, 8, 8}, {Is("pads", {1, 1, 1, 1})})},
             {1, 8, 8, 8});
         ValueId down = g.node("MaxPool", {skip}, {1, 8, 4, 4}, {Is("kernel_shape", {2, 2}), Is("strides", {2, 2})});
         ValueId deep = g.node("Relu",
                               {g.node("Conv", {down, g.constant({16, 8, 3, 3}), g.constant({16})}, {1, 16, 4, 4},
                                       {Is("pads", {1, 1, 1, 1})})},
                               {1, 16, 4, 4});
         ValueId up = g.node("ConvTranspose", {deep, g.constant({16, 8, 2, 2}), g.constant({8})}, {1, 8, 8, 8},
                             {Is("strides", {2, 2})});
         ValueId joined = g.node("Concat", {up, skip}, {1, 16, 8, 8}, {I("axis", 1)});
         return g.finish({g.node("Conv", {joined, g.constant({2, 16, 1, 1})}, {1, 2, 8, 8})});
       }},
      {"GemmAlphaBetaFullC",
       [] {
         TestGraph g;
         ValueId a = g.input({2, 8});
         return g.finish({g.node("Gemm", {a, g.constant({8, 5}), g.constant({2, 5})}, {2, 5},
                                 {F("alpha", 0.5f), F("beta", 2.0f)})});
       }},
      {"GemmThenGeluPattern",
       [] {
         TestGraph g;
         ValueId a = g.input({4, 16});
         ValueId fc = g.node("Gemm", {a, g.constant({32, 16}), g.constant({32})}, {4, 32}, {I("transB", 1)});
         return g.finish({gelu(g, fc, {4, 32})});
       }},
      {"MatMul2dConstant",
       [] {
         TestGraph g;
         ValueId a = g.input({4, 8});
         return g.finish({g.node("MatMul", {a, g.constant({8, 5})}, {4, 5})});
       }},
      {"MatMul3dBiasRelu",
       [] {
         TestGraph g;
         ValueId a = g.input({2, 6, 8});
         ValueId mm = g.node("MatMul", {a, g.constant({8, 5})}, {2, 6, 5});
         ValueId biased = g.node("Add", {g.constant({5}), mm}, {2, 6, 5});
         return g.finish({g.node("Relu", {biased}, {2, 6, 5})});
       }},
      {"MatMulBatchedRunTimeOperands",
       [] {
         TestGraph g;
         ValueId a = g.input({2, 3, 4, 6}), b = g.input({2, 3, 6, 5});
         return g.finish({g.node("MatMul", {a, b}, {2, 3, 4, 5})});
       }},
      {"MatMulBroadcastBatch",
       [] {
         TestGraph g;
         ValueId a = g.input({3, 4, 6}), b = g.input({1, 6, 5});
         return g.finish({g.node("MatMul", {a, b}, {3, 4, 5})});
       }},
      {"MatMulScaledMaskedScores",
       [] {
         // Attention scores: oneDNN has only its reference kernel for a batched matmul
         // with a broadcast binary post-op, so the mask is added as a step of its own.
         TestGraph g;
         ValueId q = g.input({4, 32, 64}), k = g.input({4, 64, 32});
         ValueId scores = g.node("MatMul", {q, k}, {4, 32, 32});
         ValueId scaled = g.node("Mul", {scores, g.scalar(0.125f)}, {4, 32, 32});
         return g.finish({g.node("Add", {scaled, g.constant({32, 32})}, {4, 32, 32})});
       }},
      {"WindowMaskOnAttentionScores",
       [] {
         // swin's shifted-window mask: [1, windows, 1, L, L] on [1, windows, heads, L, L].
         // oneDNN's optimised kernels take it only as [windows, 1, L * L] on
         // [windows, heads, L * L]; then Softmax reads the sum in its own shape.
         TestGraph g;
         ValueId scores = g.input({1, 4, 3, 7, 7});
         ValueId masked = g.node("Add", {scores, g.constant({1, 4, 1, 7, 7})}, {1, 4, 3, 7, 7});
         ValueId relu = g.node("Relu", {masked}, {1, 4, 3, 7, 7});
         return g.finish({g.node("Softmax", {relu}, {1, 4, 3, 7, 7}, {I("axis", -1)})});
       }},
      {"WindowMaskAfterMatMul",
       [] {
         // The mask as a post-op of the scores' MatMul, which runs as a step of its own
         // on [4, 3, 49] and [4, 1, 49], with the Relu after it fused there.
         TestGraph g;
         ValueId q = g.input({1, 4, 3, 7, 8});
         ValueId scores = g.node("MatMul", {q, g.constant({8, 7})}, {1, 4, 3, 7, 7});
         ValueId masked = g.node("Add", {scores, g.constant({1, 4, 1, 7, 7})}, {1, 4, 3, 7, 7});
         return g.finish({g.node("Relu", {masked}, {1, 4, 3, 7, 7})});
       }},
      {"BroadcastNoKernelCovers",
       [] {
         // [1, 3, 1, 1, 6] on [2, 3, 4, 5, 6], even as [1, 3, 1, 6] on [2, 3, 20, 6], has
         // only oneDNN's reference kernel.
         TestGraph g;
         ValueId a = g.input({2, 3, 4, 5, 6});
         return g.finish({g.node("Mul", {a, g.constant({1, 3, 1, 1, 6})}, {2, 3, 4, 5, 6})});
       }},
      {"SqueezeExcitationScale",
       [] {
         // A [1, C, 1, 1] gate computed in nhwc scales a feature map blocked by 8: mixed
         // layouts leave oneDNN only its reference kernel, so the step runs on plain ones.
         TestGraph g;
         ValueId x = g.input({1, 48, 8, 8});
         ValueId features = g.node("Conv", {x, g.constant({48, 8, 3, 3})}, {1, 48, 8, 8},
                                   {Is("pads", {1, 1, 1, 1}), I("group", 6)});  // blocked by 8
         ValueId pooled = g.node("GlobalAveragePool", {features}, {1, 48, 1, 1});
         ValueId squeezed = g.node("Conv", {pooled, g.constant({48, 48, 1, 1})}, {1, 48, 1, 1});
         ValueId gate = g.node("Sigmoid", {squeezed}, {1, 48, 1, 1});
         return g.finish({g.node("Mul", {features, gate}, {1, 48, 8, 8})});
       }},
      {"MatMulResidualAdd",
       [] {
         TestGraph g;
         ValueId a = g.input({1, 6, 8});
         ValueId mm = g.node("MatMul", {a, g.constant({8, 8})}, {1, 6, 8});
         return g.finish({g.node("Add", {a, mm}, {1, 6, 8})});
       }},
      {"AttentionHead",
       [] {
         TestGraph g;
         ValueId q = g.input({1, 8, 2, 4}), k = g.input({1, 8, 2, 4}), v = g.input({1, 8, 2, 4});
         ValueId qt = g.node("Transpose", {q}, {1, 2, 8, 4}, {Is("perm", {0, 2, 1, 3})});
         ValueId scaled = g.node("Div", {qt, g.scalar(2.0f)}, {1, 2, 8, 4});
         ValueId kt = g.node("Transpose", {k}, {1, 2, 4, 8}, {Is("perm", {0, 2, 3, 1})});
         ValueId scores = g.node("MatMul", {scaled, kt}, {1, 2, 8, 8});
         ValueId weights = g.node("Softmax", {scores}, {1, 2, 8, 8}, {I("axis", -1)});
         ValueId vt = g.node("Transpose", {v}, {1, 2, 8, 4}, {Is("perm", {0, 2, 1, 3})});
         ValueId context = g.node("MatMul", {weights, vt}, {1, 2, 8, 4});
         ValueId back = g.node("Transpose", {context}, {1, 8, 2, 4}, {Is("perm", {0, 2, 1, 3})});
         return g.finish({g.node("Reshape", {back, g.ints({1, 8, 8})}, {1, 8, 8})});
       }},  // three input chains, one partition
      {"AddBroadcastRowRunTime",
       [] {
         TestGraph g;
         ValueId a = g.input({2, 3, 4}), b = g.input({4});
         return g.finish({g.node("Add", {a, b}, {2, 3, 4})});
       }},
      {"MulPerChannelConstant",
       [] {
         TestGraph g;
         ValueId a = g.input({2, 3, 4, 5});
         return g.finish({g.node("Mul", {a, g.constant({3, 1, 1})}, {2, 3, 4, 5})});
       }},
      {"SubScalarMinusValue",
       [] {
         TestGraph g;
         ValueId a = g.input({1, 3, 4, 4});
         return g.finish({g.node("Sub", {g.scalar(1.5f), a}, {1, 3, 4, 4})});
       }},
      {"SubBroadcastFirst",
       [] {
         TestGraph g;
         ValueId a = g.input({4}), b = g.input({3, 4});
         return g.finish({g.node("Sub", {a, b}, {3, 4})});
       }},
      {"DivBroadcastFirst",
       [] {
         TestGraph g;
         ValueId a = g.input({3, 1}), b = g.input({3, 4});
         ValueId away = g.node("Add", {g.node("Abs", {b}, {3, 4}), g.scalar(0.5f)}, {3, 4});
         return g.finish({g.node("Div", {a, away}, {3, 4})});
       }},
      {"DivByScalarAndScalarByValue",
       [] {
         TestGraph g;
         ValueId a = g.input({2, 5});
         ValueId half = g.node("Div", {a, g.scalar(2.0f)}, {2, 5});
         ValueId away = g.node("Add", {g.node("Abs", {half}, {2, 5}), g.scalar(0.5f)}, {2, 5});
         return g.finish({g.node("Div", {g.scalar(3.0f), away}, {2, 5})});
       }},
      {"Tanh",
       [] {
         return unary("Tanh", {2, 7});
       }},
      {"Exp",
       [] {
         return unary("Exp", {2, 7});
       }},
      {"Abs",
       [] {
         return unary("Abs", {2, 7});
       }},
      {"Neg",
       [] {
         return unary("Neg", {2, 7});
       }},
      {"Erf",
       [] {
         return unary("Erf", {2, 7});
       }},
      {"HardSwishAsExportedBeforeOpset14",
       [] {
         // x * HardSigmoid(x) with alpha 1/6 after a convolution (one HardSwish post-op),
         // the Mul's operands in both orders; with another slope it is no HardSwish. At
         // opset 13, which has no HardSwish op for placement to name it by.
         TestGraph g(13);
         ValueId x = g.input({1, 3, 6, 6});
         ValueId conv = g.node("Conv", {x, g.constant({8, 3, 3, 3})}, {1, 8, 4, 4});
         ValueId gate = g.node("HardSigmoid", {conv}, {1, 8, 4, 4}, {F("alpha", 1.0f / 6), F("beta", 0.5f)});
         ValueId swished = g.node("Mul", {conv, gate}, {1, 8, 4, 4});
         ValueId second = g.node("Conv", {swished, g.constant({8, 8, 1, 1})}, {1, 8, 4, 4});
         ValueId gate2 = g.node("HardSigmoid", {second}, {1, 8, 4, 4}, {F("alpha", 1.0f / 6)});
         ValueId swished2 = g.node("Mul", {gate2, second}, {1, 8, 4, 4});
         ValueId line = g.input({2, 9});
         ValueId other = g.node("HardSigmoid", {line}, {2, 9}, {F("alpha", 0.25f)});
         return g.finish({swished2, g.node("Mul", {line, other}, {2, 9})});
       }},
      {"HardSigmoidOtherSlope",
       [] {
         return unary("HardSigmoid", {2, 9}, {F("alpha", 0.3f), F("beta", 0.4f)});
       }},
      {"Sqrt",
       [] {
         return positive_unary("Sqrt", {3, 5});
       }},
      {"Log",
       [] {
         return positive_unary("Log", {3, 5});
       }},
      {"Reciprocal",
       [] {
         return positive_unary("Reciprocal", {3, 5});
       }},
      {"PowSquare",
       [] {
         TestGraph g;
         ValueId x = g.input({3, 5});
         return g.finish({g.node("Pow", {x, g.scalar(2.0f)}, {3, 5})});
       }},
      {"GeluPattern",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 3, 8});
         return g.finish({gelu(g, x, {2, 3, 8})});
       }},
      {"LayerNormalizationPattern",
       [] {
         TestGraph g(13);
         ValueId x = g.input({2, 5, 16});
         return g.finish({decomposed_layer_norm(g, x, {2, 5, 16})});
       }},
      {"LayerNormalizationLastAxis",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 5, 16});
         return g.finish({g.node("LayerNormalization", {x, g.constant({16}), g.constant({16})}, {2, 5, 16},
                                 {I("axis", -1), F("epsilon", 1e-5f)})});
       }},
      {"LayerNormalizationTwoAxesNoBias",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 3, 4});
         return g.finish({g.node("LayerNormalization", {x, g.constant({3, 4})}, {2, 3, 4}, {I("axis", 1)})});
       }},
      {"SoftmaxLastAxis3d",
       [] {
         return unary("Softmax", {2, 3, 10}, {I("axis", -1)});
       }},
      {"SoftmaxChannels4d",
       [] {
         return unary("Softmax", {1, 5, 3, 3}, {I("axis", 1)});
       }},
      {"LogSoftmax",
       [] {
         return unary("LogSoftmax", {3, 10}, {I("axis", 1)});
       }},
      {"SoftmaxOpset11Coerced",
       [] {
         TestGraph g(11);
         ValueId x = g.input({2, 3, 4});
         return g.finish({g.node("Softmax", {x}, {2, 3, 4}, {I("axis", 1)})});
       }},
      {"MaxPoolCeilMode",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 8, 8});
         return g.finish({g.node("MaxPool", {x}, {1, 2, 4, 4},
                                 {Is("kernel_shape", {3, 3}), Is("strides", {2, 2}), I("ceil_mode", 1)})});
       }},
      {"AveragePoolExcludingPad",
       [] {
         return unary("AveragePool", {1, 3, 6, 6},
                      {Is("kernel_shape", {3, 3}), Is("pads", {1, 1, 1, 1}), I("count_include_pad", 0)});
       }},
      {"AveragePoolIncludingPad",
       [] {
         return unary("AveragePool", {1, 3, 6, 6},
                      {Is("kernel_shape", {3, 3}), Is("pads", {1, 1, 1, 1}), I("count_include_pad", 1)});
       }},
      {"GlobalMaxPool",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 6, 5, 7});
         return g.finish({g.node("GlobalMaxPool", {x}, {2, 6, 1, 1})});
       }},
      {"ConcatAxis1",
       [] {
         TestGraph g;
         ValueId a = g.input({2, 3, 4}), b = g.input({2, 5, 4});
         return g.finish({g.node("Concat", {a, b, g.constant({2, 1, 4})}, {2, 9, 4}, {I("axis", 1)})});
       }},
      {"Transpose3d",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 3, 4});
         return g.finish({g.node("Transpose", {x}, {4, 2, 3}, {Is("perm", {2, 0, 1})})});
       }},
      {"TransposeDefaultReverses",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 3, 4, 5});
         return g.finish({g.node("Transpose", {x}, {5, 4, 3, 2})});
       }},
      {"ReshapeOfConvOutput",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 16, 4, 4});
         ValueId conv = g.node("Conv", {x, g.constant({16, 16, 1, 1})}, {1, 16, 4, 4});
         return g.finish({g.node("Reshape", {conv, g.ints({1, 256})}, {1, 256})});
       }},
      {"FlattenSqueezeUnsqueeze",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 3, 1, 4});
         ValueId relu = g.node("Relu", {x}, {2, 3, 1, 4});
         ValueId squeezed = g.node("Squeeze", {relu, g.ints({2})}, {2, 3, 4});
         ValueId grown = g.node("Unsqueeze", {squeezed, g.ints({0})}, {1, 2, 3, 4});
         return g.finish({g.node("Flatten", {grown}, {2, 12}, {I("axis", 2)})});
       }},
      {"SliceLastAxis",
       [] {
         TestGraph g;
         ValueId x = g.input({4, 1, 12});
         ValueId relu = g.node("Relu", {x}, {4, 1, 12});
         return g.finish({g.node("Slice", {relu, g.ints({4}), g.ints({8}), g.ints({-1})}, {4, 1, 4})});
       }},
      {"SlicesWithStepsAsPatchMergingTakesThem",
       [] {
         // Swin's x[:, 0::2, 1::2, :], then steps that do not divide the extent.
         TestGraph g;
         ValueId x = g.input({1, 6, 7, 4});
         ValueId relu = g.node("Relu", {x}, {1, 6, 7, 4});
         ValueId even_odd =
             g.node("Slice", {relu, g.ints({0, 1}), g.ints({6, 7}), g.ints({1, 2}), g.ints({2, 2})}, {1, 3, 3, 4});
         ValueId thirds =
             g.node("Slice", {relu, g.ints({1, 0}), g.ints({6, 100}), g.ints({1, 3}), g.ints({3, 3})}, {1, 2, 7, 2});
         return g.finish({even_odd, thirds});
       }},
      {"SliceBackwardsFlipsAndStrides",
       [] {
         // torch.flip's Slice (from the end to before the start, step -1) on the last
         // axis; step -2 on one axis with a forward step on another; ends and starts
         // past the axis, clamped as ONNX says.
         TestGraph g;
         ValueId x = g.input({2, 5, 6});
         ValueId tanh = g.node("Tanh", {x}, {2, 5, 6});
         ValueId flipped = g.node(
             "Slice", {tanh, g.ints({-1}), g.ints({-9223372036854775807 - 1}), g.ints({2}), g.ints({-1})}, {2, 5, 6});
         ValueId strided =
             g.node("Slice", {tanh, g.ints({100, 0}), g.ints({-100, 6}), g.ints({1, 2}), g.ints({-2, 4})}, {2, 3, 2});
         return g.finish({g.node("Relu", {flipped}, {2, 5, 6}), strided});
       }},
      {"ResizeLinearHalfPixelAfterAConvolutionAndOnAnInput",
       [] {
         // A segmentation head's upsampling (by 2, and by a ratio that is not whole).
         TestGraph g;
         ValueId x = g.input({1, 4, 5, 6});
         ValueId conv = g.node("Conv", {x, g.constant({8, 4, 1, 1})}, {1, 8, 5, 6});
         ValueId doubled = g.node("Resize", {conv, kNoValue, kNoValue, g.ints({1, 8, 10, 12})}, {1, 8, 10, 12},
                                  {S("mode", "linear"), S("coordinate_transformation_mode", "half_pixel")});
         ValueId odd = g.node("Resize", {x, kNoValue, kNoValue, g.ints({1, 4, 7, 13})}, {1, 4, 7, 13},
                              {S("mode", "linear"), S("coordinate_transformation_mode", "pytorch_half_pixel")});
         ValueId scaled =
             g.node("Resize", {x, kNoValue, g.floats({1, 1, 2, 0.5f})}, {1, 4, 10, 3}, {S("mode", "linear")});
         return g.finish({doubled, odd, scaled});
       }},
      {"ChannelShuffleGroups2AfterAConvolution",
       [] {
         // 12 channels: a blocked layout pads them; the shuffle runs in the conv's layout.
         TestGraph g;
         ValueId x = g.input({1, 4, 6, 6});
         ValueId conv = g.node("Conv", {x, g.constant({12, 4, 1, 1})}, {1, 12, 6, 6});
         ValueId shuffled = channel_shuffle(g, conv, {1, 12, 6, 6}, 2);
         return g.finish({g.node("Conv", {shuffled, g.constant({8, 12, 1, 1})}, {1, 8, 6, 6})});
       }},
      {"ChannelShuffleGroups4OnAnInputToAnOutput",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 16, 3, 5});
         return g.finish({channel_shuffle(g, x, {2, 16, 3, 5}, 4)});
       }},
      {"ChannelShuffle1dGroups3",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 9, 7});
         return g.finish({channel_shuffle(g, g.node("Relu", {x}, {1, 9, 7}), {1, 9, 7}, 3)});
       }},
      {"ReshapeTransposeReshapeThatIsNoShuffle",
       [] {
         // Looks like a shuffle, but the Transpose also swaps H and W; and a shuffle whose
         // grouped value is also read elsewhere. Both stay separate ops, still right.
         TestGraph g;
         ValueId x = g.input({1, 12, 3, 4});
         ValueId split = g.node("Reshape", {x, g.ints({1, 3, 4, 3, 4})}, {1, 3, 4, 3, 4});
         ValueId swapped = g.node("Transpose", {split}, {1, 4, 3, 4, 3}, {Is("perm", {0, 2, 1, 4, 3})});
         ValueId merged = g.node("Reshape", {swapped, g.ints({1, 12, 4, 3})}, {1, 12, 4, 3});
         ValueId split2 = g.node("Reshape", {x, g.ints({1, 2, 6, 3, 4})}, {1, 2, 6, 3, 4});
         ValueId swapped2 = g.node("Transpose", {split2}, {1, 6, 2, 3, 4}, {Is("perm", {0, 2, 1, 3, 4})});
         ValueId merged2 = g.node("Reshape", {swapped2, g.ints({1, 12, 3, 4})}, {1, 12, 3, 4});
         return g.finish({merged, merged2, split2});
       }},
      {"ShuffleNetUnitsConcatShuffleSlice",
       [] {
         // ShuffleNet v2's units as PyTorch exports them: two branches concatenated, the
         // shuffle, then Slices taking the halves (x.chunk(2, dim=1)).
         TestGraph g;
         ValueId x = g.input({1, 24, 8, 8});
         auto branch = [&](ValueId in, int64_t c, int64_t out_c, int64_t stride) {
           const int64_t s = 8 / stride;
           ValueId a =
               g.node("Relu", {g.node("Conv", {in, g.constant({out_c, c, 1, 1})}, {1, out_c, 8, 8})}, {1, out_c, 8, 8});
           ValueId dw = g.node("Conv", {a, g.constant({out_c, 1, 3, 3})}, {1, out_c, s, s},
                               {I("group", out_c), Is("pads", {1, 1, 1, 1}), Is("strides", {stride, stride})});
           return g.node("Relu", {g.node("Conv", {dw, g.constant({out_c, out_c, 1, 1})}, {1, out_c, s, s})},
                         {1, out_c, s, s});
         };
         ValueId left = g.node("Conv", {x, g.constant({20, 24, 1, 1})}, {1, 20, 8, 8});
         ValueId joined = g.node("Concat", {left, branch(x, 24, 20, 1)}, {1, 40, 8, 8}, {I("axis", 1)});
         ValueId shuffled = channel_shuffle(g, joined, {1, 40, 8, 8}, 2);
         for (int unit = 0; unit < 2; ++unit) {
           ValueId kept = g.node("Slice", {shuffled, g.ints({0}), g.ints({20}), g.ints({1})}, {1, 20, 8, 8});
           ValueId rest = g.node("Slice", {shuffled, g.ints({20}), g.ints({40}), g.ints({1})}, {1, 20, 8, 8});
           joined = g.node("Concat", {kept, branch(rest, 20, 20, 1)}, {1, 40, 8, 8}, {I("axis", 1)});
           shuffled = channel_shuffle(g, joined, {1, 40, 8, 8}, 2);
         }
         return g.finish({g.node("GlobalAveragePool", {shuffled}, {1, 40, 1, 1})});
       }},
      {"ResizeNearestAsymmetricFloor2xAfterAConvolution",
       [] {
         // F.interpolate(scale_factor=2, mode="nearest"), a detection neck's upsampling.
         TestGraph g;
         ValueId x = g.input({1, 4, 5, 6});
         ValueId conv = g.node("Conv", {x, g.constant({20, 4, 1, 1})}, {1, 20, 5, 6});
         ValueId up = g.node(
             "Resize", {conv, kNoValue, g.floats({1, 1, 2, 2})}, {1, 20, 10, 12},
             {S("mode", "nearest"), S("coordinate_transformation_mode", "asymmetric"), S("nearest_mode", "floor")});
         return g.finish({g.node("Conv", {up, g.constant({4, 20, 3, 3})}, {1, 4, 8, 10})});
       }},
      {"ResizeNearest3xSizes1dHalfPixel",
       [] {
         return resize_nearest({2, 3, 5}, {2, 3, 15}, {}, "half_pixel", "round_prefer_floor");
       }},
      {"ResizeNearest3xScales2dPytorchHalfPixelPreferCeil",
       [] {
         return resize_nearest({1, 2, 4, 3}, {1, 2, 12, 9}, {1, 1, 3, 3}, "pytorch_half_pixel", "round_prefer_ceil");
       }},
      {"ResizeNearestMixedScalesTfHalfPixelFloor",
       [] {
         return resize_nearest({1, 3, 4, 5}, {1, 3, 8, 15}, {1, 1, 2, 3}, "tf_half_pixel_for_nn", "floor");
       }},
      {"ResizeNearest2xSizesDefaultModes",
       [] {  // half_pixel and round_prefer_floor, ONNX's defaults
         TestGraph g;
         ValueId x = g.input({1, 2, 3, 3});
         return g.finish(
             {g.node("Resize", {x, kNoValue, kNoValue, g.ints({1, 2, 6, 6})}, {1, 2, 6, 6}, {S("mode", "nearest")})});
       }},
      {"ResizeNearestHalveHalfPixelPreferCeil",
       [] {  // every coordinate a tie, both round up
         return resize_nearest({1, 2, 8, 6}, {1, 2, 4, 3}, {1, 1, 0.5f, 0.5f}, "half_pixel", "round_prefer_ceil");
       }},
      {"ResizeNearest3dAsymmetricFloor",
       [] {
         return resize_nearest({1, 2, 2, 3, 4}, {1, 2, 4, 6, 8}, {1, 1, 2, 2, 2}, "asymmetric", "floor");
       }},
      {"ResizeNearestAlignCorners3To6",
       [] {
         return resize_nearest({1, 2, 3, 3}, {1, 2, 6, 6}, {}, "align_corners", "round_prefer_floor");
       }},
      {"ResizeNearestOpset10",
       [] {  // Resize 10: asymmetric, floor; the scales are input 1
         TestGraph g(10);
         ValueId x = g.input({1, 3, 4, 4});
         return g.finish({g.node("Resize", {x, g.floats({1, 1, 2, 2})}, {1, 3, 8, 8}, {S("mode", "nearest")})});
       }},
      {"InstanceNormalizationAfterAConvolution",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 3, 5, 4});
         ValueId conv = g.node("Conv", {x, g.constant({4, 3, 1, 1})}, {2, 4, 5, 4});
         ValueId norm = g.node("InstanceNormalization", {conv, g.constant({4}), g.constant({4})}, {2, 4, 5, 4},
                               {F("epsilon", 1e-3f)});
         return g.finish({g.node("Relu", {norm}, {2, 4, 5, 4})});
       }},
      {"GroupNormalizationAsPyTorchExportsIt",
       [] {
         // nn.GroupNorm(2, 4): a reshape to [N, groups, -1], InstanceNormalization with
         // scale 1 and bias 0, a reshape back, then the per-channel affine.
         TestGraph g;
         ValueId x = g.input({2, 4, 3, 3});
         ValueId grouped = g.node("Reshape", {x, g.ints({2, 2, -1})}, {2, 2, 18});
         ValueId norm = g.node("InstanceNormalization", {grouped, g.floats({1, 1}), g.floats({0, 0})}, {2, 2, 18});
         ValueId back = g.node("Reshape", {norm, g.ints({2, 4, 3, 3})}, {2, 4, 3, 3});
         ValueId scaled = g.node("Mul", {back, g.constant({4, 1, 1})}, {2, 4, 3, 3});
         return g.finish({g.node("Add", {scaled, g.constant({4, 1, 1})}, {2, 4, 3, 3})});
       }},
      {"EmbeddingGatherThenMatMul",
       [] {
         // Token ids (int64, a partition input; negative ones count from the end) pick
         // rows of a constant table, and the embeddings go on into a MatMul; a second
         // gather takes 2-D rows by a scalar id.
         TestGraph g;
         ValueId ids = g.index_input({2, 5});
         ValueId embedded = g.node("Gather", {g.constant({8, 16}), ids}, {2, 5, 16});
         ValueId projected = g.node("MatMul", {embedded, g.constant({16, 8})}, {2, 5, 8});
         ValueId one = g.index_input({});
         ValueId picked = g.node("Gather", {g.constant({5, 3, 4}), one}, {3, 4}, {I("axis", -3)});
         return g.finish({g.node("Relu", {projected}, {2, 5, 8}), g.node("Tanh", {picked}, {3, 4})});
       }},
      {"ClipByBoundsComputedAtRunTime",
       [] {
         // A log spectrogram clipped to its peak less 2 (a min computed at run time), a
         // computed max with a constant min, and a computed max alone.
         TestGraph g;
         ValueId x = g.input({2, 3, 4});
         ValueId peak = g.node("ReduceMax", {x}, {}, {I("keepdims", 0)});
         ValueId floor = g.node("Sub", {peak, g.scalar(2.0f)}, {});
         ValueId floored = g.node("Clip", {x, floor}, {2, 3, 4});
         ValueId rows = g.node("ReduceMean", {x}, {}, {I("keepdims", 0)});
         ValueId capped = g.node("Clip", {x, g.scalar(-1.0f), rows}, {2, 3, 4});
         ValueId only_max = g.node("Clip", {x, kNoValue, rows}, {2, 3, 4});
         return g.finish({floored, capped, only_max});
       }},
      {"PadsMirroredAndByTheEdge",
       [] {
         // Reflect pads on both spatial axes of a convolution's result (the corners
         // mirrored on both), and edge pads on three axes of an input, one of them a
         // single element long.
         TestGraph g;
         ValueId x = g.input({1, 3, 5, 6});
         ValueId conv = g.node("Conv", {x, g.constant({4, 3, 1, 1})}, {1, 4, 5, 6});
         ValueId reflected =
             g.node("Pad", {conv, g.ints({0, 0, 2, 1, 0, 0, 1, 3})}, {1, 4, 8, 10}, {S("mode", "reflect")});
         ValueId line = g.input({2, 1, 4});
         ValueId edged = g.node("Pad", {line, g.ints({1, 2, 0, 0, 1, 3})}, {3, 4, 7}, {S("mode", "edge")});
         // An STFT's centring: a signal mirrored by half a window at each end.
         ValueId signal = g.input({1, 1, 512});
         ValueId centred = g.node("Pad", {signal, g.ints({0, 0, 128, 0, 0, 128})}, {1, 1, 768}, {S("mode", "reflect")});
         return g.finish({g.node("Relu", {reflected}, {1, 4, 8, 10}), edged, centred});
       }},
      {"PadsByZerosAndByAValue",
       [] {
         // An asymmetric zero pad on a convolution's result (kept whole: the Relu between
         // stops the fold into the next Conv), and a pad by 1.5 on every axis of an input.
         TestGraph g;
         ValueId x = g.input({1, 3, 5, 5});
         ValueId conv = g.node("Conv", {x, g.constant({4, 3, 1, 1})}, {1, 4, 5, 5});
         ValueId padded = g.node("Pad", {conv, g.ints({0, 0, 0, 0, 0, 0, 1, 1})}, {1, 4, 6, 6});
         ValueId relu = g.node("Relu", {padded}, {1, 4, 6, 6});
         ValueId strided = g.node("Conv", {relu, g.constant({4, 4, 3, 3})}, {1, 4, 2, 2}, {Is("strides", {2, 2})});
         ValueId line = g.input({2, 3});
         ValueId by_value = g.node("Pad", {line, g.ints({1, 0, 0, 2}), g.scalar(1.5f)}, {3, 5});
         return g.finish({strided, by_value});
       }},
      {"LstmWithInitialStatesAndEveryOutput",
       [] {
         // hidden 4 over 5 steps of batch 2: h0 computed, c0 constant.
         TestGraph g;
         ValueId x = g.input({5, 2, 3});
         ValueId h0 = g.node("Tanh", {g.input({1, 2, 4})}, {1, 2, 4});
         std::vector<ValueId> out = g.node_outputs("LSTM",
                                                   {x, g.constant({1, 16, 3}), g.constant({1, 16, 4}),
                                                    g.constant({1, 32}), kNoValue, h0, g.constant({1, 2, 4})},
                                                   {{5, 1, 2, 4}, {1, 2, 4}, {1, 2, 4}}, {I("hidden_size", 4)});
         return g.finish(out);
       }},
      {"LstmReverseLastStateOnly",
       [] {
         TestGraph g;
         ValueId x = g.input({6, 1, 4});
         std::vector<ValueId> out = g.node_outputs("LSTM", {x, g.constant({1, 12, 4}), g.constant({1, 12, 3})},
                                                   {{}, {1, 1, 3}}, {I("hidden_size", 3), S("direction", "reverse")});
         return g.finish({out[1]});
       }},
      {"LstmBidirectionalBatchOfThreeOddWidths",
       [] {
         // The hand-written step's edges: 3 rows (a block of 3), 4 x 37 gate columns (a
         // full panel, a narrower one, a 16-wide tile and 4 single columns), inputs 19
         // wide and scaled by 8 so that gates saturate; initial states computed.
         TestGraph g;
         ValueId x = g.node("Mul", {g.input({7, 3, 19}), g.scalar(8.0f)}, {7, 3, 19});
         ValueId h0 = g.node("Tanh", {g.input({2, 3, 37})}, {2, 3, 37});
         ValueId c0 = g.node("Mul", {g.input({2, 3, 37}), g.scalar(3.0f)}, {2, 3, 37});
         std::vector<ValueId> out = g.node_outputs(
             "LSTM", {x, g.constant({2, 148, 19}), g.constant({2, 148, 37}), g.constant({2, 296}), kNoValue, h0, c0},
             {{7, 2, 3, 37}, {2, 3, 37}, {2, 3, 37}}, {I("hidden_size", 37), S("direction", "bidirectional")});
         return g.finish(out);
       }},
      {"LstmBatchOfFiveWithoutStatesOrBias",
       [] {
         // 5 rows: a block of 4 and one row; hidden 40 (160 gate columns); zero states.
         TestGraph g;
         ValueId x = g.input({9, 5, 24});
         std::vector<ValueId> out = g.node_outputs("LSTM", {x, g.constant({1, 160, 24}), g.constant({1, 160, 40})},
                                                   {{9, 1, 5, 40}, {1, 5, 40}}, {I("hidden_size", 40)});
         return g.finish(out);
       }},
      {"LstmBatchOfTwenty", lstm_batch_of_twenty},
      {"GruBidirectionalBothResetForms",
       [] {
         // PyTorch's GRU applies the reset after the recurrent product (linear_before_reset 1).
         TestGraph g;
         ValueId x = g.input({4, 3, 5});
         auto gru = [&](int64_t linear_before_reset) {
           return g.node_outputs(
               "GRU",
               {x, g.constant({2, 18, 5}), g.constant({2, 18, 6}), g.constant({2, 36}), kNoValue,
                g.constant({2, 3, 6})},
               {{4, 2, 3, 6}, {2, 3, 6}},
               {I("hidden_size", 6), S("direction", "bidirectional"), I("linear_before_reset", linear_before_reset)});
         };
         std::vector<ValueId> before = gru(1), after = gru(0);
         return g.finish({before[0], before[1], after[0], after[1]});
       }},
      {"GruResetBeforeTheProductOddWidthsReverse",
       [] {
         // The hand-written step's GRU with the reset applied to h before R_h (packed
         // apart): 5 rows, hidden 37 (2 x 37 and 37 columns: tiles and single columns),
         // inputs scaled so that gates saturate, h0 computed.
         TestGraph g;
         ValueId x = g.node("Mul", {g.input({6, 5, 11}), g.scalar(6.0f)}, {6, 5, 11});
         ValueId h0 = g.node("Tanh", {g.input({1, 5, 37})}, {1, 5, 37});
         std::vector<ValueId> out = g.node_outputs(
             "GRU", {x, g.constant({1, 111, 11}), g.constant({1, 111, 37}), g.constant({1, 222}), kNoValue, h0},
             {{6, 1, 5, 37}, {1, 5, 37}}, {I("hidden_size", 37), S("direction", "reverse")});
         return g.finish(out);
       }},
      {"GruResetAfterTheProductOneRowNoStatesOrBias",
       [] {
         // PyTorch's form at a batch of 1, both ways, hidden 45 (135 gate columns: a full
         // panel and a narrow one), no bias and no initial state.
         TestGraph g;
         ValueId x = g.input({10, 1, 20});
         std::vector<ValueId> out = g.node_outputs(
             "GRU", {x, g.constant({2, 135, 20}), g.constant({2, 135, 45})}, {{10, 2, 1, 45}, {2, 1, 45}},
             {I("hidden_size", 45), S("direction", "bidirectional"), I("linear_before_reset", 1)});
         return g.finish(out);
       }},
      {"SliceNegativeStartsTwoAxes",
       [] {
         TestGraph g;
         ValueId x = g.input({5, 6});
         return g.finish({g.node("Slice", {x, g.ints({-3, 1}), g.ints({100, 5})}, {3, 4})});
       }},
      {"ReduceMeanKeepDims",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 3, 4});
         return g.finish({g.node("ReduceMean", {x}, {2, 1, 4}, {Is("axes", {1})})});
       }},
      {"SpatialMeanAndMaxAsPoolingsAfterAConvolutionAndOnAnInput",
       [] {
         // x.mean([2, 3]) as MNASNet's head writes it, on a convolution's result (blocked
         // or channels-last) and on a plain input; a max over the spatial dims of a 3-D one.
         TestGraph g;
         ValueId x = g.input({1, 8, 5, 6});
         ValueId conv = g.node("Conv", {x, g.constant({16, 8, 1, 1})}, {1, 16, 5, 6});
         ValueId mean = g.node("ReduceMean", {conv}, {1, 16}, {Is("axes", {2, 3}), I("keepdims", 0)});
         ValueId input_mean = g.node("ReduceMean", {x}, {1, 8, 1, 1}, {Is("axes", {-1, -2})});
         ValueId line = g.input({2, 3, 7});
         return g.finish({mean, input_mean, g.node("ReduceMax", {line}, {2, 3, 1}, {Is("axes", {2})})});
       }},
      {"ReduceMaxAllAxesDropped",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 3, 4});
         return g.finish({g.node("ReduceMax", {x}, {}, {I("keepdims", 0)})});
       }},
      {"ReduceSumAxesInputDropped",
       [] {
         TestGraph g;
         ValueId x = g.input({2, 3, 4});
         return g.finish({g.node("ReduceSum", {x, g.ints({0, 2})}, {3}, {I("keepdims", 0)})});
       }},
      {"EncoderBlock",
       [] {
         TestGraph g(13);
         ValueId x = g.input({1, 8, 16});
         ValueId qkv = g.node("MatMul", {x, g.constant({16, 16})}, {1, 8, 16});
         ValueId biased = g.node("Add", {g.constant({16}), qkv}, {1, 8, 16});
         ValueId heads = g.node("Reshape", {biased, g.ints({1, 8, 2, 8})}, {1, 8, 2, 8});
         ValueId q = g.node("Transpose", {heads}, {1, 2, 8, 8}, {Is("perm", {0, 2, 1, 3})});
         ValueId k = g.node("Transpose", {heads}, {1, 2, 8, 8}, {Is("perm", {0, 2, 3, 1})});
         ValueId scores = g.node("MatMul", {q, k}, {1, 2, 8, 8});
         ValueId weights = g.node("Softmax", {scores}, {1, 2, 8, 8}, {I("axis", -1)});
         ValueId context = g.node("MatMul", {weights, q}, {1, 2, 8, 8});
         ValueId merged = g.node(
             "Reshape", {g.node("Transpose", {context}, {1, 8, 2, 8}, {Is("perm", {0, 2, 1, 3})}), g.ints({8, 16})},
             {8, 16});
         ValueId projected =
             g.node("Gemm", {merged, g.constant({16, 16}), g.constant({16})}, {8, 16}, {I("transB", 1)});
         ValueId back = g.node("Reshape", {projected, g.ints({1, 8, 16})}, {1, 8, 16});
         ValueId residual = g.node("Add", {x, back}, {1, 8, 16});
         ValueId norm = decomposed_layer_norm(g, residual, {1, 8, 16});
         ValueId hidden = g.node("MatMul", {norm, g.constant({16, 32})}, {1, 8, 32});
         ValueId activated = gelu(g, g.node("Add", {hidden, g.constant({32})}, {1, 8, 32}), {1, 8, 32});
         ValueId out = g.node("MatMul", {activated, g.constant({32, 16})}, {1, 8, 16});
         return g.finish({g.node("Add", {norm, out}, {1, 8, 16})});
       }},
  };
  return cases;
}

/// The catalogue's cases (test/backend_support/op_catalogue.h) but Div4dBroadcastBoth
/// (a binary op whose inputs both broadcast is left to portable), then its own.
std::vector<OpCase> taken_cases() { return joined(catalogue_except({"Div4dBroadcastBoth"}), own_cases()); }

class OnednnOpTest : public ::testing::TestWithParam<OpCase> {
 protected:
  OnednnEnvironment env_;
};

TEST_P(OnednnOpTest, TakesEveryNodeAndMatchesPortable) {
  expect_taken_and_matching_portable(env_, "onednn", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Ops, OnednnOpTest, ::testing::ValuesIn(taken_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& param) { return param.param.name; });

TEST(OnednnRecurrentTest, ABatchAboveTheStepsLimitOnOneThreadRunsOnThePrimitive) {
  OnednnEnvironment env;
  MethodOptions options;
  options.num_threads = 1;
  expect_taken_and_matching_portable(env, "onednn", {"LstmBatchOfTwenty", lstm_batch_of_twenty}, options);
}

// ---- Ops the portable backend lacks: checked against values computed here.

/// Runs a two-input graph on oneDNN with fixed inputs and returns its one output.
std::vector<float> run_on_onednn(OnednnEnvironment& env, const std::vector<uint8_t>& graph,
                                 std::vector<std::vector<float>> inputs) {
  compiler::CompiledModel compiled = env.compile(graph, {"onednn"});
  EXPECT_THAT(compiled.summary.untaken_ops, IsEmpty());
  Result<Method> method = env.load(compiled.program);
  EXPECT_TRUE(method.is_ok()) << method.status().to_string();
  if (!method.is_ok()) return {};
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int64_t> shape = method->input_spec(i).shape;
    DLTensor tensor{
        inputs[i].data(), {kDLCPU, 0}, static_cast<int32_t>(shape.size()), {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
    EXPECT_TRUE(method->set_input(i, tensor).is_ok());
  }
  EXPECT_TRUE(method->execute().is_ok());
  const float* data = static_cast<const float*>(method->output(0).data);
  return std::vector<float>(data, data + method->output_spec(0).num_bytes() / sizeof(float));
}

/// The format version in the header of the one oneDNN blob `graph` compiles to.
uint32_t blob_version(OnednnEnvironment& env, const std::vector<uint8_t>& graph) {
  Result<Program> program = Program::from_bytes(env.compile(graph, {"onednn"}).program, "graph.prt");
  EXPECT_TRUE(program.is_ok());
  if (!program.is_ok()) return 0;
  Result<MethodContents> contents = program->contents("forward");
  EXPECT_TRUE(contents.is_ok() && contents->delegates.size() == 1);
  if (!contents.is_ok() || contents->delegates.size() != 1) return 0;
  const Span<const uint8_t> blob = contents->delegates[0].blob;
  if (blob.size() < 16) return 0;
  uint32_t version = 0;  // bytes 8 to 11, little-endian (plugrt/sdk/blob_header.h)
  for (int i = 0; i < 4; ++i) version |= static_cast<uint32_t>(blob[8 + i]) << (8 * i);
  return version;
}

// A blob says the oldest format that reads it: 9 where it holds an Einsum (a matmul
// through views), 5 where it holds a channel shuffle or a nearest resampling, 4 where it
// holds a deconvolution (so a version 3 plugin refuses it), else 3, so the others still
// run on an older plugin.
TEST(OnednnBlobFormat, OnlyABlobWithANewerOpNeedsANewerVersion) {
  OnednnEnvironment env;
  EXPECT_EQ(blob_version(env, conv_transpose({1, 4, 5, 5}, {4, 3, 3, 3}, {1, 3, 7, 7}, {})), 4u);
  EXPECT_EQ(blob_version(env, resize_nearest({1, 2, 3, 3}, {1, 2, 6, 6}, {1, 1, 2, 2}, "asymmetric", "floor")), 5u);
  {
    TestGraph g;
    ValueId x = g.input({1, 4, 5, 5});
    EXPECT_EQ(blob_version(env, g.finish({channel_shuffle(g, x, {1, 4, 5, 5}, 2)})), 5u);
  }
  {
    TestGraph g;
    ValueId x = g.input({1, 4, 5, 5});
    EXPECT_EQ(blob_version(env, g.finish({g.node("Conv", {x, g.constant({3, 4, 3, 3})}, {1, 3, 3, 3})})), 3u);
  }
  {
    TestGraph g;
    ValueId a = g.input({2, 5, 4}), b = g.input({2, 6, 4});
    EXPECT_EQ(blob_version(env, g.finish({g.node("Einsum", {a, b}, {2, 5, 6}, {S("equation", "bid,bjd->bij")})})), 9u);
  }
  {
    TestGraph g;
    ValueId a = g.input({2, 5, 4}), b = g.input({2, 4, 6});
    EXPECT_EQ(blob_version(env, g.finish({g.node("MatMul", {a, b}, {2, 5, 6})})), 3u);
  }
  {
    TestGraph g;
    ValueId ids = g.index_input({4});
    EXPECT_EQ(blob_version(env, g.finish({g.node("Gather", {g.constant({6, 3}), ids}, {4, 3})})), 10u);
  }
  for (const char* mode : {"constant", "reflect", "edge"}) {
    TestGraph g;
    ValueId x = g.input({1, 2, 4, 4});
    const uint32_t expected = std::string(mode) == "constant" ? 3u : 10u;
    EXPECT_EQ(
        blob_version(env,
                     g.finish({g.node("Pad", {x, g.ints({0, 0, 1, 1, 0, 0, 1, 1})}, {1, 2, 6, 6}, {S("mode", mode)})})),
        expected)
        << mode;
  }
  {
    TestGraph g;
    ValueId x = g.input({1, 4, 5, 5});
    EXPECT_EQ(blob_version(env, g.finish({g.node("Resize", {x, kNoValue, kNoValue, g.ints({1, 4, 10, 10})},
                                                 {1, 4, 10, 10}, {S("mode", "linear")})})),
              3u);
  }
}

TEST(OnednnGather, AnIndexOutsideTheTableFailsTheCallAndTheMethodGoesOn) {
  OnednnEnvironment env;
  TestGraph g;
  ValueId ids = g.index_input({3});
  const std::vector<uint8_t> graph = g.finish({g.node("Gather", {g.constant({4, 2}), ids}, {3, 2})});
  Result<Method> method = env.load(env.compile(graph, {"onednn"}).program);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  ASSERT_EQ(method->report().delegates.at(0).backend, "onednn");
  const auto run = [&](std::vector<int64_t> values) {
    int64_t shape[] = {3};
    DLTensor tensor{values.data(), {kDLCPU, 0}, 1, {kDLInt, 64, 1}, shape, nullptr, 0};
    EXPECT_TRUE(method->set_input(0, tensor).is_ok());
    return method->execute();
  };
  const Status outside = run({0, 4, 1});
  EXPECT_FALSE(outside.is_ok());
  EXPECT_THAT(outside.message(), ::testing::HasSubstr("index 4 at position 1 is outside [-4, 4)"));
  EXPECT_FALSE(run({-5, 0, 0}).is_ok());
  ASSERT_TRUE(run({-4, 3, 0}).is_ok());
  const float* out = static_cast<const float*>(method->output(0).data);
  const std::vector<float> table(out, out + 6);
  EXPECT_EQ(table[0], table[4]);  // -4 is row 0, as is the third index
  EXPECT_EQ(table[1], table[5]);
}

TEST(OnednnOwnReference, MaxAndMinBroadcast) {
  OnednnEnvironment env;
  const std::vector<float> a = {-1, 2, -3, 4, 0.5f, -6}, b = {0, 1, -5};
  for (const char* op : {"Max", "Min"}) {
    SCOPED_TRACE(op);
    TestGraph g;
    ValueId x = g.input({2, 3}), y = g.input({3});
    const std::vector<float> actual = run_on_onednn(env, g.finish({g.node(op, {x, y}, {2, 3})}), {a, b});
    ASSERT_EQ(actual.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const float expected = std::string(op) == "Max" ? std::max(a[i], b[i % 3]) : std::min(a[i], b[i % 3]);
      EXPECT_EQ(actual[i], expected) << i;
    }
  }
}

TEST(OnednnOwnReference, GeluOperatorBothApproximations) {
  OnednnEnvironment env;
  const std::vector<float> x = {-3, -1, -0.5f, 0, 0.25f, 1, 2, 4};
  for (const char* approximate : {"none", "tanh"}) {
    SCOPED_TRACE(approximate);
    TestGraph g(20);
    ValueId in = g.input({2, 4});
    const std::vector<float> actual = run_on_onednn(
        env, g.finish({g.node("Gelu", {in}, {2, 4}, {Attribute::String("approximate", approximate)})}), {x});
    ASSERT_EQ(actual.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double expected = std::string(approximate) == "none"
                                  ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))
                                  : 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      EXPECT_NEAR(actual[i], expected, 1e-5) << i;
    }
  }
}

// ---- Forms oneDNN must not take: they stay on portable, and the results stay right.

const std::vector<RefusedCase>& refused_cases() {
  static const std::vector<RefusedCase> cases = {
      {"GruWithClip", "GRU",
       [] {
         TestGraph g;
         ValueId x = g.input({3, 1, 2});
         return g.finish(g.node_outputs("GRU", {x, g.constant({1, 6, 2}), g.constant({1, 6, 2})}, {{3, 1, 1, 2}},
                                        {I("hidden_size", 2), F("clip", 0.5f)}));
       }},
      {"GatherOfComputedData", "Gather",
       [] {
         TestGraph g;
         ValueId table = g.input({6, 4});
         return g.finish({g.node("Gather", {table, g.index_input({3})}, {3, 4})});
       }},
      {"GatherAlongAxis1", "Gather",
       [] {
         TestGraph g;
         return g.finish({g.node("Gather", {g.constant({6, 4}), g.index_input({3})}, {6, 3}, {I("axis", 1)})});
       }},
      {"PadReflectAsLongAsTheAxis", "Pad",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 4, 4});
         return g.finish({g.node("Pad", {x, g.ints({0, 0, 4, 1, 0, 0, 1, 1})}, {1, 2, 9, 6}, {S("mode", "reflect")})});
       }},
      {"PadThatCrops", "Pad",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 4, 4});
         return g.finish({g.node("Pad", {x, g.ints({0, 0, -1, 1, 0, 0, 0, 1})}, {1, 2, 3, 6})});
       }},
      {"ConvTransposeRunTimeWeights", "ConvTranspose",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 3, 3}), w = g.input({2, 3, 2, 2});
         return g.finish({g.node("ConvTranspose", {x, w}, {1, 3, 6, 6}, {Is("strides", {2, 2})})});
       }},
      {"ConvTransposeRunTimeBias", "ConvTranspose",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 3, 3}), b = g.input({3});
         return g.finish({g.node("ConvTranspose", {x, g.constant({2, 3, 2, 2}), b}, {1, 3, 4, 4})});
       }},
      {"ConvTransposeOutputPaddingOfAStrideOrMore", "ConvTranspose",
       [] {  // output_padding 1 below the dilation but not the stride: oneDNN takes an
             // end padding above -stride only
         TestGraph g;
         ValueId x = g.input({1, 2, 4, 3});
         return g.finish({g.node("ConvTranspose", {x, g.constant({2, 3, 2, 3})}, {1, 3, 7, 8},
                                 {Is("dilations", {2, 2}), Is("output_padding", {1, 1})})});
       }},
      {"ConvTransposeOutputShapeAStrideLongerThanNatural", "ConvTranspose",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 3, 4, 4});
         return g.finish({g.node("ConvTranspose", {x, g.constant({3, 2, 3, 3})}, {1, 2, 11, 9},
                                 {Is("strides", {2, 2}), Is("output_shape", {11, 9})})});
       }},
      {"GemmTransA", "Gemm",
       [] {
         TestGraph g;
         ValueId a = g.input({8, 2});
         return g.finish({g.node("Gemm", {a, g.constant({8, 5})}, {2, 5}, {I("transA", 1)})});
       }},
      {"MatMulVector", "MatMul",
       [] {
         TestGraph g;
         ValueId a = g.input({4});
         return g.finish({g.node("MatMul", {a, g.constant({4, 3})}, {3})});
       }},
      {"ResizeLinearByAScaleThatIsNotTheSizeRatio", "Resize",
       [] {
         // 0.6 of 4 is 2 elements, but ONNX maps their coordinates by 0.6, not by 2 / 4.
         TestGraph g;
         ValueId x = g.input({1, 1, 2, 4});
         return g.finish(
             {g.node("Resize", {x, kNoValue, g.floats({1, 1, 0.6f, 0.6f})}, {1, 1, 1, 2}, {S("mode", "linear")})});
       }},
      {"ResizeNearestAsymmetricRoundPreferFloor3x", "Resize",
       [] {  // ONNX reads element 1 for output 2 (2 / 3 rounds up), oneDNN element 0
         return resize_nearest({1, 2, 3, 3}, {1, 2, 9, 9}, {1, 1, 3, 3}, "asymmetric", "round_prefer_floor");
       }},
      {"ResizeNearestAsymmetricRoundPreferCeil2x", "Resize",
       [] {
         return resize_nearest({1, 2, 3, 3}, {1, 2, 6, 6}, {1, 1, 2, 2}, "asymmetric", "round_prefer_ceil");
       }},
      {"ResizeNearestHalfPixelFloor2x", "Resize",
       [] {
         return resize_nearest({1, 2, 3, 3}, {1, 2, 6, 6}, {}, "half_pixel", "floor");
       }},
      {"ResizeNearestAlignCornersTwoToFive", "Resize",
       [] {  // output 2 sits at 0.5: ONNX rounds it down, oneDNN's 0.5 up (3 to 6 agrees)
         return resize_nearest({1, 2, 2, 2}, {1, 2, 5, 5}, {}, "align_corners", "round_prefer_floor");
       }},
      {"ResizeNearestAsymmetricFloorByOneAndAHalf", "Resize",
       [] {  // a scale that is not whole: ONNX reads 0, 0, 1, ...; oneDNN 0, 1, 1, ...
         return resize_nearest({1, 2, 4, 4}, {1, 2, 6, 6}, {1, 1, 1.5f, 1.5f}, "asymmetric", "floor");
       }},
      {"ResizeNearestHalveHalfPixelPreferFloor", "Resize",
       [] {  // ties: ONNX rounds them down, oneDNN up
         return resize_nearest({1, 2, 8, 8}, {1, 2, 4, 4}, {}, "half_pixel", "round_prefer_floor");
       }},
      {"ResizeNearestTfCropAndResize", "Resize",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 4, 4});
         return g.finish(
             {g.node("Resize", {x, g.floats({0, 0, 0, 0, 1, 1, 1, 1}), g.floats({1, 1, 2, 2})}, {1, 2, 8, 8},
                     {S("mode", "nearest"), S("coordinate_transformation_mode", "tf_crop_and_resize")})});
       }},
      {"SubBothBroadcast", "Sub",
       [] {
         TestGraph g;
         ValueId a = g.input({3, 1}), b = g.input({1, 4});
         return g.finish({g.node("Sub", {a, b}, {3, 4})});
       }},
      {"MaxOfThreeInputs", "Max",
       [] {  // variadic: only the two-input form is one primitive
         TestGraph g;
         ValueId a = g.input({3, 4}), b = g.input({3, 4}), c = g.input({3, 4});
         return g.finish({g.node("Max", {a, b, c}, {3, 4})});
       }},
      {"PowRunTimeExponent", "Pow",
       [] {
         TestGraph g;
         ValueId a = g.input({3, 4}), b = g.input({3, 4});
         ValueId positive = g.node("Add", {g.node("Abs", {a}, {3, 4}), g.scalar(0.5f)}, {3, 4});
         return g.finish({g.node("Pow", {positive, b}, {3, 4})});
       }},
      {"AveragePoolCeilCountingPads", "AveragePool",
       [] {
         TestGraph g;
         ValueId x = g.input({1, 2, 6, 6});
         return g.finish({g.node("AveragePool", {x}, {1, 2, 4, 4},
                                 {Is("kernel_shape", {3, 3}), Is("strides", {2, 2}), Is("pads", {1, 1, 1, 1}),
                                  I("count_include_pad", 1), I("ceil_mode", 1)})});
       }},
  };
  return cases;
}

class OnednnRefusalTest : public ::testing::TestWithParam<RefusedCase> {
 protected:
  OnednnEnvironment env_;
};

TEST_P(OnednnRefusalTest, LeavesTheNodeToPortable) { expect_left_to_portable(env_, "onednn", GetParam()); }

INSTANTIATE_TEST_SUITE_P(Refusals, OnednnRefusalTest, ::testing::ValuesIn(refused_cases()),
                         [](const ::testing::TestParamInfo<RefusedCase>& param) { return param.param.name; });

}  // namespace
}  // namespace plugrt::onednn_test
