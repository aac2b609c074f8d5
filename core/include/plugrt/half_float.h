// SPDX-License-Identifier: Apache-2.0
// float16 and bfloat16 to and from float32, exactly as IEEE 754 and ONNX define them:
// widening is exact (subnormals, infinities, NaN kept), narrowing rounds to nearest,
// ties to even. Shared by the portable kernels, the ONNX importer and the conformance
// runner.
#ifndef PLUGRT_HALF_FLOAT_H_
#define PLUGRT_HALF_FLOAT_H_

#include <cmath>
#include <cstdint>
#include <cstring>

namespace plugrt {

inline uint32_t float_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float bits_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

inline float float16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return bits_float(sign | 0x7f800000u | (mantissa << 13));
  return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

/// Rounds to nearest, ties to even; overflow gives infinity, NaN stays NaN.
inline uint16_t float_to_float16(float value) {
  const uint32_t bits = float_bits(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) return static_cast<uint16_t>(sign | (magnitude > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds up to inf
  if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal, counted in units of 2^-24
    const float units = std::nearbyint(bits_float(magnitude) * 16777216.0f);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(units));
  }
  magnitude += 0xc8000fffu + ((magnitude >> 13) & 1u);  // rebias the exponent by -112, round
  return static_cast<uint16_t>(sign | (magnitude >> 13));
}

inline float bfloat16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

/// Rounds to nearest, ties to even; NaN stays NaN.
inline uint16_t float_to_bfloat16(float value) {
  const uint32_t bits = float_bits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace plugrt

#endif  // PLUGRT_HALF_FLOAT_H_
