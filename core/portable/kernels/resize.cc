// SPDX-License-Identifier: Apache-2.0
// Resize (opsets 10 to 17) and the Upsample it replaced, float32: nearest and N-D
// linear interpolation (cubic: resize_cubic.cc).
//
// Prepare maps every output index along every axis to its input taps (ONNX's
// coordinate transformation, then the nearest rounding or the two linear neighbours
// and their weights); running only sums the taps of each output element.
//
// Linear resizing of the last two axes (an NCHW image, the common case) computes each
// output in ONNX Runtime's order, so that both give the same bits: its CPU kernel takes
// each neighbour's weight as the float distance from the position to the other one
// (0.5 each at the last index), multiplies the two axes' weights first, and sums the four
// products from the top left corner, top row first. A different but equally exact order
// differs in the last bit, and a quantized model downstream can amplify that.
#include <algorithm>
#include <cmath>

#include "kernel_families.h"
#include "resize.h"

namespace plugrt::portable {

namespace resizing {

/// The input coordinate of output index `x` along an axis (ONNX's formulas).
float original_coordinate(const Config& c, int axis, int64_t x, int64_t in, int64_t out) {
  const float scale = c.scales[static_cast<size_t>(axis)];
  const float xf = static_cast<float>(x);
  switch (c.transform) {
    case Transform::kHalfPixel: return (xf + 0.5f) / scale - 0.5f;
    case Transform::kPytorchHalfPixel: return out > 1 ? (xf + 0.5f) / scale - 0.5f : 0.0f;
    case Transform::kAlignCorners: {
      // ONNX resizes to in * scale (not floored) when scales are given; for sizes the
      // scale is out / in, so this is `out` there.
      const float resized = static_cast<float>(in) * scale;
      return resized <= 1.0f ? 0.0f : xf * static_cast<float>(in - 1) / (resized - 1.0f);
    }
    case Transform::kAsymmetric: return xf / scale;
    case Transform::kTfHalfPixelForNn: return (xf + 0.5f) / scale;
    case Transform::kTfCropAndResize: {
      const float start = c.roi[static_cast<size_t>(axis)];
      const float end = c.roi[c.roi.size() / 2 + static_cast<size_t>(axis)];
      const float span = static_cast<float>(in - 1);
      return out > 1 ? start * span + xf * (end - start) * span / static_cast<float>(out - 1)
                     : 0.5f * (start + end) * span;
    }
  }
  return 0.0f;
}

}  // namespace resizing

namespace {

using resizing::Config;
using resizing::Mode;
using resizing::Rounding;
using resizing::Transform;

/// One output index along one axis: element offsets (index x stride) of the two
/// neighbours (the same for nearest), the weight of `hi`, and whether the position lies
/// outside the input (tf_crop_and_resize, which then writes the extrapolation value).
/// `lo_weight` and `hi_weight` are the neighbours' weights as ONNX Runtime computes them
/// (linear only; see the top of this file).
struct AxisTap {
  int64_t lo = 0;
  int64_t hi = 0;
  float weight = 0.0f;
  float lo_weight = 0.0f;
  float hi_weight = 0.0f;
  bool outside = false;
};

int64_t nearest_index(Rounding rounding, float x) {
  const float below = std::floor(x);
  const bool half = x - below == 0.5f;
  switch (rounding) {
    case Rounding::kRoundPreferFloor: return static_cast<int64_t>(half ? below : std::round(x));
    case Rounding::kRoundPreferCeil: return static_cast<int64_t>(half ? std::ceil(x) : std::round(x));
    case Rounding::kFloor: return static_cast<int64_t>(below);
    case Rounding::kCeil: return static_cast<int64_t>(std::ceil(x));
  }
  return 0;
}

AxisTap make_tap(const Config& c, int axis, int64_t x, int64_t in, int64_t stride) {
  const int64_t out = c.out[axis];
  float position = resizing::original_coordinate(c, axis, x, in, out);
  AxisTap tap;
  const float last = static_cast<float>(in - 1);
  tap.outside = c.transform == Transform::kTfCropAndResize && (position < 0.0f || position > last);
  if (!(position >= 0.0f)) position = 0.0f;  // also catches NaN
  if (c.mode == Mode::kNearest) {
    const int64_t index = std::clamp<int64_t>(nearest_index(c.rounding, std::min(position, last + 1.0f)), 0, in - 1);
    tap.lo = tap.hi = index * stride;
    return tap;
  }
  position = std::min(position, last);
  const int64_t lo = static_cast<int64_t>(position);
  tap.lo = lo * stride;
  tap.hi = std::min(lo + 1, in - 1) * stride;
  tap.weight = tap.hi != tap.lo ? position - static_cast<float>(lo) : 0.0f;
  const int64_t hi = std::min(lo + 1, in - 1);
  tap.lo_weight = hi != lo ? std::fabs(position - static_cast<float>(hi)) : 0.5f;
  tap.hi_weight = hi != lo ? std::fabs(position - static_cast<float>(lo)) : 0.5f;
  return tap;
}

class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(const Config& c, const Shape& in)
      : out_(c.out), extrapolation_(c.extrapolation), linear_(c.mode == Mode::kLinear) {
    const std::array<int64_t, kMaxRank> strides = contiguous_strides(in);
    for (int axis = 0; axis < out_.rank; ++axis) {
      const size_t a = static_cast<size_t>(axis);
      begin_[a] = static_cast<int64_t>(taps_.size());
      bool interpolates = false;
      for (int64_t x = 0; x < out_[axis]; ++x) {
        taps_.push_back(make_tap(c, axis, x, in[axis], strides[a]));
        interpolates = interpolates || taps_.back().weight != 0.0f;
      }
      if (interpolates) active_[static_cast<size_t>(num_active_++)] = axis;
    }
    bool outside = false;
    for (const AxisTap& t : taps_) outside = outside || t.outside;
    planar_ =
        out_.rank >= 2 && !outside && (num_active_ == 0 || active_[0] >= out_.rank - 2);  // active_ is in axis order
  }

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    if (planar_) return run_planar(x, y);
    const int64_t count = out_.num_elements();
    std::array<int64_t, kMaxRank> index{};
    for (int64_t e = 0; e < count; ++e) {
      y[e] = value(x, index);
      for (int a = out_.rank - 1; a >= 0 && ++index[static_cast<size_t>(a)] == out_[a]; --a) {
        index[static_cast<size_t>(a)] = 0;
      }
    }
  }

 private:
  const AxisTap& tap(int axis, const std::array<int64_t, kMaxRank>& index) const {
    const size_t a = static_cast<size_t>(axis);
    return taps_[static_cast<size_t>(begin_[a] + index[a])];
  }

  /// Only the last two axes interpolate (an image resized in height and width, the
  /// common case): per plane, each output row blends two input rows, each element two
  /// columns, with the taps laid out once. Linear sums in ONNX Runtime's order.
  void run_planar(const float* x, float* y) const {
    const int rows_axis = out_.rank - 2, columns_axis = out_.rank - 1;
    const int64_t rows = out_[rows_axis], columns = out_[columns_axis];
    const AxisTap* row_taps = &taps_[static_cast<size_t>(begin_[static_cast<size_t>(rows_axis)])];
    const AxisTap* column_taps = &taps_[static_cast<size_t>(begin_[static_cast<size_t>(columns_axis)])];
    std::array<int64_t, kMaxRank> index{};
    const int64_t planes = out_.num_elements() / std::max<int64_t>(rows * columns, 1);
    for (int64_t plane = 0; plane < planes; ++plane) {
      int64_t base = 0;
      for (int axis = 0; axis < rows_axis; ++axis) base += tap(axis, index).lo;
      for (int64_t r = 0; r < rows; ++r) {
        const AxisTap& row = row_taps[r];
        const float* upper = x + base + row.lo;
        const float* lower = x + base + row.hi;
        if (!linear_) {
          for (int64_t c = 0; c < columns; ++c) *y++ = upper[column_taps[c].lo];
          continue;
        }
        for (int64_t c = 0; c < columns; ++c) {
          const AxisTap& column = column_taps[c];
          const float upper_left = column.lo_weight * row.lo_weight;
          const float upper_right = column.hi_weight * row.lo_weight;
          const float lower_left = column.lo_weight * row.hi_weight;
          const float lower_right = column.hi_weight * row.hi_weight;
          *y++ = upper_left * upper[column.lo] + upper_right * upper[column.hi] + lower_left * lower[column.lo] +
                 lower_right * lower[column.hi];
        }
      }
      for (int a = rows_axis - 1; a >= 0 && ++index[static_cast<size_t>(a)] == out_[a]; --a) {
        index[static_cast<size_t>(a)] = 0;
      }
    }
  }

  /// Sums the 2^active corners around the output element at `index`.
  float value(const float* x, const std::array<int64_t, kMaxRank>& index) const {
    int64_t base = 0;
    for (int axis = 0; axis < out_.rank; ++axis) {
      const AxisTap& t = tap(axis, index);
      if (t.outside) return extrapolation_;
      base += t.lo;
    }
    float sum = 0.0f;
    for (int corner = 0; corner < (1 << num_active_); ++corner) {
      float weight = 1.0f;
      int64_t offset = base;
      for (int j = 0; j < num_active_; ++j) {
        const AxisTap& t = tap(active_[static_cast<size_t>(j)], index);
        const bool high = (corner >> j) & 1;
        weight *= high ? t.weight : 1.0f - t.weight;
        offset += high ? t.hi - t.lo : 0;
      }
      sum += weight * x[offset];
    }
    return sum;
  }

  Shape out_;
  float extrapolation_;
  std::vector<AxisTap> taps_;              // every axis's taps, one per output index
  std::array<int64_t, kMaxRank> begin_{};  // where each axis's taps start
  std::array<int, kMaxRank> active_{};     // the axes that interpolate (linear only)
  int num_active_ = 0;
  bool linear_ = false;
  bool planar_ = false;  // run_planar() applies
};

template <typename E>
bool parse(const std::string& text, std::initializer_list<std::pair<const char*, E>> names, E* value) {
  for (const auto& [name, e] : names) {
    if (text == name) {
      *value = e;
      return true;
    }
  }
  return false;
}

/// Reads mode, coordinate_transformation_mode and nearest_mode. Resize 10 and Upsample
/// map coordinates asymmetrically and round down.
std::string read_modes(const NodeContext& node, bool legacy, Config* c) {
  const std::string mode = node.attr_string("mode", "nearest");
  if (!parse(mode,
             {{"nearest", Mode::kNearest},
              {"linear", Mode::kLinear},
              {"bilinear", Mode::kLinear},
              {"cubic", Mode::kCubic}},
             &c->mode)) {
    return "mode '" + mode + "' is not supported (nearest, linear, cubic)";
  }
  c->cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
  c->exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  if (legacy) {
    if (c->mode == Mode::kCubic) return "mode 'cubic' needs Resize 11 or later";
    c->transform = Transform::kAsymmetric;
    c->rounding = Rounding::kFloor;
    return {};
  }
  const std::string transform = node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (!parse(transform,
             {{"half_pixel", Transform::kHalfPixel},
              {"pytorch_half_pixel", Transform::kPytorchHalfPixel},
              {"align_corners", Transform::kAlignCorners},
              {"asymmetric", Transform::kAsymmetric},
              {"tf_half_pixel_for_nn", Transform::kTfHalfPixelForNn},
              {"tf_crop_and_resize", Transform::kTfCropAndResize}},
             &c->transform)) {
    return "coordinate_transformation_mode '" + transform + "' is not supported";
  }
  const std::string rounding = node.attr_string("nearest_mode", "round_prefer_floor");
  if (!parse(rounding,
             {{"round_prefer_floor", Rounding::kRoundPreferFloor},
              {"round_prefer_ceil", Rounding::kRoundPreferCeil},
              {"floor", Rounding::kFloor},
              {"ceil", Rounding::kCeil}},
             &c->rounding)) {
    return "nearest_mode '" + rounding + "' is not supported";
  }
  if (node.attr_int("antialias", 0) != 0 || node.has_attribute("axes") ||
      node.has_attribute("keep_aspect_ratio_policy")) {
    return "antialias, axes and keep_aspect_ratio_policy (opset 18) are not supported";
  }
  c->extrapolation = node.attr_float("extrapolation_value", 0.0f);
  return {};
}

/// True when input `i` is given with at least one element.
bool given(const NodeContext& node, size_t i) { return node.input(i) != nullptr && node.input(i)->num_elements() > 0; }

/// Reads the output size from constant scales (input `scales_at`, or the attribute when
/// it is -1) or sizes (input `sizes_at`, or none when -1).
std::string read_size(const NodeContext& node, int scales_at, int sizes_at, const Shape& in, Config* c) {
  const int rank = in.rank;
  const bool has_sizes = sizes_at >= 0 && given(node, static_cast<size_t>(sizes_at));
  const bool has_scales = scales_at < 0 ? node.has_attribute("scales") : given(node, static_cast<size_t>(scales_at));
  if (has_sizes == has_scales) return "exactly one of scales and sizes must be given";
  c->out = Shape();
  if (has_sizes) {
    std::optional<std::vector<int64_t>> sizes = node.constant_ints(static_cast<size_t>(sizes_at));
    if (!sizes) return "sizes must be a constant int64 tensor";
    if (sizes->size() != static_cast<size_t>(rank)) return "sizes must have one value per input dim";
    for (int axis = 0; axis < rank; ++axis) {
      const int64_t size = (*sizes)[static_cast<size_t>(axis)];
      if (size < 0) return "sizes has a negative value";
      c->out.push_back(size);
      c->scales.push_back(static_cast<float>(size) / static_cast<float>(in[axis]));
    }
    return {};
  }
  if (scales_at < 0) {
    c->scales = node.attr_floats("scales");
  } else {
    std::optional<std::vector<float>> scales = node.constant_floats(static_cast<size_t>(scales_at));
    if (!scales) return "scales must be a constant float32 tensor";
    c->scales = *scales;
  }
  if (c->scales.size() != static_cast<size_t>(rank)) return "scales must have one value per input dim";
  for (int axis = 0; axis < rank; ++axis) {
    const float scale = c->scales[static_cast<size_t>(axis)];
    const float size = static_cast<float>(in[axis]) * scale;
    if (!(scale > 0.0f) || !(size < 1e15f)) return "scales must be positive and finite";
    c->out.push_back(static_cast<int64_t>(std::floor(size)));
  }
  return {};
}

/// Resize 10 (X, scales), 11+ (X, roi, scales, sizes); Upsample 7 (scales attribute)
/// and 9 (X, scales).
Prepared prepare_resize_like(const NodeContext& node, bool upsample) {
  const int opset = node.opset();
  const bool legacy = upsample || opset < 11;
  const size_t max_inputs = upsample ? (opset < 9 ? 1 : 2) : (opset < 11 ? 2 : 4);
  if (std::string why = check_arity(node, 1, max_inputs, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  if (std::string why = check_dtype("input", 0, &x, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  if (x.shape.rank == 0) return prepare_error(node, "cannot resize a scalar");
  for (int axis = 0; axis < x.shape.rank; ++axis) {
    if (x.shape[axis] == 0) return prepare_error(node, "cannot resize an empty input " + to_string(x.shape));
  }
  Config c;
  if (std::string why = read_modes(node, legacy, &c); !why.empty()) return prepare_error(node, why);
  const int scales_at = upsample && opset < 9 ? -1 : (legacy ? 1 : 2);
  const int sizes_at = legacy ? -1 : 3;
  if (std::string why = read_size(node, scales_at, sizes_at, x.shape, &c); !why.empty()) {
    return prepare_error(node, why);
  }
  if (c.transform == Transform::kTfCropAndResize) {
    std::optional<std::vector<float>> roi = node.constant_floats(1);
    if (!roi || roi->size() != 2 * static_cast<size_t>(x.shape.rank)) {
      return prepare_error(node, "tf_crop_and_resize needs a constant float32 roi with 2 values per input dim");
    }
    c.roi = *roi;
  }
  if (std::string why = check_output(node, 0, c.out, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  if (c.mode == Mode::kCubic) return resizing::prepare_cubic(c, x.shape);
  return prepared<ResizeKernel>(c, x.shape);
}

Prepared prepare_resize(const NodeContext& node) { return prepare_resize_like(node, false); }
Prepared prepare_upsample(const NodeContext& node) { return prepare_resize_like(node, true); }

}  // namespace

void add_resize_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"Resize", prepare_resize});
  table.push_back({"Upsample", prepare_upsample});
}

}  // namespace plugrt::portable
