// SPDX-License-Identifier: Apache-2.0
// Blocked integer GEMM: C += A * B^T on int16 rows, int32 sums.
//
// Both operands run along k, so every output is a dot product of two contiguous int16
// rows: the form compilers turn into a widening multiply-add that sums adjacent pairs
// (pmaddwd on x86, smlal on Arm). A register tile of kRows x kCols dot products shares
// the loads of its rows; the k range is cut into blocks that keep the panel of B in
// cache and bound every int32 partial sum (see int_gemm.h), which is then added to C
// with wrapping (uint32) arithmetic. This file is built with the vectorizer's dynamic
// cost model (CMakeLists.txt): the cheaper default at -O2 leaves these loops scalar.
#include "int_gemm.h"

#include <algorithm>

namespace plugrt::portable {

namespace {

constexpr int64_t kBlockK = 2048;  // at most 32768: 32768 * 255 * 255 < 2^31
constexpr int64_t kBlockM = 64;

/// The 2 x 4 dot products of rows a0, a1 with rows b0..b3 over [0, k).
void tile_2x4(const int16_t* __restrict a0, const int16_t* __restrict a1, const int16_t* __restrict b0,
              const int16_t* __restrict b1, const int16_t* __restrict b2, const int16_t* __restrict b3, int64_t k,
              int32_t* __restrict sums) {
  int32_t s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
  for (int64_t p = 0; p < k; ++p) {
    s00 += a0[p] * b0[p];
    s01 += a0[p] * b1[p];
    s02 += a0[p] * b2[p];
    s03 += a0[p] * b3[p];
    s10 += a1[p] * b0[p];
    s11 += a1[p] * b1[p];
    s12 += a1[p] * b2[p];
    s13 += a1[p] * b3[p];
  }
  sums[0] = s00;
  sums[1] = s01;
  sums[2] = s02;
  sums[3] = s03;
  sums[4] = s10;
  sums[5] = s11;
  sums[6] = s12;
  sums[7] = s13;
}

int32_t dot(const int16_t* __restrict a, const int16_t* __restrict b, int64_t k) {
  int32_t sum = 0;
  for (int64_t p = 0; p < k; ++p) sum += a[p] * b[p];
  return sum;
}

void add(uint32_t* c, int32_t sum) { *c += static_cast<uint32_t>(sum); }

}  // namespace

void int_gemm_nt(int64_t m, int64_t n, int64_t k, const int16_t* a, const int16_t* b, uint32_t* c, int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  const int64_t ld = int_gemm_padded_k(k);
  for (int64_t k0 = 0; k0 < ld; k0 += kBlockK) {
    const int64_t depth = std::min(kBlockK, ld - k0);
    for (int64_t i0 = 0; i0 < m; i0 += kBlockM) {
      const int64_t i1 = std::min(m, i0 + kBlockM);
      int64_t j = 0;
      for (; j + 4 <= n; j += 4) {
        const int16_t* b0 = b + j * ld + k0;
        int64_t i = i0;
        for (; i + 2 <= i1; i += 2) {
          const int16_t* a0 = a + i * ld + k0;
          int32_t sums[8];
          tile_2x4(a0, a0 + ld, b0, b0 + ld, b0 + 2 * ld, b0 + 3 * ld, depth, sums);
          for (int t = 0; t < 4; ++t) {
            add(&c[i * ldc + j + t], sums[t]);
            add(&c[(i + 1) * ldc + j + t], sums[4 + t]);
          }
        }
        for (; i < i1; ++i) {
          for (int t = 0; t < 4; ++t) add(&c[i * ldc + j + t], dot(a + i * ld + k0, b0 + t * ld, depth));
        }
      }
      for (; j < n; ++j) {
        for (int64_t i = i0; i < i1; ++i) add(&c[i * ldc + j], dot(a + i * ld + k0, b + j * ld + k0, depth));
      }
    }
  }
}

}  // namespace plugrt::portable
