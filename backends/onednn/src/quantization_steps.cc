// SPDX-License-Identifier: Apache-2.0
#include "src/quantization_steps.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace plugrt::onednn {

namespace {

/// ONNX's QuantizeLinear of one element: the quotient in float32, rounded half to even,
/// plus the zero point, saturated (NaN: the type's lowest value, as on portable). The
/// quotient is clamped first, to the integers whose sum with the zero point is in the
/// type's range (rounding commutes with a clamp to integers), and rounded by adding and
/// taking away 1.5 * 2^23, which leaves an integer rounded in the default mode (to
/// nearest, ties to even) without a call to nearbyint: the loop vectorizes with no
/// integer clamp, which SSE2 lacks.
template <typename Q>
Q quantize(float x, float scale, int32_t zero_point) {
  constexpr int32_t lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
  const auto low = static_cast<float>(lo - zero_point), high = static_cast<float>(hi - zero_point);
  float q = x / scale;
  q = q > low ? q : low;  // NaN too
  q = q < high ? q : high;
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  return static_cast<Q>(static_cast<int32_t>((q + kMagic) - kMagic) + zero_point);
}

template <typename Q>
float dequantize(Q x, float scale, int32_t zero_point) {
  return static_cast<float>(static_cast<int32_t>(x) - zero_point) * scale;
}

/// Per axis: `count` elements as rows of `inner`, row r on index r % n of the axis, each
/// element `convert(x, scale, zero_point)` with its row's scale and zero point.
template <typename In, typename Out, typename Convert>
void per_axis_step(const Step& step, Convert convert) {
  const In* in = static_cast<const In*>(step.source.get_data_handle());
  Out* out = static_cast<Out*>(step.destination.get_data_handle());
  const auto inner = static_cast<int64_t>(step.inner), rows = static_cast<int64_t>(step.count / step.inner);
  const auto channels = static_cast<int64_t>(step.scales.size());
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (static_cast <int64_t>(step.count) >= (int64_t{1} << 16))
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const float scale = step.scales[static_cast<size_t>(r % channels)];
    const int32_t zero_point = step.zero_points[static_cast<size_t>(r % channels)];
    for (int64_t i = r * inner; i < (r + 1) * inner; ++i) out[i] = convert(in[i], scale, zero_point);
  }
}

/// Runs `range(begin, end)` over [0, count): on the method's OpenMP threads in chunks
/// for 64 Ki elements or more, else on the calling thread.
template <typename Range>
void in_chunks(int64_t count, Range range) {
#ifdef _OPENMP
  if (count >= (int64_t{1} << 16) && omp_get_max_threads() > 1) {
#pragma omp parallel
    {
      const int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
      const int64_t chunk = (count + threads - 1) / threads;
      range(std::min(count, thread * chunk), std::min(count, (thread + 1) * chunk));
    }
    return;
  }
#endif
  range(0, count);
}

// The loops over one range, built for AVX-512 and AVX2 too (the default build is SSE2)
// and picked when the library loads: twice as fast with AVX-512 on 16 floats a step.
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define PLUGRT_ONEDNN_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef PLUGRT_ONEDNN_VECTOR_CLONES
#define PLUGRT_ONEDNN_VECTOR_CLONES
#endif

template <typename Q>
inline void quantize_loop(const float* in, Q* out, int64_t begin, int64_t end, float scale, int32_t zero_point) {
#ifdef _OPENMP
#pragma omp simd
#endif
  for (int64_t i = begin; i < end; ++i) out[i] = quantize<Q>(in[i], scale, zero_point);
}

template <typename Q>
inline void dequantize_loop(const Q* in, float* out, int64_t begin, int64_t end, float scale, int32_t zero_point) {
#ifdef _OPENMP
#pragma omp simd
#endif
  for (int64_t i = begin; i < end; ++i) out[i] = dequantize<Q>(in[i], scale, zero_point);
}

PLUGRT_ONEDNN_VECTOR_CLONES void quantize_u8(const float* in, uint8_t* out, int64_t begin, int64_t end, float scale,
                                             int32_t zero_point) {
  quantize_loop(in, out, begin, end, scale, zero_point);
}

PLUGRT_ONEDNN_VECTOR_CLONES void quantize_s8(const float* in, int8_t* out, int64_t begin, int64_t end, float scale,
                                             int32_t zero_point) {
  quantize_loop(in, out, begin, end, scale, zero_point);
}

PLUGRT_ONEDNN_VECTOR_CLONES void dequantize_u8(const uint8_t* in, float* out, int64_t begin, int64_t end, float scale,
                                               int32_t zero_point) {
  dequantize_loop(in, out, begin, end, scale, zero_point);
}

PLUGRT_ONEDNN_VECTOR_CLONES void dequantize_s8(const int8_t* in, float* out, int64_t begin, int64_t end, float scale,
                                               int32_t zero_point) {
  dequantize_loop(in, out, begin, end, scale, zero_point);
}

/// ONNX's QuantizeLinear (`loop`: quantize_u8 or quantize_s8), or DequantizeLinear:
/// (x - zero_point) * scale in float32, the difference exact (dequantize_u8, _s8).
template <typename In, typename Out>
void convert_step(const Step& step, void (*loop)(const In*, Out*, int64_t, int64_t, float, int32_t)) {
  const In* in = static_cast<const In*>(step.source.get_data_handle());
  Out* out = static_cast<Out*>(step.destination.get_data_handle());
  in_chunks(static_cast<int64_t>(step.count),
            [&](int64_t begin, int64_t end) { loop(in, out, begin, end, step.value, step.zero_point); });
}

/// An element of a kAddDequantized operand as float32: as it is, or dequantized.
template <typename T>
float element(const T* data, int64_t i, float scale, int32_t zero_point) {
  if constexpr (std::is_same_v<T, float>) {
    return data[i];
  } else {
    return dequantize<T>(data[i], scale, zero_point);
  }
}

/// DequantizeLinear (of one operand or both), then Add (then Relu, a max with 0, as
/// oneDNN's Relu of slope 0 computes it): each product and the sum rounded to float32 as the separate steps
/// would (this file is built without floating-point contraction, so no fused
/// multiply-add joins them).
template <typename A, typename B, bool kRelu>
void add_dequantized(const Step& step) {
  const A* a = static_cast<const A*>(step.source.get_data_handle());
  const B* b = static_cast<const B*>(step.source2.get_data_handle());
  float* out = static_cast<float*>(step.destination.get_data_handle());
  in_chunks(static_cast<int64_t>(step.count), [&](int64_t begin, int64_t end) {
#ifdef _OPENMP
#pragma omp simd
#endif
    for (int64_t i = begin; i < end; ++i) {
      const float sum = element(a, i, step.value, step.zero_point) + element(b, i, step.value2, step.zero_point2);
      out[i] = kRelu ? (sum > 0.0f ? sum : 0.0f) : sum;
    }
  });
}

template <typename A, typename B>
void add_dequantized(const Step& step) {
  return step.relu ? add_dequantized<A, B, true>(step) : add_dequantized<A, B, false>(step);
}

template <typename A>
void add_dequantized_to(const Step& step) {
  switch (step.element2) {
    case Step::Element::kF32: return add_dequantized<A, float>(step);
    case Step::Element::kU8: return add_dequantized<A, uint8_t>(step);
    case Step::Element::kS8: return add_dequantized<A, int8_t>(step);
  }
}

}  // namespace

void run_quantization_step(const Step& step) {
  const bool per_axis = !step.scales.empty();
  switch (step.kind) {
    case Step::Kind::kQuantizeU8:
      return per_axis ? per_axis_step<float, uint8_t>(step, quantize<uint8_t>) : convert_step(step, quantize_u8);
    case Step::Kind::kQuantizeS8:
      return per_axis ? per_axis_step<float, int8_t>(step, quantize<int8_t>) : convert_step(step, quantize_s8);
    case Step::Kind::kDequantizeU8:
      return per_axis ? per_axis_step<uint8_t, float>(step, dequantize<uint8_t>) : convert_step(step, dequantize_u8);
    case Step::Kind::kDequantizeS8:
      return per_axis ? per_axis_step<int8_t, float>(step, dequantize<int8_t>) : convert_step(step, dequantize_s8);
    case Step::Kind::kAddDequantized:
      switch (step.element) {
        case Step::Element::kF32: return add_dequantized_to<float>(step);
        case Step::Element::kU8: return add_dequantized_to<uint8_t>(step);
        case Step::Element::kS8: return add_dequantized_to<int8_t>(step);
      }
      return;
    default: return;
  }
}

}  // namespace plugrt::onednn
