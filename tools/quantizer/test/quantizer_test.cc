// SPDX-License-Identifier: Apache-2.0
// The quantizer's parts on values built here: observers, weight and activation
// parameters, the calibration directory's errors.
#include <cmath>
#include <filesystem>
#include <random>

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "calibration_samples.h"
#include "observers.h"
#include "qdq_writer.h"

namespace plugrt::quantizer {
namespace {

using ::testing::HasSubstr;

TensorObserver observed(const std::vector<float>& values) {
  TensorObserver observer;
  observer.observe(values);
  observer.observe_histogram(values);
  return observer;
}

std::vector<float> gaussian_with_outlier(size_t count) {
  std::mt19937 engine(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = normal(engine);
  values.push_back(40.0f);  // one outlier far out
  return values;
}

TEST(Observers, MinMaxIsTheRangeSeen) {
  const Range range = observed({-1.5f, 0.25f, 3.0f}).range(Observer::kMinMax, 99.99);
  EXPECT_EQ(range.min, -1.5f);
  EXPECT_EQ(range.max, 3.0f);
}

TEST(Observers, PercentileClipsTheOutlier) {
  const Range range = observed(gaussian_with_outlier(100000)).range(Observer::kPercentile, 99.9);
  EXPECT_GT(range.max, 3.0f);
  EXPECT_LT(range.max, 5.0f);
  EXPECT_LT(range.min, -3.0f);
}

TEST(Observers, EntropyClipsTheOutlierButKeepsTheBulk) {
  const Range range = observed(gaussian_with_outlier(100000)).range(Observer::kEntropy, 99.99);
  EXPECT_GT(range.max, 2.0f);
  EXPECT_LT(range.max, 20.0f);
}

TEST(Observers, DivergenceIsZeroWhenNothingIsLost) {
  std::vector<double> hist(256, 0.0);
  for (size_t i = 0; i < hist.size(); i += 2) hist[i] = 5;  // each pair of bins: one value
  EXPECT_NEAR(clipping_divergence(hist, 256, 128), 0.0, 1e-12);
}

TEST(ActivationParams, Uint8HoldsZeroExactly) {
  const ActivationParams p = activation_params(Range{-1.0f, 3.0f}, false);
  EXPECT_FLOAT_EQ(p.scale, 4.0f / 255);
  EXPECT_EQ(p.zero_point, 64);
  EXPECT_EQ(activation_params(Range{0.0f, 6.0f}, false).zero_point, 0);  // a Relu's output
  EXPECT_EQ(activation_params(Range{0.0f, 6.0f}, true).zero_point, -128);
  EXPECT_EQ(activation_params(Range{0.0f, 0.0f}, false).scale, 1.0f);  // constant zero
}

TEST(QuantizeWeights, SymmetricPerOutputChannel) {
  // Two channels along axis 1 of a [2, 2] matrix (MatMul's B: [K, N]).
  const QuantizedWeights q = quantize_weights(FloatConstant{{1.0f, -0.5f, -2.0f, 0.25f}, {2, 2}}, 1);
  EXPECT_THAT(q.scales, ::testing::ElementsAre(2.0f / 127, 0.5f / 127));
  EXPECT_THAT(q.values, ::testing::ElementsAre(64, -127, -127, 64));
}

TEST(CalibrationSamples, ErrorsNameTheDirectoryAndTheReason) {
  EXPECT_THAT(read_samples("", {"x"}).status().message(), HasSubstr("no calibration directory"));
  EXPECT_THAT(read_samples("no/such/dir", {"x"}).status().message(), HasSubstr("no/such/dir: not a calibration"));
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("plugrt_quantizer_empty_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EXPECT_THAT(read_samples(dir.string(), {"x"}).status().message(), HasSubstr("holds no .npy file"));
  EXPECT_THAT(read_samples(dir.string(), {"a", "b"}).status().message(), HasSubstr("holds no sample directory"));
  std::filesystem::create_directories(dir / "sample0");
  EXPECT_THAT(read_samples(dir.string(), {"a", "b"}).status().message(), HasSubstr("has no a.npy for input 'a'"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace plugrt::quantizer
