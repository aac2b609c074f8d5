// SPDX-License-Identifier: Apache-2.0
// One QLinearConv or QLinearMatMul node with seeded weights, and the check the fast
// backends' quantized tests make of it: taken whole by the backend, and equal to the
// portable kernels (ONNX's reference arithmetic) within one quantum in at most 1 of
// 1,000 elements (a backend that requantizes in float32 rather than double may round a
// product within a float32 rounding of a half the other way).
#ifndef PLUGRT_TEST_BACKEND_SUPPORT_QUANTIZED_CASES_H_
#define PLUGRT_TEST_BACKEND_SUPPORT_QUANTIZED_CASES_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backend_test_support.h"
#include "test_graph.h"

namespace plugrt::backend_test {

/// A QLinearConv or QLinearMatMul graph's settings; the defaults are a 3x3 uint8 conv.
struct Quantized {
  bool matmul = false;
  DType activation = DType::kUInt8;  // x's type
  DType output = DType::kUInt8;      // y's type
  DType weight = DType::kInt8;
  Ints x = {1, 8, 9, 9}, w = {16, 8, 3, 3}, y = {1, 16, 9, 9};
  std::vector<Attribute> attributes = {Attribute::Ints("pads", {1, 1, 1, 1})};
  bool per_channel = false;
  bool bias = true;
  int weight_zero_point = 0;
  int x_zero_point = 3, y_zero_point = 7;
  float x_scale = 0.05f, y_scale = 0.11f;
};

/// A QLinearMatMul case: A [6, 40] by B [40, 24], the other settings the defaults.
Quantized matmul_case();

/// The number of elements of `shape`.
int64_t element_count(const Ints& shape);

/// `n` bytes uniform in [0, 255].
std::vector<uint8_t> random_bytes(int64_t n, std::mt19937& generator);

/// The graph of `q`: input x, output y, constants drawn from a fixed seed.
std::vector<uint8_t> quantized_graph(const Quantized& q);

/// Runs `program` on one input tensor of `dtype` and `shape` (its bytes) and returns the
/// first output's bytes. With `backend` not empty, expects every partition on it.
std::vector<uint8_t> run_bytes(PluginEnvironment& env, const std::vector<uint8_t>& program, std::vector<uint8_t> input,
                               DLDataType dtype, Ints shape, const std::string& backend = "");

/// Runs `program` on one input of `q`'s type (the same bytes for the same seed) and
/// returns the output's bytes. With `backend` not empty, expects every partition on it.
std::vector<uint8_t> run_quantized(PluginEnvironment& env, const std::vector<uint8_t>& program, const Quantized& q,
                                   uint32_t seed, const std::string& backend = "");

/// `q` compiled for `backend` alone is taken whole and matches portable as above.
/// Returns the number of elements that differ by one quantum.
int64_t expect_quantized_matches_portable(PluginEnvironment& env, const std::string& backend, const Quantized& q);

/// `q` compiled for `backend` and portable leaves `op` to portable, and runs as on
/// portable alone.
void expect_quantized_left_to_portable(PluginEnvironment& env, const std::string& backend, const Quantized& q,
                                       const std::string& op);

}  // namespace plugrt::backend_test

#endif  // PLUGRT_TEST_BACKEND_SUPPORT_QUANTIZED_CASES_H_
