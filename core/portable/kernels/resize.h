// SPDX-License-Identifier: Apache-2.0
// What the Resize kernels share: the modes a node reads, the output size, and ONNX's
// coordinate transformation from an output index to an input position.
#ifndef PLUGRT_PORTABLE_KERNELS_RESIZE_H_
#define PLUGRT_PORTABLE_KERNELS_RESIZE_H_

#include <cstdint>
#include <vector>

#include "../kernel.h"

namespace plugrt::portable::resizing {

enum class Mode { kNearest, kLinear, kCubic };
enum class Transform { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn, kTfCropAndResize };
enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct Config {
  Mode mode = Mode::kNearest;
  Transform transform = Transform::kHalfPixel;
  Rounding rounding = Rounding::kRoundPreferFloor;
  float extrapolation = 0.0f;
  float cubic_a = -0.75f;        // cubic_coeff_a
  bool exclude_outside = false;  // cubic: taps outside the input get weight 0, the rest renormalised
  std::vector<float> scales;     // one per axis: the given scales, or output / input for sizes
  std::vector<float> roi;        // tf_crop_and_resize: starts then ends, one per axis
  Shape out;
};

/// The input coordinate of output index `x` along an axis (ONNX's formulas).
float original_coordinate(const Config& c, int axis, int64_t x, int64_t in, int64_t out);

/// The cubic kernel (resize_cubic.cc) for an input of shape `in`.
Prepared prepare_cubic(const Config& c, const Shape& in);

}  // namespace plugrt::portable::resizing

#endif  // PLUGRT_PORTABLE_KERNELS_RESIZE_H_
