// SPDX-License-Identifier: Apache-2.0
// QuantizeLinear and DequantizeLinear as the fast backends' quantized tests check them:
// bit for bit as the portable kernels (ONNX's arithmetic), ties and saturation included,
// and a quantized residual block as `plugrt quantize` leaves it, taken as one partition.
#ifndef PLUGRT_TEST_BACKEND_SUPPORT_QUANTIZE_LINEAR_CASES_H_
#define PLUGRT_TEST_BACKEND_SUPPORT_QUANTIZE_LINEAR_CASES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "backend_test_support.h"
#include "test_graph.h"

namespace plugrt::backend_test {

/// x (float32, [1, n]) -> QuantizeLinear(scale, zero point of `dtype`) -> y.
std::vector<uint8_t> quantize_graph(int64_t n, float scale, DType dtype, int zero_point);

/// The bytes of float32 values.
std::vector<uint8_t> float_bytes(const std::vector<float>& values);

/// QuantizeLinear of ties (x / scale exactly k + 0.5: `scale` should be a few mantissa
/// bits, so that they are exact), their neighbours, saturation both ways, infinities and
/// NaN, compiled for `backend` alone: taken, equal to portable and to the values ONNX
/// defines.
void expect_quantize_exact(PluginEnvironment& env, const std::string& backend, DType dtype, int zero_point,
                           float scale);

/// Every value of `dtype` through DequantizeLinear, compiled for `backend` alone: taken,
/// and bit for bit portable's (q - zero point) * scale.
void expect_dequantize_exact(PluginEnvironment& env, const std::string& backend, DType dtype, int zero_point,
                             float scale);

/// The model input's QuantizeLinear, a QLinearConv, DequantizeLinear, a float MaxPool
/// and a residual Add between DequantizeLinear and QuantizeLinear, and the final
/// DequantizeLinear: one partition on `backend`, within one quantum of portable (the
/// convolution's float32 requantization) in at most 1 output of 100.
void expect_quantized_block_is_one_partition(PluginEnvironment& env, const std::string& backend);

/// x [n, 8] (n in 1..64) -> QuantizeLinear -> QLinearMatMul (per-column weight scales)
/// -> DequantizeLinear -> y [n, 4], compiled for `backend` alone: taken, and run at n =
/// 1, 3, 64 and 3 again within one quantum (the matmul's float32 requantization) of
/// portable's program, with no more than 1 output in 20 differing.
void expect_varying_quantized_matches_portable(PluginEnvironment& env, const std::string& backend);

}  // namespace plugrt::backend_test

#endif  // PLUGRT_TEST_BACKEND_SUPPORT_QUANTIZE_LINEAR_CASES_H_
