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

/// c[r][:cols] += a[r][:depth] times w ([depth, cols] in panels: pack_columns), for
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

/// One LSTM row of one step: the summed pre-activations `gates` ([4, hidden]: i, f, c, o)
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

/// A GRU row's reset gate applied to the hidden state before the recurrent product (ONNX's
/// linear_before_reset 0): rh = sigmoid(x_r + h R_r) * h, from the projected `gates` and
/// the products `sums` ([3, hidden]: z, r, h).
PLUGRT_ONEDNN_RECURRENT_CLONES void gru_reset(const float* gates, const float* sums, const float* h, size_t hidden,
                                              float* rh) {
#pragma omp simd
  for (size_t j = 0; j < hidden; ++j) rh[j] = rational_sigmoid(gates[hidden + j] + sums[hidden + j]) * h[j];
}

/// One GRU row of one step, as ONNX's GRU with its default activations: z = sigmoid(x_z +
/// h R_z), the candidate n = tanh(x_h + r * (h R_h + Rb_h)) with the reset after the
/// product (`reset_after`: linear_before_reset 1, as PyTorch's GRU), else tanh(x_h + (r * h)
/// R_h) with that product already in `sums`; then h' = (1 - z) * n + z * h.
PLUGRT_ONEDNN_RECURRENT_CLONES void gru_cell(const float* gates, const float* sums, const float* h, size_t hidden,
                                             bool reset_after, float* out) {
  const float *update = gates, *reset = gates + hidden, *candidate = gates + 2 * hidden;
  if (reset_after) {
#pragma omp simd
    for (size_t j = 0; j < hidden; ++j) {
      const float r = rational_sigmoid(reset[j] + sums[hidden + j]);
      const float z = rational_sigmoid(update[j] + sums[j]);
      const float n = rational_tanh(candidate[j] + r * sums[2 * hidden + j]);
      out[j] = (1.0f - z) * n + z * h[j];
    }
  } else {
#pragma omp simd
    for (size_t j = 0; j < hidden; ++j) {
      const float z = rational_sigmoid(update[j] + sums[j]);
      const float n = rational_tanh(candidate[j] + sums[2 * hidden + j]);
      out[j] = (1.0f - z) * n + z * h[j];
    }
  }
}

/// Columns [first, first + width) of `rows` rows of `cols` floats, in panels.
void pack_columns(const float* in, size_t rows, size_t cols, size_t first, size_t width, float* out) {
  for (size_t panel = 0; panel < width; panel += kPanel) {
    const size_t panel_width = std::min(kPanel, width - panel);
    for (size_t k = 0; k < rows; ++k) {
      std::memcpy(out + panel * rows + k * panel_width, in + k * cols + first + panel, panel_width * sizeof(float));
    }
  }
}

float* operand(const Step& step, int arg) {
  const auto found = step.args.find(arg);
  return found == step.args.end() ? nullptr : static_cast<float*>(found->second.get_data_handle());
}

/// What a direction's recurrence reads and writes.
struct Direction {
  size_t hidden, batch, gate_width, y_width;
  bool reverse;
  const float* iter_weights;  // packed
  float* gates;               // every step's projection, [T, N, gates x H]
  float* y;                   // its first column in y
  float* h_last;
  /// h0's rows for this direction, or nullptr when the first step reads zeros.
  const float* h0;
  float* scratch;  // after the gates: a GRU's sums, reset state and zeros
};

Direction direction(const Step& step, int64_t d) {
  const RecurrentShape& s = step.recurrent;
  Direction r{};
  r.hidden = static_cast<size_t>(s.hidden);
  r.batch = static_cast<size_t>(s.batch);
  r.gate_width = static_cast<size_t>(s.gates() * s.hidden);
  r.y_width = static_cast<size_t>(s.directions) * r.hidden;
  r.reverse = s.axis == 1 || (s.axis == 2 && d == 1);
  const auto at = static_cast<size_t>(d);
  r.iter_weights = operand(step, DNNL_ARG_WEIGHTS_ITER) + at * r.hidden * r.gate_width;
  r.gates = operand(step, DNNL_ARG_SCRATCHPAD) + at * (recurrent_scratch_floats(s) / static_cast<size_t>(s.directions));
  r.scratch = r.gates + static_cast<size_t>(s.steps) * r.batch * r.gate_width;
  r.y = operand(step, DNNL_ARG_DST_LAYER) + at * r.hidden;
  r.h_last = operand(step, DNNL_ARG_DST_ITER) + at * r.batch * r.hidden;
  const float* h0 = operand(step, DNNL_ARG_SRC_ITER);
  r.h0 = h0 != nullptr ? h0 + at * r.batch * r.hidden : nullptr;
  return r;
}

/// The projection of the input onto direction d's gates for rows [begin, end) of the
/// T x N input rows: the bias plus x times W.
void project(const Step& step, int64_t d, int64_t begin, int64_t end) {
  const RecurrentShape& s = step.recurrent;
  const Direction r = direction(step, d);
  const auto features = static_cast<size_t>(s.features);
  const float* bias = operand(step, DNNL_ARG_BIAS) + static_cast<size_t>(d * s.bias_gates() * s.hidden);
  for (int64_t row = begin; row < end; ++row) {
    std::memcpy(r.gates + static_cast<size_t>(row) * r.gate_width, bias, r.gate_width * sizeof(float));
  }
  const float* x = operand(step, DNNL_ARG_SRC_LAYER) + static_cast<size_t>(begin) * features;
  const float* w = operand(step, DNNL_ARG_WEIGHTS_LAYER) + static_cast<size_t>(d) * features * r.gate_width;
  accumulate_products(x, features, static_cast<size_t>(end - begin), w, features, r.gate_width,
                      r.gates + static_cast<size_t>(begin) * r.gate_width, r.gate_width);
}

/// Copies the last step's hidden state (`h`, rows `stride` apart) to h_last.
void keep_last(const Direction& r, const float* h, size_t stride) {
  for (size_t n = 0; n < r.batch; ++n) std::memcpy(r.h_last + n * r.hidden, h + n * stride, r.hidden * sizeof(float));
}

/// An LSTM direction's recurrence over every step, its gates already projected.
void recur_lstm(const Step& step, int64_t d) {
  const Direction r = direction(step, d);
  const float* c0 = operand(step, DNNL_ARG_SRC_ITER_C);
  float* c = operand(step, DNNL_ARG_DST_ITER_C) + static_cast<size_t>(d) * r.batch * r.hidden;  // the running state
  if (c0 != nullptr) {
    std::memcpy(c, c0 + static_cast<size_t>(d) * r.batch * r.hidden, r.batch * r.hidden * sizeof(float));
  } else {
    std::fill(c, c + r.batch * r.hidden, 0.0f);
  }
  const float* h = r.h0;  // each step reads h0's rows, or the rows of y the step before wrote
  size_t stride = r.hidden;
  for (int64_t i = 0; i < step.recurrent.steps; ++i) {
    const auto t = static_cast<size_t>(r.reverse ? step.recurrent.steps - 1 - i : i);
    float* gates = r.gates + t * r.batch * r.gate_width;
    if (h != nullptr) {
      accumulate_products(h, stride, r.batch, r.iter_weights, r.hidden, r.gate_width, gates, r.gate_width);
    }
    float* y = r.y + t * r.batch * r.y_width;
    for (size_t n = 0; n < r.batch; ++n) {
      lstm_cell(gates + n * r.gate_width, r.hidden, c + n * r.hidden, y + n * r.y_width);
    }
    h = y;
    stride = r.y_width;
  }
  if (h != nullptr) {
    keep_last(r, h, stride);
  } else {
    std::fill(r.h_last, r.h_last + r.batch * r.hidden, 0.0f);  // no steps and no h0
  }
}

/// A GRU direction's recurrence over every step, its gates already projected.
void recur_gru(const Step& step, int64_t d) {
  const Direction r = direction(step, d);
  const bool reset_after = step.recurrent.cell == RecurrentShape::Cell::kGruResetAfter;
  const size_t hidden = r.hidden, width = r.gate_width;
  float* sums = r.scratch;                  // [N, 3 x H]: h R_z, h R_r, and h R_h (+ Rb_h) or (r * h) R_h
  float* reset = sums + r.batch * width;    // [N, H]: r * h
  float* zeros = reset + r.batch * hidden;  // [N, H]
  std::fill(zeros, zeros + r.batch * hidden, 0.0f);
  // Rb_h, the fourth bias row of a GRU that resets after its product.
  const float* hidden_bias = operand(step, DNNL_ARG_BIAS) + static_cast<size_t>((4 * d + 3) * step.recurrent.hidden);
  const float* h = r.h0 != nullptr ? r.h0 : zeros;
  size_t stride = hidden;
  for (int64_t i = 0; i < step.recurrent.steps; ++i) {
    const auto t = static_cast<size_t>(r.reverse ? step.recurrent.steps - 1 - i : i);
    const bool zero_h = i == 0 && r.h0 == nullptr;
    for (size_t n = 0; n < r.batch; ++n) {
      float* row = sums + n * width;
      std::fill(row, row + width, 0.0f);
      if (reset_after) std::memcpy(row + 2 * hidden, hidden_bias, hidden * sizeof(float));
    }
    const float* gates = r.gates + t * r.batch * width;
    if (reset_after) {
      if (!zero_h) accumulate_products(h, stride, r.batch, r.iter_weights, hidden, width, sums, width);
    } else if (!zero_h) {
      // z and r first; then the candidate's product of the reset state (R_h packed apart).
      accumulate_products(h, stride, r.batch, r.iter_weights, hidden, 2 * hidden, sums, width);
      for (size_t n = 0; n < r.batch; ++n) {
        gru_reset(gates + n * width, sums + n * width, h + n * stride, hidden, reset + n * hidden);
      }
      accumulate_products(reset, hidden, r.batch, r.iter_weights + 2 * hidden * hidden, hidden, hidden,
                          sums + 2 * hidden, width);
    }
    float* y = r.y + t * r.batch * r.y_width;
    for (size_t n = 0; n < r.batch; ++n) {
      gru_cell(gates + n * width, sums + n * width, h + n * stride, hidden, reset_after, y + n * r.y_width);
    }
    h = y;
    stride = r.y_width;
  }
  keep_last(r, h, stride);
}

}  // namespace

void pack_recurrent_weights(const float* weights, const RecurrentShape& shape, bool recurrent, float* packed) {
  const auto depth = static_cast<size_t>(recurrent ? shape.hidden : shape.features);
  const auto hidden = static_cast<size_t>(shape.hidden), cols = static_cast<size_t>(shape.gates()) * hidden;
  for (size_t d = 0; d < static_cast<size_t>(shape.directions); ++d) {
    const float* in = weights + d * depth * cols;
    float* out = packed + d * depth * cols;
    if (recurrent && shape.cell == RecurrentShape::Cell::kGru) {
      pack_columns(in, depth, cols, 0, 2 * hidden, out);
      pack_columns(in, depth, cols, 2 * hidden, hidden, out + depth * 2 * hidden);
    } else {
      pack_columns(in, depth, cols, 0, cols, out);
    }
  }
}

size_t recurrent_scratch_floats(const RecurrentShape& shape) {
  const int64_t gru_rows = shape.cell == RecurrentShape::Cell::kLstm ? 0 : shape.batch * 5 * shape.hidden;
  return static_cast<size_t>(shape.directions * (shape.steps * shape.batch * shape.gates() * shape.hidden + gru_rows));
}

void run_recurrent_step(const Step& step) {
  const RecurrentShape& s = step.recurrent;
  const int64_t rows = s.steps * s.batch;
  auto recur = [&](int64_t d) {
    if (s.cell == RecurrentShape::Cell::kLstm) {
      recur_lstm(step, d);
    } else {
      recur_gru(step, d);
    }
  };
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
    for (int64_t d = 0; d < s.directions; ++d) recur(d);
  }
#else
  for (int64_t d = 0; d < s.directions; ++d) {
    project(step, d, 0, rows);
    recur(d);
  }
#endif
}

}  // namespace plugrt::onednn
