// SPDX-License-Identifier: Apache-2.0
// Span<T>: a non-owning view of a contiguous array (C++17 has no std::span).
// Passed by value.
#ifndef PLUGRT_SPAN_H_
#define PLUGRT_SPAN_H_

#include <cassert>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace plugrt {

template <typename T>
class Span {
 public:
  constexpr Span() = default;
  constexpr Span(T* data, size_t size) : data_(data), size_(size) {}
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>>>
  Span(std::vector<U>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<const U (*)[], T (*)[]>>>
  Span(const std::vector<U>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  template <size_t N>
  constexpr Span(T (&array)[N]) : data_(array), size_(N) {}  // NOLINT

  constexpr T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T* begin() const { return data_; }
  constexpr T* end() const { return data_ + size_; }
  constexpr T& operator[](size_t i) const {
    assert(i < size_);
    return data_[i];
  }
  /// The `count` elements from `offset`; the caller checks the bounds.
  constexpr Span subspan(size_t offset, size_t count) const {
    assert(offset <= size_ && count <= size_ - offset);
    return Span(data_ + offset, count);
  }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace plugrt

#endif  // PLUGRT_SPAN_H_
