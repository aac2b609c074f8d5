// SPDX-License-Identifier: Apache-2.0
#include "src/quantization_steps.h"

#include <cstdint>
#include <limits>

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

template <typename Q>
void quantize_step(const Step& step) {
  if (!step.scales.empty()) return per_axis_step<float, Q>(step, quantize<Q>);
  const float* in = static_cast<const float*>(step.source.get_data_handle());
  Q* out = static_cast<Q*>(step.destination.get_data_handle());
  const auto count = static_cast<int64_t>(step.count);
  const float scale = step.value;
  const int32_t zero_point = step.zero_point;
#ifdef _OPENMP
#pragma omp parallel for simd schedule(static) if (parallel : count >= (int64_t{1} << 16))
#endif
  for (int64_t i = 0; i < count; ++i) out[i] = quantize<Q>(in[i], scale, zero_point);
}

/// ONNX's DequantizeLinear: (x - zero_point) * scale in float32 (the difference is exact).
template <typename Q>
void dequantize_step(const Step& step) {
  if (!step.scales.empty()) return per_axis_step<Q, float>(step, dequantize<Q>);
  const Q* in = static_cast<const Q*>(step.source.get_data_handle());
  float* out = static_cast<float*>(step.destination.get_data_handle());
  const auto count = static_cast<int64_t>(step.count);
  const float scale = step.value;
  const int32_t zero_point = step.zero_point;
#ifdef _OPENMP
#pragma omp parallel for simd schedule(static) if (parallel : count >= (int64_t{1} << 16))
#endif
  for (int64_t i = 0; i < count; ++i) out[i] = dequantize<Q>(in[i], scale, zero_point);
}

}  // namespace

void run_quantization_step(const Step& step) {
  switch (step.kind) {
    case Step::Kind::kQuantizeU8: quantize_step<uint8_t>(step); break;
    case Step::Kind::kQuantizeS8: quantize_step<int8_t>(step); break;
    case Step::Kind::kDequantizeU8: dequantize_step<uint8_t>(step); break;
    case Step::Kind::kDequantizeS8: dequantize_step<int8_t>(step); break;
    default: break;
  }
}

}  // namespace plugrt::onednn
