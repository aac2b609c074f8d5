// SPDX-License-Identifier: Apache-2.0
// Element types as the portable kernels see them: one C++ storage type per DType, the
// type each computes in (float for float16 and bfloat16, itself otherwise), and one
// dispatch from a node's DType to a kernel template, so that an op lists the dtypes it
// takes instead of writing its own switch.
#ifndef PLUGRT_PORTABLE_KERNELS_TYPED_H_
#define PLUGRT_PORTABLE_KERNELS_TYPED_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "../kernel.h"
#include "plugrt/half_float.h"

namespace plugrt::portable {

/// IEEE 754 half precision, stored as its bits.
struct Float16 {
  uint16_t bits;
};
/// bfloat16 (the upper half of a float32), stored as its bits.
struct BFloat16 {
  uint16_t bits;
};

inline float to_float(Float16 h) { return float16_to_float(h.bits); }
inline Float16 to_float16(float value) { return {float_to_float16(value)}; }
inline float to_float(BFloat16 b) { return bfloat16_to_float(b.bits); }
inline BFloat16 to_bfloat16(float value) { return {float_to_bfloat16(value)}; }

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

/// The type an element of storage type T is computed in.
template <typename T>
using Compute = std::conditional_t<kIsHalf<T>, float, T>;

template <typename T>
Compute<T> load(T value) {
  if constexpr (kIsHalf<T>) {
    return to_float(value);
  } else {
    return value;
  }
}

/// The storage value of a computed value.
template <typename T, typename V>
T store(V value) {
  if constexpr (std::is_same_v<T, Float16>) {
    return to_float16(static_cast<float>(value));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return to_bfloat16(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

template <typename T>
struct Tag {
  using type = T;
};

/// Sets of dtypes, for dispatch<>().
enum DTypeSet : unsigned {
  kFloat32Only = 1u << 0,
  kDoubleType = 1u << 1,
  kHalfTypes = 1u << 2,     // float16 and bfloat16
  kSignedInts = 1u << 3,    // int8, int16, int32, int64
  kUnsignedInts = 1u << 4,  // uint8, uint16, uint32, uint64
  kBoolType = 1u << 5,
  kFloatTypes = kFloat32Only | kDoubleType | kHalfTypes,
  kIntTypes = kSignedInts | kUnsignedInts,
  kNumericTypes = kFloatTypes | kIntTypes,
  kAllTypes = kNumericTypes | kBoolType,
};

/// "float32, double, float16, bfloat16, ..." for a DTypeSet.
std::string describe_dtypes(unsigned set);

/// Whether `dtype` is in `set`.
bool dtype_in(DType dtype, unsigned set);

/// Calls f(Tag<T>) with the storage type T of `dtype` when it is in kSet (bool is
/// uint8_t); otherwise a prepare error naming the node and the dtypes it takes. Only
/// the types of kSet are instantiated.
template <unsigned kSet, typename F>
Prepared dispatch(const NodeContext& node, DType dtype, F&& f) {
  // clang-format off: one dtype a line
  switch (dtype) {
    case DType::kFloat32:
      if constexpr ((kSet & kFloat32Only) != 0) return f(Tag<float>{});
      break;
    case DType::kDouble:
      if constexpr ((kSet & kDoubleType) != 0) return f(Tag<double>{});
      break;
    case DType::kFloat16:
      if constexpr ((kSet & kHalfTypes) != 0) return f(Tag<Float16>{});
      break;
    case DType::kBFloat16:
      if constexpr ((kSet & kHalfTypes) != 0) return f(Tag<BFloat16>{});
      break;
    case DType::kInt8:
      if constexpr ((kSet & kSignedInts) != 0) return f(Tag<int8_t>{});
      break;
    case DType::kInt16:
      if constexpr ((kSet & kSignedInts) != 0) return f(Tag<int16_t>{});
      break;
    case DType::kInt32:
      if constexpr ((kSet & kSignedInts) != 0) return f(Tag<int32_t>{});
      break;
    case DType::kInt64:
      if constexpr ((kSet & kSignedInts) != 0) return f(Tag<int64_t>{});
      break;
    case DType::kUInt8:
      if constexpr ((kSet & kUnsignedInts) != 0) return f(Tag<uint8_t>{});
      break;
    case DType::kUInt16:
      if constexpr ((kSet & kUnsignedInts) != 0) return f(Tag<uint16_t>{});
      break;
    case DType::kUInt32:
      if constexpr ((kSet & kUnsignedInts) != 0) return f(Tag<uint32_t>{});
      break;
    case DType::kUInt64:
      if constexpr ((kSet & kUnsignedInts) != 0) return f(Tag<uint64_t>{});
      break;
    case DType::kBool:
      if constexpr ((kSet & kBoolType) != 0) return f(Tag<uint8_t>{});
      break;
    case DType::kUndefined: break;
  }
  // clang-format on
  return prepare_error(node, "supports " + describe_dtypes(kSet) + ", not " + std::string(to_string(dtype)));
}

/// Calls f(Tag<U>) with the unsigned integer type U as wide as an element of `dtype`,
/// for ops that only move elements.
template <typename F>
Prepared dispatch_bits(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    default: return f(Tag<uint64_t>{});
  }
}

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_KERNELS_TYPED_H_
