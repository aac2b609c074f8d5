// SPDX-License-Identifier: Apache-2.0
#include "shape.h"

namespace plugrt::portable {

Shape::Shape(std::initializer_list<int64_t> list) {
  for (int64_t dim : list) push_back(dim);
}

int64_t Shape::num_elements() const { return product(0, rank); }

int64_t Shape::product(int begin, int end) const {
  int64_t result = 1;
  for (int axis = begin; axis < end; ++axis) result *= dims[static_cast<size_t>(axis)];
  return result;
}

bool Shape::operator==(const Shape& other) const {
  if (rank != other.rank) return false;
  for (int axis = 0; axis < rank; ++axis) {
    if ((*this)[axis] != other[axis]) return false;
  }
  return true;
}

std::string to_string(const Shape& shape) {
  std::string text = "[";
  for (int axis = 0; axis < shape.rank; ++axis) {
    if (axis > 0) text += ", ";
    text += std::to_string(shape[axis]);
  }
  return text + "]";
}

std::array<int64_t, kMaxRank> contiguous_strides(const Shape& shape) {
  std::array<int64_t, kMaxRank> strides{};
  int64_t stride = 1;
  for (int axis = shape.rank - 1; axis >= 0; --axis) {
    strides[static_cast<size_t>(axis)] = stride;
    stride *= shape[axis];
  }
  return strides;
}

bool normalize_axis(int64_t axis, int rank, int* normalized) {
  if (axis < -rank || axis >= rank) return false;
  *normalized = static_cast<int>(axis < 0 ? axis + rank : axis);
  return true;
}

bool broadcast_shapes(const Shape& a, const Shape& b, Shape* result) {
  Shape out;
  out.rank = a.rank > b.rank ? a.rank : b.rank;
  for (int axis = 0; axis < out.rank; ++axis) {
    int a_axis = axis - (out.rank - a.rank);
    int b_axis = axis - (out.rank - b.rank);
    int64_t a_dim = a_axis >= 0 ? a[a_axis] : 1;
    int64_t b_dim = b_axis >= 0 ? b[b_axis] : 1;
    if (a_dim != b_dim && a_dim != 1 && b_dim != 1) return false;
    out[axis] = a_dim == 1 ? b_dim : a_dim;
  }
  *result = out;
  return true;
}

std::array<int64_t, kMaxRank> broadcast_strides(const Shape& shape, const Shape& target) {
  std::array<int64_t, kMaxRank> own = contiguous_strides(shape);
  std::array<int64_t, kMaxRank> strides{};
  int lead = target.rank - shape.rank;
  for (int axis = 0; axis < shape.rank; ++axis) {
    strides[static_cast<size_t>(axis + lead)] = shape[axis] == 1 ? 0 : own[static_cast<size_t>(axis)];
  }
  return strides;
}

BroadcastIterator::BroadcastIterator(const Shape& shape, int num_operands, const std::array<int64_t, kMaxRank>* strides)
    : shape_(shape), num_operands_(num_operands) {
  for (int i = 0; i < num_operands; ++i) strides_[static_cast<size_t>(i)] = strides[i];
}

void BroadcastIterator::next() {
  for (int axis = shape_.rank - 1; axis >= 0; --axis) {
    size_t a = static_cast<size_t>(axis);
    for (int i = 0; i < num_operands_; ++i) offsets_[static_cast<size_t>(i)] += strides_[static_cast<size_t>(i)][a];
    if (++index_[a] < shape_[axis]) return;
    for (int i = 0; i < num_operands_; ++i) {
      offsets_[static_cast<size_t>(i)] -= strides_[static_cast<size_t>(i)][a] * shape_[axis];
    }
    index_[a] = 0;
  }
}

}  // namespace plugrt::portable
