// SPDX-License-Identifier: Apache-2.0
// Spatial geometry shared by Conv, ConvTranspose and the pooling kernels: reading the
// strides, dilations, pads and auto_pad attributes, and the output size they give.
//
// Geometry is kept for kMaxSpatial dimensions; a node with fewer spatial dimensions
// gets trivial leading ones (size 1, kernel 1, stride 1, no padding), so kernels can
// always loop over three, with the node's last (contiguous) dimension innermost.
#ifndef PLUGRT_PORTABLE_KERNELS_SPATIAL_H_
#define PLUGRT_PORTABLE_KERNELS_SPATIAL_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "../kernel.h"

namespace plugrt::portable {

inline constexpr int kMaxSpatial = 3;
using SpatialInts = std::array<int64_t, kMaxSpatial>;

struct SpatialGeometry {
  int rank = 0;  // the node's number of spatial dimensions, 1 to kMaxSpatial
  SpatialInts in{1, 1, 1};
  SpatialInts out{1, 1, 1};
  SpatialInts kernel{1, 1, 1};
  SpatialInts stride{1, 1, 1};
  SpatialInts dilation{1, 1, 1};
  SpatialInts pad_begin{0, 0, 0};
  SpatialInts pad_end{0, 0, 0};

  /// Where the node's spatial dimension d (0 to rank - 1) is kept.
  size_t slot(int d) const { return static_cast<size_t>(kMaxSpatial - rank + d); }
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
  /// The extent of the dilated kernel in slot `s`.
  int64_t extent(size_t s) const { return (kernel[s] - 1) * dilation[s] + 1; }
};

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

/// Reads auto_pad; the reason when its value is unknown.
inline std::string read_auto_pad(const NodeContext& node, AutoPad* auto_pad) {
  const std::string text = node.attr_string("auto_pad", "NOTSET");
  if (text == "NOTSET") {
    *auto_pad = AutoPad::kNotSet;
  } else if (text == "SAME_UPPER") {
    *auto_pad = AutoPad::kSameUpper;
  } else if (text == "SAME_LOWER") {
    *auto_pad = AutoPad::kSameLower;
  } else if (text == "VALID") {
    *auto_pad = AutoPad::kValid;
  } else {
    return "auto_pad '" + text + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID";
  }
  return {};
}

/// Reads an ints attribute with one value per spatial dimension (`count` values, or
/// `fallback` for each when absent), each at least `min_value`, into `values`.
inline std::string read_spatial_ints(const NodeContext& node, const char* name, size_t count, int64_t fallback,
                                     int64_t min_value, std::vector<int64_t>* values) {
  *values = node.attr_ints(name);
  if (values->empty() && !node.has_attribute(name)) values->assign(count, fallback);
  if (values->size() != count) {
    return std::string(name) + " has " + std::to_string(values->size()) + " values, expected " + std::to_string(count);
  }
  for (int64_t value : *values) {
    if (value < min_value) {
      return std::string(name) + " has value " + std::to_string(value) + "; each must be at least " +
             std::to_string(min_value);
    }
  }
  return {};
}

/// Checks that `input` is N x C x spatial (1 to kMaxSpatial spatial dims) and fills
/// geometry.rank and geometry.in.
inline std::string read_spatial_input(const Shape& input, SpatialGeometry* geometry) {
  if (input.rank < 3 || input.rank > 2 + kMaxSpatial) {
    return "input has shape " + to_string(input) + "; expected N x C and 1 to " + std::to_string(kMaxSpatial) +
           " spatial dimensions";
  }
  geometry->rank = input.rank - 2;
  for (int d = 0; d < geometry->rank; ++d) geometry->in[geometry->slot(d)] = input[d + 2];
  return {};
}

/// Reads strides, dilations, pads and auto_pad for a sliding window of
/// geometry->kernel over geometry->in (set beforehand), and computes geometry->out.
/// `ceil_mode` rounds the output size up (pooling), dropping a last window that would
/// start in the end padding.
inline std::string read_window_geometry(const NodeContext& node, bool ceil_mode, SpatialGeometry* g) {
  const size_t rank = static_cast<size_t>(g->rank);
  std::vector<int64_t> strides, dilations, pads;
  AutoPad auto_pad = AutoPad::kNotSet;
  if (std::string why = read_spatial_ints(node, "strides", rank, 1, 1, &strides); !why.empty()) return why;
  if (std::string why = read_spatial_ints(node, "dilations", rank, 1, 1, &dilations); !why.empty()) return why;
  if (std::string why = read_spatial_ints(node, "pads", 2 * rank, 0, 0, &pads); !why.empty()) return why;
  if (std::string why = read_auto_pad(node, &auto_pad); !why.empty()) return why;
  for (size_t d = 0; d < rank; ++d) {
    if (auto_pad != AutoPad::kNotSet && (pads[d] != 0 || pads[d + rank] != 0)) {
      return "pads cannot be given together with auto_pad";
    }
    const size_t s = g->slot(static_cast<int>(d));
    g->stride[s] = strides[d];
    g->dilation[s] = dilations[d];
    const int64_t extent = g->extent(s);
    const int64_t in = g->in[s];
    if (auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower) {
      g->out[s] = (in + strides[d] - 1) / strides[d];
      const int64_t total = std::max<int64_t>(0, (g->out[s] - 1) * strides[d] + extent - in);
      g->pad_begin[s] = auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
      g->pad_end[s] = total - g->pad_begin[s];
      continue;
    }
    g->pad_begin[s] = auto_pad == AutoPad::kValid ? 0 : pads[d];
    g->pad_end[s] = auto_pad == AutoPad::kValid ? 0 : pads[d + rank];
    const int64_t span = in + g->pad_begin[s] + g->pad_end[s] - extent;
    if (span < 0 && ceil_mode && auto_pad == AutoPad::kNotSet && span > -strides[d]) {
      g->out[s] = 1;  // rounded up, one window that runs past the end (as PyTorch)
      continue;
    }
    if (span < 0) {
      return "the window (extent " + std::to_string(extent) + ") is larger than the padded input (" +
             std::to_string(in + g->pad_begin[s] + g->pad_end[s]) + ") along spatial axis " + std::to_string(d);
    }
    g->out[s] = span / strides[d] + 1;
    if (ceil_mode && auto_pad == AutoPad::kNotSet && span % strides[d] != 0) {
      ++g->out[s];
      if ((g->out[s] - 1) * strides[d] >= in + g->pad_begin[s]) --g->out[s];
    }
  }
  return {};
}

/// The output positions o in [0, out) whose input position o * stride + offset lies in
/// [0, in): [*first, *last).
inline void valid_range(int64_t offset, int64_t stride, int64_t in, int64_t out, int64_t* first, int64_t* last) {
  const int64_t top = in - 1 - offset;  // o * stride <= top
  *last = top < 0 ? 0 : std::min(out, top / stride + 1);
  *first = offset >= 0 ? 0 : std::min(*last, (-offset + stride - 1) / stride);
}

/// N x C x out spatial dims.
inline Shape spatial_output_shape(int64_t n, int64_t c, const SpatialGeometry& g) {
  Shape shape{n, c};
  for (int d = 0; d < g.rank; ++d) shape.push_back(g.out[g.slot(d)]);
  return shape;
}

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_KERNELS_SPATIAL_H_
