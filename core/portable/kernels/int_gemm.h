// SPDX-License-Identifier: Apache-2.0
// The portable backend's integer matrix multiplication, shared by MatMulInteger,
// ConvInteger, QLinearMatMul and QLinearConv.
#ifndef PLUGRT_PORTABLE_KERNELS_INT_GEMM_H_
#define PLUGRT_PORTABLE_KERNELS_INT_GEMM_H_

#include <cstdint>

namespace plugrt::portable {

/// Operands' rows are padded to a multiple of this many elements (with zeros).
inline constexpr int64_t kIntGemmKStep = 8;

/// `k` rounded up to a multiple of kIntGemmKStep: the row length of both operands.
inline int64_t int_gemm_padded_k(int64_t k) { return (k + kIntGemmKStep - 1) / kIntGemmKStep * kIntGemmKStep; }

/// C (m x n, row stride ldc) += A * B^T, with A m x k and B n x k, both int16 rows of
/// int_gemm_padded_k(k) elements (the padding zero). Every operand must lie in
/// [-255, 255] (an 8-bit value minus an 8-bit zero point): products are then exact in
/// int32, sums of up to 32768 of them too, and C's sums wrap as int32 arithmetic would.
/// Allocates nothing.
void int_gemm_nt(int64_t m, int64_t n, int64_t k, const int16_t* a, const int16_t* b, uint32_t* c, int64_t ldc);

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_KERNELS_INT_GEMM_H_
