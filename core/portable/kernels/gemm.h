// SPDX-License-Identifier: Apache-2.0
// The portable backend's one matrix multiplication routine, shared by Gemm, MatMul,
// Conv and ConvTranspose.
#ifndef PLUGRT_PORTABLE_KERNELS_GEMM_H_
#define PLUGRT_PORTABLE_KERNELS_GEMM_H_

#include <cstdint>

namespace plugrt::portable {

/// A row-major float matrix operand: element (r, c) is data[r * stride + c], or
/// data[c * stride + r] when `transposed`.
struct MatrixRef {
  const float* data;
  int64_t stride;
  bool transposed = false;
};

/// C += alpha * A * B, with A m x k, B k x n and C m x n (row stride ldc). C must not
/// overlap A or B. Blocked for the cache; allocates nothing.
void gemm_accumulate(int64_t m, int64_t n, int64_t k, float alpha, MatrixRef a, MatrixRef b, float* c, int64_t ldc);

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_KERNELS_GEMM_H_
