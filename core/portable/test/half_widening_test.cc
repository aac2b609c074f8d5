// SPDX-License-Identifier: Apache-2.0
// float16 and bfloat16 nodes on the float32 kernels (half_widening.h): each result is
// the float32 kernel's on the widened values, rounded once to the node's type; a node
// that fails for another reason keeps its reason.
#include <optional>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"
#include "plugrt/half_float.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::HasSubstr;

/// `values` rounded to `dtype` (float16 or bfloat16): the tensor, and the float32 values
/// it holds.
struct Half {
  TestTensor tensor;
  TestTensor widened;
};

Half half(DType dtype, std::vector<int64_t> shape, const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  std::vector<float> exact;
  for (float v : values) {
    bits.push_back(dtype == DType::kFloat16 ? float_to_float16(v) : float_to_bfloat16(v));
    exact.push_back(dtype == DType::kFloat16 ? float16_to_float(bits.back()) : bfloat16_to_float(bits.back()));
  }
  return {typed_tensor(dtype, shape, bits), TestTensor::f32(shape, exact)};
}

/// Runs `spec` with half tensors, and again in float32 on the values they hold; expects
/// the half outputs to be the float32 ones rounded to `dtype`, bit for bit.
void expect_float32_rounded_once(NodeSpec spec, const std::vector<std::optional<Half>>& inputs, DType dtype) {
  NodeSpec wide = spec;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    spec.inputs.push_back(inputs[i]->tensor);
    wide.inputs.push_back(inputs[i]->widened);
  }
  for (OutputSpec& out : wide.outputs) out.dtype = DType::kFloat32;
  for (OutputSpec& out : spec.outputs) out.dtype = dtype;
  NodeRun run = run_node(spec);
  NodeRun reference = run_node(wide);
  ASSERT_TRUE(run.ok()) << run.error;
  ASSERT_TRUE(reference.ok()) << reference.error;
  ASSERT_EQ(run.outputs.size(), reference.outputs.size());
  for (size_t o = 0; o < run.outputs.size(); ++o) {
    const std::vector<uint16_t> got = values_of<uint16_t>(run.outputs[o]);
    const std::vector<float> want = reference.outputs[o].floats();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const uint16_t rounded = dtype == DType::kFloat16 ? float_to_float16(want[i]) : float_to_bfloat16(want[i]);
      EXPECT_EQ(got[i], rounded) << "output " << o << " element " << i;
    }
  }
}

TEST(HalfWidening, ConvFloat16WithConstantWeights) {
  const DType f16 = DType::kFloat16;
  Half w = half(f16, {3, 2, 3, 3}, random_floats(54, 2));
  Half b = half(f16, {3}, random_floats(3, 3));
  w.tensor.constant = w.widened.constant = b.tensor.constant = b.widened.constant = true;
  expect_float32_rounded_once({"Conv", {Attribute::Ints("pads", {1, 1, 1, 1})}, {}, {{f16, {1, 3, 5, 5}}}},
                              {half(f16, {1, 2, 5, 5}, random_floats(50, 1)), w, b}, f16);
}

TEST(HalfWidening, MatMulBFloat16OfTwoRunTimeValues) {
  const DType bf16 = DType::kBFloat16;
  expect_float32_rounded_once({"MatMul", {}, {}, {{bf16, {2, 4, 5}}}},
                              {half(bf16, {2, 4, 6}, random_floats(48, 4)), half(bf16, {6, 5}, random_floats(30, 5))},
                              bf16);
}

TEST(HalfWidening, GlobalAveragePoolAndLayerNormalizationFloat16) {
  const DType f16 = DType::kFloat16;
  expect_float32_rounded_once({"GlobalAveragePool", {}, {}, {{f16, {1, 3, 1, 1}}}},
                              {half(f16, {1, 3, 4, 4}, random_floats(48, 6))}, f16);
  Half scale = half(f16, {8}, random_floats(8, 8));
  Half bias = half(f16, {8}, random_floats(8, 9));
  expect_float32_rounded_once({"LayerNormalization", {Attribute::Int("axis", -1)}, {}, {{f16, {2, 3, 8}}}},
                              {half(f16, {2, 3, 8}, random_floats(48, 7)), scale, bias}, f16);
}

TEST(HalfWidening, ANodeThatFailsForAnotherReasonKeepsItsReason) {
  // The weights' channels do not match the input's: refused in float32 as in float16.
  const DType f16 = DType::kFloat16;
  NodeSpec spec{"Conv", {}, {}, {{f16, {1, 3, 3, 3}}}};
  spec.inputs.push_back(half(f16, {1, 2, 5, 5}, random_floats(50, 1)).tensor);
  spec.inputs.push_back(half(f16, {3, 4, 3, 3}, random_floats(108, 2)).tensor);
  NodeRun run = run_node(spec);
  EXPECT_FALSE(run.ok());
  EXPECT_THAT(run.error, HasSubstr("Conv"));
  EXPECT_THAT(run.error, HasSubstr("float16"));
}

}  // namespace
}  // namespace plugrt::portable::testing
