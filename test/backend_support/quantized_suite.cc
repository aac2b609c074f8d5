// SPDX-License-Identifier: Apache-2.0
// The quantized checks every backend with int8 kernels passes the same way
// (quantize_linear_cases.h), parameterised by the backend: QuantizeLinear and
// DequantizeLinear bit for bit as portable, a quantized residual block as one partition,
// and a quantized graph whose dimensions vary. Each such backend's test instantiates
// QuantizedSuite with its BackendUnderTest.
#include <gtest/gtest.h>

#include "backend_suite.h"
#include "quantize_linear_cases.h"

namespace plugrt::backend_test {

// Scales of a few mantissa bits whose reciprocals are not floats: x * (1 / scale) would
// miss ties that x / scale hits.
TEST_P(QuantizedSuite, QuantizeLinearUint8TiesAndSaturation) {
  PluginEnvironment env(GetParam().plugin_file);
  expect_quantize_exact(env, GetParam().name, DType::kUInt8, 3, 0.75f);
}

TEST_P(QuantizedSuite, QuantizeLinearInt8TiesAndSaturation) {
  PluginEnvironment env(GetParam().plugin_file);
  expect_quantize_exact(env, GetParam().name, DType::kInt8, static_cast<uint8_t>(-5), 0.375f);
}

TEST_P(QuantizedSuite, DequantizeLinearUint8) {
  PluginEnvironment env(GetParam().plugin_file);
  expect_dequantize_exact(env, GetParam().name, DType::kUInt8, 131, 0.0173f);
}

TEST_P(QuantizedSuite, DequantizeLinearInt8) {
  PluginEnvironment env(GetParam().plugin_file);
  expect_dequantize_exact(env, GetParam().name, DType::kInt8, static_cast<uint8_t>(-7), 0.0291f);
}

TEST_P(QuantizedSuite, QuantizedBlockIsOnePartition) {
  PluginEnvironment env(GetParam().plugin_file);
  expect_quantized_block_is_one_partition(env, GetParam().name);
}

/// Lowered or built again per shape (the varying-shape blob), quantized nodes included.
TEST_P(QuantizedSuite, DimensionsThatVary) {
  PluginEnvironment env(GetParam().plugin_file);
  expect_varying_quantized_matches_portable(env, GetParam().name);
}

}  // namespace plugrt::backend_test
