// SPDX-License-Identifier: Apache-2.0
// The signal kernels (window.cc, spectral.cc, mel_weight_matrix.cc) against hand-computed
// results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr float kTolerance = 1e-5f;

NodeRun window(const char* op, int64_t size, std::vector<Attribute> attrs = {}) {
  return run_node({op, std::move(attrs), {TestTensor::i64({}, {size})}, {f32_out({size})}});
}

TEST(WindowKernels, PeriodicAndSymmetric) {
  NodeRun hann = window("HannWindow", 4);
  ASSERT_TRUE(hann.ok()) << hann.error;
  EXPECT_THAT(hann.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{0.0f, 0.5f, 1.0f, 0.5f}));
  NodeRun hamming = window("HammingWindow", 4);
  ASSERT_TRUE(hamming.ok()) << hamming.error;
  EXPECT_THAT(hamming.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), std::vector<float>{0.08695652f, 0.54347826f, 1.0f, 0.54347826f}));
  NodeRun blackman = window("BlackmanWindow", 3, {Attribute::Int("periodic", 0)});
  ASSERT_TRUE(blackman.ok()) << blackman.error;
  EXPECT_THAT(blackman.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{0.0f, 1.0f, 0.0f}));
}

TEST(WindowKernels, CheckTheSizeAgainstTheOutput) {
  NodeRun run = run_node({"HannWindow", {}, {TestTensor::i64({}, {4})}, {f32_out({5})}});
  EXPECT_THAT(run.error, HasSubstr("[5]"));
}

TEST(DftKernel, ForwardInverseAndOnesided) {
  const TestTensor x = TestTensor::f32({1, 4, 1}, {1, 2, 3, 4});
  NodeRun forward = run_node({"DFT", {}, {x}, {f32_out({1, 4, 2})}});
  ASSERT_TRUE(forward.ok()) << forward.error;
  const std::vector<float> spectrum = {10, 0, -2, 2, -2, 0, -2, -2};
  EXPECT_THAT(forward.outputs[0].floats(), Pointwise(FloatNear(kTolerance), spectrum));
  NodeRun inverse =
      run_node({"DFT", {Attribute::Int("inverse", 1)}, {TestTensor::f32({1, 4, 2}, spectrum)}, {f32_out({1, 4, 2})}});
  ASSERT_TRUE(inverse.ok()) << inverse.error;
  EXPECT_THAT(inverse.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), std::vector<float>{1, 0, 2, 0, 3, 0, 4, 0}));
  NodeRun onesided = run_node({"DFT", {Attribute::Int("onesided", 1)}, {x}, {f32_out({1, 3, 2})}});
  ASSERT_TRUE(onesided.ok()) << onesided.error;
  EXPECT_THAT(onesided.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{10, 0, -2, 2, -2, 0}));
}

TEST(StftKernel, TransformsEachFrame) {
  // Frames [1, 2] and [3, 4], 2 points each: onesided (the default) keeps 2 / 2 + 1 = 2 bins.
  NodeRun run = run_node(
      {"STFT",
       {},
       {TestTensor::f32({1, 4, 1}, {1, 2, 3, 4}), TestTensor::i64({}, {2}), std::nullopt, TestTensor::i64({}, {2})},
       {f32_out({1, 2, 2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{3, 0, -1, 0, 7, 0, -1, 0}));
}

TEST(MelWeightMatrixKernel, BuildsTriangularFilters) {
  // 2 mel bins over a 16-point DFT at 8 kHz, 0 to 4000 Hz: points at spectrum bins 0, 0, 2, 4.
  NodeRun run = run_node({"MelWeightMatrix",
                          {},
                          {TestTensor::i64({}, {2}), TestTensor::i64({}, {16}), TestTensor::i64({}, {8000}),
                           TestTensor::f32({}, {0}), TestTensor::f32({}, {4000})},
                          {f32_out({9, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  std::vector<float> expected(18, 0.0f);
  const std::vector<float> top = {1, 0, 0.5f, 0.5f, 0, 1, 0, 0.5f};
  std::copy(top.begin(), top.end(), expected.begin());
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), expected));
}

}  // namespace
}  // namespace plugrt::portable::testing
