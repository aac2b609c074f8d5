// SPDX-License-Identifier: Apache-2.0
// Shape and TensorInfo: static tensor shapes as the portable kernels see them, and the
// NumPy-style broadcasting rules that ONNX uses.
#ifndef PLUGRT_PORTABLE_SHAPE_H_
#define PLUGRT_PORTABLE_SHAPE_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "plugrt/dtype.h"

namespace plugrt::portable {

inline constexpr int kMaxRank = 8;

/// A static shape of at most kMaxRank dimensions, each >= 0.
struct Shape {
  int rank = 0;
  std::array<int64_t, kMaxRank> dims{};

  Shape() = default;
  Shape(std::initializer_list<int64_t> list);

  int64_t operator[](int axis) const { return dims[static_cast<size_t>(axis)]; }
  int64_t& operator[](int axis) { return dims[static_cast<size_t>(axis)]; }
  /// Product of the dimensions (1 for a scalar). Shapes are validated at load, so it
  /// cannot overflow.
  int64_t num_elements() const;
  /// Product of dims[begin, end).
  int64_t product(int begin, int end) const;
  void push_back(int64_t dim) { dims[static_cast<size_t>(rank++)] = dim; }
  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
};

/// "[2, 3, 4]".
std::string to_string(const Shape& shape);

/// Row-major element strides of `shape`.
std::array<int64_t, kMaxRank> contiguous_strides(const Shape& shape);

/// Maps a possibly negative axis into [0, rank); false when out of range.
bool normalize_axis(int64_t axis, int rank, int* normalized);

/// What a kernel knows about one input or output when it is prepared.
struct TensorInfo {
  DType dtype = DType::kUndefined;
  Shape shape;
  /// The bytes of a constant input (valid for the kernel's lifetime), else null.
  const void* constant_data = nullptr;

  int64_t num_elements() const { return shape.num_elements(); }
  size_t num_bytes() const { return static_cast<size_t>(num_elements()) * dtype_size(dtype); }
};

/// The broadcast of `a` and `b` (NumPy rules); false when they do not broadcast.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape* result);

/// Strides for reading a tensor of `shape` as if it had `target` (rank >= shape.rank):
/// leading and size-1 dimensions get stride 0.
std::array<int64_t, kMaxRank> broadcast_strides(const Shape& shape, const Shape& target);

/// Walks every index of `shape` in row-major order, keeping up to three offsets into
/// tensors read with their own strides (for broadcasting binary and ternary ops).
class BroadcastIterator {
 public:
  static constexpr int kMaxOperands = 3;
  BroadcastIterator(const Shape& shape, int num_operands, const std::array<int64_t, kMaxRank>* strides);
  /// Element offset of operand `i` at the current index.
  int64_t offset(int i) const { return offsets_[static_cast<size_t>(i)]; }
  void next();

 private:
  Shape shape_;
  int num_operands_;
  std::array<std::array<int64_t, kMaxRank>, kMaxOperands> strides_{};
  std::array<int64_t, kMaxRank> index_{};
  std::array<int64_t, kMaxOperands> offsets_{};
};

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_SHAPE_H_
