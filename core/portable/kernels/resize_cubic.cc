// SPDX-License-Identifier: Apache-2.0
// Resize with mode 'cubic' (opsets 11 to 17), float32, any rank, as ONNX's reference
// computes it: each output index along an axis takes the four input indices around its
// position (the edge value repeated past either end), weighted by Keys' cubic
// convolution with cubic_coeff_a; exclude_outside gives the taps past either end weight
// 0 and renormalises the rest. A position exactly on an input index takes that index
// alone. The axes are resized one after the other, in double, from the first to the
// last (the reference's order), and rounded to float32 once at the end.
#include <algorithm>
#include <array>
#include <cmath>

#include "resize.h"

namespace plugrt::portable::resizing {

namespace {

constexpr int kTaps = 4;

/// One output index along one axis: its four input indices (clamped into the input)
/// and their weights, and whether the position lies outside the input
/// (tf_crop_and_resize, which then writes the extrapolation value).
struct CubicTap {
  std::array<int64_t, kTaps> index{};
  std::array<double, kTaps> weight{};
  bool outside = false;
};

/// Keys' weights of the input indices floor - 1 to floor + 2 for a position `ratio`
/// past floor, with ratio in (0, 1].
std::array<double, kTaps> cubic_coefficients(double ratio, double a) {
  const double r1 = ratio + 1.0, q = 1.0 - ratio, q1 = q + 1.0;
  return {((a * r1 - 5.0 * a) * r1 + 8.0 * a) * r1 - 4.0 * a, ((a + 2.0) * ratio - (a + 3.0)) * ratio * ratio + 1.0,
          ((a + 2.0) * q - (a + 3.0)) * q * q + 1.0, ((a * q1 - 5.0 * a) * q1 + 8.0 * a) * q1 - 4.0 * a};
}

CubicTap make_cubic_tap(const Config& c, int axis, int64_t x, int64_t in) {
  CubicTap tap;
  const auto last = static_cast<double>(in - 1);
  double position = original_coordinate(c, axis, x, in, c.out[axis]);
  tap.outside = c.transform == Transform::kTfCropAndResize && !(position >= 0.0 && position <= last);
  position = std::clamp(std::isnan(position) ? 0.0 : position, -2.0, last + 2.0);
  double below = std::floor(position);
  double ratio = position - below;
  if (ratio == 0.0) {  // on an input index: the reference takes it as ratio 1 past the one before
    ratio = 1.0;
    below -= 1.0;
  }
  tap.weight = cubic_coefficients(ratio, static_cast<double>(c.cubic_a));
  const auto first = static_cast<int64_t>(below) - 1;
  double sum = 0.0;
  for (int k = 0; k < kTaps; ++k) {
    const int64_t index = first + k;
    if (c.exclude_outside && (index < 0 || index >= in)) tap.weight[static_cast<size_t>(k)] = 0.0;
    sum += tap.weight[static_cast<size_t>(k)];
    tap.index[static_cast<size_t>(k)] = std::clamp<int64_t>(index, 0, in - 1);
  }
  if (c.exclude_outside && sum != 0.0) {
    for (double& w : tap.weight) w /= sum;
  }
  return tap;
}

class CubicResizeKernel final : public Kernel {
 public:
  CubicResizeKernel(const Config& c, const Shape& in) : in_(in), out_(c.out), extrapolation_(c.extrapolation) {
    Shape current = in;
    largest_ = in.num_elements();
    for (int axis = 0; axis < in.rank; ++axis) {
      auto& taps = taps_[static_cast<size_t>(axis)];
      for (int64_t x = 0; x < out_[axis]; ++x) {
        taps.push_back(make_cubic_tap(c, axis, x, in[axis]));
        any_outside_ = any_outside_ || taps.back().outside;
      }
      current[axis] = out_[axis];
      largest_ = std::max(largest_, current.num_elements());
    }
  }

  size_t scratch_bytes() const override { return 2 * static_cast<size_t>(largest_) * sizeof(double); }

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    double* buffers[2] = {static_cast<double*>(args.scratch), static_cast<double*>(args.scratch) + largest_};
    const int64_t count = in_.num_elements();
    for (int64_t e = 0; e < count; ++e) buffers[0][e] = x[e];
    Shape current = in_;
    int source = 0;
    for (int axis = 0; axis < in_.rank; ++axis) {
      resize_axis(axis, current, buffers[source], buffers[1 - source]);
      current[axis] = out_[axis];
      source = 1 - source;
    }
    write_output(buffers[source], static_cast<float*>(args.outputs[0]));
  }

 private:
  /// Resizes `axis` of `src` (shape `current`) into `dst`.
  void resize_axis(int axis, const Shape& current, const double* src, double* dst) const {
    const int64_t outer = current.product(0, axis);
    const int64_t inner = current.product(axis + 1, current.rank);
    const int64_t in = current[axis];
    const auto& taps = taps_[static_cast<size_t>(axis)];
    for (int64_t o = 0; o < outer; ++o) {
      const double* plane = src + o * in * inner;
      for (const CubicTap& tap : taps) {
        for (int64_t i = 0; i < inner; ++i) {
          double sum = 0.0;
          for (size_t k = 0; k < kTaps; ++k) sum += tap.weight[k] * plane[tap.index[k] * inner + i];
          *dst++ = sum;
        }
      }
    }
  }

  /// Rounds to float32; an element at a position outside the input on any axis
  /// (tf_crop_and_resize) takes the extrapolation value.
  void write_output(const double* values, float* y) const {
    const int64_t count = out_.num_elements();
    std::array<int64_t, kMaxRank> index{};
    for (int64_t e = 0; e < count; ++e) {
      bool outside = false;
      for (int a = 0; any_outside_ && a < out_.rank; ++a) {
        outside = outside || taps_[static_cast<size_t>(a)][static_cast<size_t>(index[static_cast<size_t>(a)])].outside;
      }
      y[e] = outside ? extrapolation_ : static_cast<float>(values[e]);
      for (int a = out_.rank - 1; a >= 0 && ++index[static_cast<size_t>(a)] == out_[a]; --a) {
        index[static_cast<size_t>(a)] = 0;
      }
    }
  }

  Shape in_, out_;
  float extrapolation_;
  std::array<std::vector<CubicTap>, kMaxRank> taps_;  // per axis, one per output index
  int64_t largest_ = 0;                               // elements of the largest step
  bool any_outside_ = false;
};

}  // namespace

Prepared prepare_cubic(const Config& c, const Shape& in) { return prepared<CubicResizeKernel>(c, in); }

}  // namespace plugrt::portable::resizing
