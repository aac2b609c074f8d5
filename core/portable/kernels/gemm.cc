// SPDX-License-Identifier: Apache-2.0
// Blocked single-precision GEMM: C += alpha * A * B.
//
// The k and n dimensions are cut into blocks that keep a panel of B in cache; within a
// block, a register tile of kRows x kCols accumulators walks the k range, reading a
// short row of B and one element of A per row and step. The fixed-size inner loops
// let the compiler keep the tile in vector registers.
#include "gemm.h"

#include <algorithm>

namespace plugrt::portable {

namespace {

constexpr int kRows = 4;
constexpr int kCols = 8;
constexpr int64_t kBlockK = 128;
constexpr int64_t kBlockN = 256;

template <bool kTransA, bool kTransB>
struct Operands {
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float at(int64_t i, int64_t p) const { return kTransA ? a[p * lda + i] : a[i * lda + p]; }
  float bt(int64_t p, int64_t j) const { return kTransB ? b[j * ldb + p] : b[p * ldb + j]; }
};

/// A full kRows x kCols tile of C at (i, j), over k in [k0, k1).
template <bool kTransA, bool kTransB>
void full_tile(const Operands<kTransA, kTransB>& op, int64_t i, int64_t j, int64_t k0, int64_t k1, float alpha,
               float* __restrict c, int64_t ldc) {
  float acc[kRows][kCols] = {};
  for (int64_t p = k0; p < k1; ++p) {
    float row[kCols];
    for (int t = 0; t < kCols; ++t) row[t] = op.bt(p, j + t);
    for (int r = 0; r < kRows; ++r) {
      const float av = op.at(i + r, p);
      for (int t = 0; t < kCols; ++t) acc[r][t] += av * row[t];
    }
  }
  for (int r = 0; r < kRows; ++r) {
    float* __restrict out = c + (i + r) * ldc + j;
    for (int t = 0; t < kCols; ++t) out[t] += alpha * acc[r][t];
  }
}

/// A partial tile (rows x cols, at most kRows x kCols) at the matrix edges.
template <bool kTransA, bool kTransB>
void edge_tile(const Operands<kTransA, kTransB>& op, int64_t i, int64_t j, int rows, int cols, int64_t k0, int64_t k1,
               float alpha, float* c, int64_t ldc) {
  float acc[kRows][kCols] = {};
  for (int64_t p = k0; p < k1; ++p) {
    for (int r = 0; r < rows; ++r) {
      const float av = op.at(i + r, p);
      for (int t = 0; t < cols; ++t) acc[r][t] += av * op.bt(p, j + t);
    }
  }
  for (int r = 0; r < rows; ++r) {
    for (int t = 0; t < cols; ++t) c[(i + r) * ldc + j + t] += alpha * acc[r][t];
  }
}

template <bool kTransA, bool kTransB>
void gemm_blocked(int64_t m, int64_t n, int64_t k, float alpha, MatrixRef a, MatrixRef b, float* c, int64_t ldc) {
  const Operands<kTransA, kTransB> op{a.data, a.stride, b.data, b.stride};
  for (int64_t j0 = 0; j0 < n; j0 += kBlockN) {
    const int64_t j1 = std::min(n, j0 + kBlockN);
    for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
      const int64_t k1 = std::min(k, k0 + kBlockK);
      for (int64_t i = 0; i < m; i += kRows) {
        const int rows = static_cast<int>(std::min<int64_t>(kRows, m - i));
        for (int64_t j = j0; j < j1; j += kCols) {
          const int cols = static_cast<int>(std::min<int64_t>(kCols, j1 - j));
          if (rows == kRows && cols == kCols) {
            full_tile(op, i, j, k0, k1, alpha, c, ldc);
          } else {
            edge_tile(op, i, j, rows, cols, k0, k1, alpha, c, ldc);
          }
        }
      }
    }
  }
}

}  // namespace

void gemm_accumulate(int64_t m, int64_t n, int64_t k, float alpha, MatrixRef a, MatrixRef b, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  if (a.transposed) {
    if (b.transposed) return gemm_blocked<true, true>(m, n, k, alpha, a, b, c, ldc);
    return gemm_blocked<true, false>(m, n, k, alpha, a, b, c, ldc);
  }
  if (b.transposed) return gemm_blocked<false, true>(m, n, k, alpha, a, b, c, ldc);
  return gemm_blocked<false, false>(m, n, k, alpha, a, b, c, ldc);
}

}  // namespace plugrt::portable
