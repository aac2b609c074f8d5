// SPDX-License-Identifier: Apache-2.0
// The kit's op samples: one node of each op kind a backend commonly takes, with constant
// weights, whose results are compared with the built-in portable backend's.
#ifndef PLUGRT_SDK_CONTRACT_OP_SAMPLES_H_
#define PLUGRT_SDK_CONTRACT_OP_SAMPLES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kit_samples.h"
#include "plugrt/status.h"

namespace plugrt::sdk::testing::kit {

/// One node of each op kind a backend commonly takes, its weights constant (as a model's
/// are), and the shapes of its inputs and output.
struct OpSample {
  std::string description;
  std::vector<uint8_t> graph;
  std::vector<std::vector<int64_t>> input_shapes;
  std::vector<int64_t> output_shape;
};

/// Values from a fixed seed, from -1 to 1.
std::vector<float> seeded_values(size_t count, uint32_t seed);
/// Gemm, MatMul, Conv, pooling, Softmax, element-wise: the samples the README lists.
std::vector<OpSample> op_samples();

/// How close a backend's element must be to the portable backend's: tight enough that a
/// dropped bias or a result off by 0.2% fails, loose enough for another order of summation.
constexpr float kAbsoluteTolerance = 1e-5f;
constexpr float kRelativeTolerance = 1e-4f;

/// Runs the sample on the built-in portable backend: its output, or why not.
Result<std::vector<float>> portable_result(const OpSample& sample, const std::vector<OwnedTensor*>& inputs);

}  // namespace plugrt::sdk::testing::kit

#endif  // PLUGRT_SDK_CONTRACT_OP_SAMPLES_H_
