// SPDX-License-Identifier: Apache-2.0
#include "src/recurrent_steps.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace plugrt::onednn {

namespace {

// The loops, built for AVX-512 and AVX2 with FMA too (the default build is SSE2) and
// picked when the library loads.
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define PLUGRT_ONEDNN_RECURRENT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#ifndef PLUGRT_ONEDNN_RECURRENT_CLONES
#define PLUGRT_ONEDNN_RECURRENT_CLONES
#endif

constexpr size_t kLanes = 16;
/// 16 floats: one AVX-512 register, two AVX2 ones, four SSE2 ones.
using Vec = float __attribute__((vector_size(kLanes * sizeof(float))));
/// The weights' columns in panels this wide (the last one narrower), each [depth, width]
/// and dense: a pass over a panel reads it in order.
constexpr size_t kPanel = 8 * kLanes;

// Unaligned loads and stores. (Passed by pointer: a vector returned by value would have
// another calling convention in each build of a caller.)
inline void load(Vec* v, const float* p) { std::memcpy(v, p, sizeof *v); }
inline void store(float* p, const Vec& v) { std::memcpy(p, &v, sizeof v); }

/// c[r][j] += the sum over k < depth of a[r][k] * w[k][j], for kRows rows and the
/// kVecs * 16 columns from c and w: each sum stays in a register through all of k, and
/// w is read once for all the rows.
template <size_t kRows, size_t kVecs>
inline __attribute__((always_inline)) void tile(const float* a, size_t lda, const float* w, size_t ldw, size_t depth,
                                                float* c, size_t ldc) {
  // The loops over rows and vectors unrolled, so that the sums live in registers.
  Vec sum[kRows][kVecs];
#pragma GCC unroll 8
  for (size_t r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
    for (size_t v = 0; v < kVecs; ++v) load(&sum[r][v], c + r * ldc + v * kLanes);
  }
  for (size_t k = 0; k < depth; ++k) {
    Vec row[kVecs];
#pragma GCC unroll 8
    for (size_t v = 0; v < kVecs; ++v) load(&row[v], w + k * ldw + v * kLanes);
#pragma GCC unroll 8
    for (size_t r = 0; r < kRows; ++r) {
      const float s = a[r * lda + k];
#pragma GCC unroll 8
      for (size_t v = 0; v < kVecs; ++v) sum[r][v] += s * row[v];
    }
  }
#pragma GCC unroll 8
  for (size_t r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
    for (size_t v = 0; v < kVecs; ++v) store(c + r * ldc + v * kLanes, sum[r][v]);
  }
}

/// tile() across one panel of `cols` columns for kRows rows: 8 sums at a time (enough chains to
/// keep the multiply-adds busy for one row), then one vector, then the last columns.
template <size_t kRows>
inline __attribute__((always_inline)) void row_block(const float* a, size_t lda, const float* w, size_t cols,
                                                     size_t depth, float* c, size_t ldc) {
  constexpr size_t kWide = 8 / kRows;
  size_t j = 0;
  for (; j + kWide * kLanes <= cols; j += kWide * kLanes) tile<kRows, kWide>(a, lda, w + j, cols, depth, c + j, ldc);
  for (; j + kLanes <= cols; j += kLanes) tile<kRows, 1>(a, lda, w + j, cols, depth, c + j, ldc);
  for (; j < cols; ++j) {
    for (size_t r = 0; r < kRows; ++r) {
      float sum = c[r * ldc + j];
      for (size_t k = 0; k < depth; ++k) sum += a[r * lda + k] * w[k * cols + j];
      c[r * ldc + j] = sum;
    }
  }
}

/// c[r][:cols] += a[r][:depth] times w ([depth, cols] in panels: pack_lstm_weights), for
/// `rows` rows of a and c (lda and ldc floats apart).
PLUGRT_ONEDNN_RECURRENT_CLONES void accumulate_products(const float* a, size_t lda, size_t rows, const float* w,
                                                        size_t depth, size_t cols, float* c, size_t ldc) {
  for (size_t first = 0; first < cols; first += kPanel) {
    const size_t width = std::min(kPanel, cols - first);
    const float* panel = w + first * depth;
    float* out = c + first;
    size_t r = 0;
    for (; r + 4 <= rows; r += 4) row_block<4>(a + r * lda, lda, panel, width, depth, out + r * ldc, ldc);
    switch (rows - r) {
      case 3: row_block<3>(a + r * lda, lda, panel, width, depth, out + r * ldc, ldc); break;
      case 2: row_block<2>(a + r * lda, lda, panel, width, depth, out + r * ldc, ldc); break;
      case 1: row_block<1>(a + r * lda, lda, panel, width, depth, out + r * ldc, ldc); break;
      default: break;
    }
  }
}

/// tanh(x) as a ratio of odd and even polynomials in x, x clamped to ±7.9053 (where
/// float tanh is ±1): the minimax coefficients Eigen uses for float. Within 4e-7 of tanh
/// everywhere, relative error near 1 ulp near 0; NaN stays NaN.
inline float rational_tanh(float x) {
  constexpr float kClamp = 7.90531110763549805f;
  x = std::min(std::max(x, -kClamp), kClamp);
  const float x2 = x * x;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 - 8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  return x * p / q;
}

/// The logistic function through tanh: within 3e-7 of 1 / (1 + e^-x).
inline float rational_sigmoid(float x) { return 0.5f + 0.5f * rational_tanh(0.5f * x); }

/// One row of one step: the summed pre-activations `gates` ([4, hidden]: i, f, c, o)
/// update the cell state `c` and write the hidden state `h`, as ONNX's LSTM with its
/// default activations: c = f * c + i * tanh(g), h = o * tanh(c).
PLUGRT_ONEDNN_RECURRENT_CLONES void lstm_cell(const float* gates, size_t hidden, float* c, float* h) {
  const float *in = gates, *forget = gates + hidden, *candidate = gates + 2 * hidden, *out = gates + 3 * hidden;
#pragma omp simd
  for (size_t j = 0; j < hidden; ++j) {
    const float state = rational_sigmoid(forget[j]) * c[j] + rational_sigmoid(in[j]) * rational_tanh(candidate[j]);
    c[j] = state;
    h[j] = rational_sigmoid(out[j]) * rational_tanh(state);
  }
}

float* operand(const Step& step, int arg) {
  const auto found = step.args.find(arg);
  return found == step.args.end() ? nullptr : static_cast<float*>(found->second.get_data_handle());
}

/// The projection of the input onto direction d's gates for rows [begin, end) of the
/// T x N input rows: the bias plus x times W.
void project(const Step& step, int64_t d, int64_t begin, int64_t end) {
  const LstmShape& s = step.lstm;
  const auto gate_width = static_cast<size_t>(4 * s.hidden), features = static_cast<size_t>(s.features);
  const float* bias = operand(step, DNNL_ARG_BIAS) + static_cast<size_t>(d) * gate_width;
  float* gates = operand(step, DNNL_ARG_SCRATCHPAD) + static_cast<size_t>(d * s.steps * s.batch) * gate_width;
  for (int64_t row = begin; row < end; ++row) {
    std::memcpy(gates + static_cast<size_t>(row) * gate_width, bias, gate_width * sizeof(float));
  }
  const float* x = operand(step, DNNL_ARG_SRC_LAYER) + static_cast<size_t>(begin) * features;
  const float* w = operand(step, DNNL_ARG_WEIGHTS_LAYER) + static_cast<size_t>(d) * features * gate_width;
  accumulate_products(x, features, static_cast<size_t>(end - begin), w, features, gate_width,
                      gates + static_cast<size_t>(begin) * gate_width, gate_width);
}

/// Direction d's recurrence over every step, its gates already projected.
void recur(const Step& step, int64_t d) {
  const LstmShape& s = step.lstm;
  const auto hidden = static_cast<size_t>(s.hidden), batch = static_cast<size_t>(s.batch);
  const size_t gate_width = 4 * hidden, y_width = static_cast<size_t>(s.directions) * hidden;
  const bool reverse = s.axis == 1 || (s.axis == 2 && d == 1);
  const float* iter_weights = operand(step, DNNL_ARG_WEIGHTS_ITER) + static_cast<size_t>(d) * hidden * gate_width;
  const float* h0 = operand(step, DNNL_ARG_SRC_ITER);
  const float* c0 = operand(step, DNNL_ARG_SRC_ITER_C);
  float* gates = operand(step, DNNL_ARG_SCRATCHPAD) + static_cast<size_t>(d * s.steps) * batch * gate_width;
  float* y = operand(step, DNNL_ARG_DST_LAYER) + static_cast<size_t>(d) * hidden;
  float* c = operand(step, DNNL_ARG_DST_ITER_C) + static_cast<size_t>(d) * batch * hidden;  // the running state
  float* h_last = operand(step, DNNL_ARG_DST_ITER) + static_cast<size_t>(d) * batch * hidden;
  if (c0 != nullptr) {
    std::memcpy(c, c0 + static_cast<size_t>(d) * batch * hidden, batch * hidden * sizeof(float));
  } else {
    std::fill(c, c + batch * hidden, 0.0f);
  }
  // The hidden state read by each step: h0's rows, then the rows of y the step before wrote.
  const float* h = h0 != nullptr ? h0 + static_cast<size_t>(d) * batch * hidden : nullptr;
  size_t h_stride = hidden;
  for (int64_t i = 0; i < s.steps; ++i) {
    const auto t = static_cast<size_t>(reverse ? s.steps - 1 - i : i);
    float* step_gates = gates + t * batch * gate_width;
    if (h != nullptr) accumulate_products(h, h_stride, batch, iter_weights, hidden, gate_width, step_gates, gate_width);
    float* step_y = y + t * batch * y_width;
    for (size_t n = 0; n < batch; ++n) {
      lstm_cell(step_gates + n * gate_width, hidden, c + n * hidden, step_y + n * y_width);
    }
    h = step_y;
    h_stride = y_width;
  }
  for (size_t n = 0; n < batch; ++n) {
    float* out = h_last + n * hidden;
    if (h != nullptr) {
      std::memcpy(out, h + n * h_stride, hidden * sizeof(float));
    } else {
      std::fill(out, out + hidden, 0.0f);  // no steps and no h0
    }
  }
}

}  // namespace

void pack_lstm_weights(const float* weights, int64_t directions, int64_t depth, int64_t gate_width, float* packed) {
  const auto cols = static_cast<size_t>(gate_width), rows = static_cast<size_t>(depth);
  for (size_t d = 0; d < static_cast<size_t>(directions); ++d) {
    const float* in = weights + d * rows * cols;
    float* out = packed + d * rows * cols;
    for (size_t first = 0; first < cols; first += kPanel) {
      const size_t width = std::min(kPanel, cols - first);
      for (size_t k = 0; k < rows; ++k)
        std::memcpy(out + first * rows + k * width, in + k * cols + first, width * sizeof(float));
    }
  }
}

size_t lstm_scratch_floats(const LstmShape& shape) {
  return static_cast<size_t>(shape.directions * shape.steps * shape.batch * 4 * shape.hidden);
}

void run_lstm_step(const Step& step) {
  const LstmShape& s = step.lstm;
  const int64_t rows = s.steps * s.batch;
#ifdef _OPENMP
  // The projections split in one chunk per thread, then one direction per thread.
  const bool parallel = omp_get_max_threads() > 1 && (s.directions > 1 || rows * s.features * s.hidden >= (1 << 16));
#pragma omp parallel if (parallel)
  {
    const int64_t chunks = omp_get_num_threads();
#pragma omp for collapse(2) schedule(static)
    for (int64_t d = 0; d < s.directions; ++d) {
      for (int64_t chunk = 0; chunk < chunks; ++chunk)
        project(step, d, rows * chunk / chunks, rows * (chunk + 1) / chunks);
    }
#pragma omp for schedule(static)
    for (int64_t d = 0; d < s.directions; ++d) recur(step, d);
  }
#else
  for (int64_t d = 0; d < s.directions; ++d) {
    project(step, d, 0, rows);
    recur(step, d);
  }
#endif
}

}  // namespace plugrt::onednn
