// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the layout kernels (layout.cc, layout_strided.cc): parameters that
// later opsets moved from attributes to constant inputs, and dispatch on element size
// for kernels that move bytes of any dtype.
#ifndef PLUGRT_PORTABLE_KERNELS_LAYOUT_COMMON_H_
#define PLUGRT_PORTABLE_KERNELS_LAYOUT_COMMON_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "../kernel.h"

namespace plugrt::portable {

/// An ints parameter that opset `input_since` moved from attribute `name` to input
/// `index`. The input, when given, must be a constant (and is refused before
/// `input_since`); otherwise the attribute is read. `values` is nullopt when neither is
/// given. Returns the reason on failure.
inline std::string read_ints_parameter(const NodeContext& node, const char* name, size_t index, int input_since,
                                       std::optional<std::vector<int64_t>>* values) {
  values->reset();
  if (node.input(index) != nullptr) {
    if (node.opset() < input_since) {
      return std::string(name) + " is an attribute before opset " + std::to_string(input_since) + ", not an input";
    }
    *values = node.constant_ints(index);
    if (!values->has_value()) {
      return "input " + std::to_string(index) + " (" + name + ") must be a constant int64 or int32 tensor";
    }
    return {};
  }
  if (node.has_attribute(name)) *values = node.attr_ints(name);
  return {};
}

/// Normalizes `axes` against `rank`, refusing out-of-range and repeated axes; marks them.
inline std::string mark_axes(const std::vector<int64_t>& axes, int rank, std::array<bool, kMaxRank>* marked) {
  marked->fill(false);
  for (int64_t axis : axes) {
    int normalized = 0;
    if (!normalize_axis(axis, rank, &normalized)) {
      return "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
    }
    if ((*marked)[static_cast<size_t>(normalized)]) return "axis " + std::to_string(axis) + " is repeated";
    (*marked)[static_cast<size_t>(normalized)] = true;
  }
  return {};
}

/// Copies one element of N bytes (memcpy keeps it free of alignment and aliasing
/// assumptions; with N constant it compiles to a plain load and store).
template <size_t N>
inline void copy_element(std::byte* dst, const std::byte* src) {
  std::memcpy(dst, src, N);
}

/// prepared<K<N>>(args...) for the element size N of `dtype` (1, 2, 4 or 8 bytes).
template <template <size_t> class K, typename... Args>
Prepared prepared_for_dtype(const NodeContext& node, DType dtype, Args&&... args) {
  switch (dtype_size(dtype)) {
    case 1: return prepared<K<1>>(std::forward<Args>(args)...);
    case 2: return prepared<K<2>>(std::forward<Args>(args)...);
    case 4: return prepared<K<4>>(std::forward<Args>(args)...);
    case 8: return prepared<K<8>>(std::forward<Args>(args)...);
    default: return prepare_error(node, "dtype " + std::string(to_string(dtype)) + " is not supported");
  }
}

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_KERNELS_LAYOUT_COMMON_H_
