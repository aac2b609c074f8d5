// SPDX-License-Identifier: Apache-2.0
// DType: the element types plugrt programs use, their DLPack equivalents, and DLTensor
// layout checks.
// Header-only, so that backends built as plugins can use it without linking the core.
#ifndef PLUGRT_DTYPE_H_
#define PLUGRT_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <dlpack/dlpack.h>

namespace plugrt {

/// The numbers are ONNX's TensorProto.DataType codes, as in the graph IR schema.
enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
};

/// Bytes per element; 0 for a value that is not one of the DTypes above.
constexpr size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kUInt8: return 1;
    case DType::kInt8: return 1;
    case DType::kUInt16: return 2;
    case DType::kInt16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
    case DType::kFloat16: return 2;
    case DType::kDouble: return 8;
    case DType::kUInt32: return 4;
    case DType::kUInt64: return 8;
    case DType::kBFloat16: return 2;
    case DType::kUndefined: return 0;
  }
  return 0;
}

constexpr bool is_known_dtype(int32_t code) { return dtype_size(static_cast<DType>(code)) != 0; }

constexpr std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUInt16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kDouble: return "double";
    case DType::kUInt32: return "uint32";
    case DType::kUInt64: return "uint64";
    case DType::kBFloat16: return "bfloat16";
    case DType::kUndefined: return "undefined";
  }
  return "unknown";
}

/// DLPack 0.6 has no bool code; a bool crosses as one-byte kDLUInt, as in NumPy's view.
constexpr DLDataType to_dlpack(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return {kDLFloat, 32, 1};
    case DType::kFloat16: return {kDLFloat, 16, 1};
    case DType::kUInt8: return {kDLUInt, 8, 1};
    case DType::kBool: return {kDLUInt, 8, 1};
    case DType::kInt8: return {kDLInt, 8, 1};
    case DType::kInt32: return {kDLInt, 32, 1};
    case DType::kInt64: return {kDLInt, 64, 1};
    case DType::kDouble: return {kDLFloat, 64, 1};
    case DType::kBFloat16: return {kDLBfloat, 16, 1};
    case DType::kUInt16: return {kDLUInt, 16, 1};
    case DType::kInt16: return {kDLInt, 16, 1};
    case DType::kUInt32: return {kDLUInt, 32, 1};
    case DType::kUInt64: return {kDLUInt, 64, 1};
    case DType::kUndefined: break;
  }
  return {kDLOpaqueHandle, 0, 0};
}

/// Whether a DLTensor of `type` can carry elements of `dtype`.
constexpr bool matches_dlpack(DType dtype, DLDataType type) {
  DLDataType expected = to_dlpack(dtype);
  return type.code == expected.code && type.bits == expected.bits && type.lanes == expected.lanes;
}

/// Whether a DLTensor's elements are dense in row-major order (no strides, or strides
/// that say so; size-1 dimensions may have any stride).
inline bool is_contiguous(const DLTensor& tensor) {
  if (tensor.strides == nullptr) return true;
  int64_t expected = 1;
  for (int axis = tensor.ndim - 1; axis >= 0; --axis) {
    if (tensor.shape[axis] != 1 && tensor.strides[axis] != expected) return false;
    expected *= tensor.shape[axis];
  }
  return true;
}

}  // namespace plugrt

#endif  // PLUGRT_DTYPE_H_
