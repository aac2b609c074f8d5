// SPDX-License-Identifier: Apache-2.0
// GridSample (opset 16): X [N, C, H, W] sampled at the grid's [N, H_out, W_out, 2]
// normalized (x, y) positions, float types, computed in double as ONNX's reference and
// ONNX Runtime do: modes bilinear, nearest (halves to even) and bicubic (Keys, a =
// -0.75, over the 4 x 4 pixels around the position); padding zeros, border (positions
// and pixels clamped to the edge) or reflection (off the image borders, which are the
// outer pixel edges, or the outer pixel centres with align_corners).
#include <algorithm>
#include <array>
#include <cmath>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

enum class SampleMode { kBilinear, kNearest, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

/// `x` folded into [low, high] by reflection off both ends.
double reflect(double x, double low, double high) {
  const double range = high - low;
  if (range <= 0.0) return low;
  if (x >= low && x <= high) return x;
  const double distance = x < low ? low - x : x - high;
  const double turns = std::floor(distance / range);
  const double rest = distance - turns * range;
  const bool even = std::fmod(turns, 2.0) == 0.0;
  if (x < low) return even ? low + rest : high - rest;
  return even ? high - rest : low + rest;
}

std::array<double, 4> cubic_weights(double t) {
  constexpr double kA = -0.75;
  t = std::fabs(t);
  const double t1 = t + 1.0, u = 1.0 - t, u1 = 2.0 - t;
  return {((kA * t1 - 5.0 * kA) * t1 + 8.0 * kA) * t1 - 4.0 * kA, ((kA + 2.0) * t - (kA + 3.0)) * t * t + 1.0,
          ((kA + 2.0) * u - (kA + 3.0)) * u * u + 1.0, ((kA * u1 - 5.0 * kA) * u1 + 8.0 * kA) * u1 - 4.0 * kA};
}

struct SampleConfig {
  SampleMode mode = SampleMode::kBilinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

template <typename T>
class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(const SampleConfig& c, const Shape& x, const Shape& grid)
      : c_(c), n_(x[0]), channels_(x[1]), h_(x[2]), w_(x[3]), h_out_(grid[1]), w_out_(grid[2]) {
    low_x_ = c.align_corners ? 0.0 : -0.5;
    high_x_ = c.align_corners ? static_cast<double>(w_ - 1) : static_cast<double>(w_) - 0.5;
    low_y_ = c.align_corners ? 0.0 : -0.5;
    high_y_ = c.align_corners ? static_cast<double>(h_ - 1) : static_cast<double>(h_) - 0.5;
  }

  void run(const KernelArgs& args) const override {
    const T* x = static_cast<const T*>(args.inputs[0]);
    const T* grid = static_cast<const T*>(args.inputs[1]);
    T* y = static_cast<T*>(args.outputs[0]);
    for (int64_t n = 0; n < n_; ++n) {
      for (int64_t c = 0; c < channels_; ++c) {
        const T* image = x + (n * channels_ + c) * h_ * w_;
        const T* points = grid + n * h_out_ * w_out_ * 2;
        for (int64_t p = 0; p < h_out_ * w_out_; ++p) {
          *y++ = store<T>(sample(image, load(points[2 * p]), load(points[2 * p + 1])));
        }
      }
    }
  }

 private:
  double denormalize(double v, int64_t length) const {
    const auto l = static_cast<double>(length);
    return c_.align_corners ? (v + 1.0) / 2.0 * (l - 1.0) : ((v + 1.0) * l - 1.0) / 2.0;
  }

  double pixel(const T* image, int64_t r, int64_t col) const {
    switch (c_.padding) {
      case Padding::kZeros:
        if (col < 0 || col >= w_ || r < 0 || r >= h_) return 0.0;
        break;
      case Padding::kBorder:
        col = std::clamp<int64_t>(col, 0, w_ - 1);
        r = std::clamp<int64_t>(r, 0, h_ - 1);
        break;
      case Padding::kReflection:
        col = std::clamp<int64_t>(static_cast<int64_t>(reflect(static_cast<double>(col), low_x_, high_x_)), 0, w_ - 1);
        r = std::clamp<int64_t>(static_cast<int64_t>(reflect(static_cast<double>(r), low_y_, high_y_)), 0, h_ - 1);
        break;
    }
    return static_cast<double>(load(image[r * w_ + col]));
  }

  double sample(const T* image, double nx, double ny) const {
    double x = denormalize(nx, w_), y = denormalize(ny, h_);
    if (c_.mode == SampleMode::kNearest) {
      x = std::nearbyint(x);
      y = std::nearbyint(y);
    }
    if (!std::isfinite(x) || !std::isfinite(y)) return 0.0;
    if (x < low_x_ || x > high_x_ || y < low_y_ || y > high_y_) {
      if (c_.padding == Padding::kBorder) {
        x = std::clamp(x, 0.0, static_cast<double>(w_ - 1));
        y = std::clamp(y, 0.0, static_cast<double>(h_ - 1));
      } else if (c_.padding == Padding::kReflection) {
        x = reflect(x, low_x_, high_x_);
        y = reflect(y, low_y_, high_y_);
      }
    }
    // Far outside with zeros padding: every tap reads 0 (and the casts stay in range).
    x = std::clamp(x, -4.0, static_cast<double>(w_) + 4.0);
    y = std::clamp(y, -4.0, static_cast<double>(h_) + 4.0);
    switch (c_.mode) {
      case SampleMode::kNearest: return pixel(image, static_cast<int64_t>(y), static_cast<int64_t>(x));
      case SampleMode::kBilinear: return bilinear(image, x, y);
      case SampleMode::kBicubic: return bicubic(image, x, y);
    }
    return 0.0;
  }

  double bilinear(const T* image, double x, double y) const {
    const auto x1 = static_cast<int64_t>(std::floor(x)), y1 = static_cast<int64_t>(std::floor(y));
    const double dx1 = x - static_cast<double>(x1), dx2 = static_cast<double>(x1 + 1) - x;
    const double dy1 = y - static_cast<double>(y1), dy2 = static_cast<double>(y1 + 1) - y;
    return dy2 * (dx2 * pixel(image, y1, x1) + dx1 * pixel(image, y1, x1 + 1)) +
           dy1 * (dx2 * pixel(image, y1 + 1, x1) + dx1 * pixel(image, y1 + 1, x1 + 1));
  }

  double bicubic(const T* image, double x, double y) const {
    const int64_t x0 = static_cast<int64_t>(std::floor(x)) - 1, y0 = static_cast<int64_t>(std::floor(y)) - 1;
    const std::array<double, 4> wx = cubic_weights(x - static_cast<double>(x0) - 1.0);
    const std::array<double, 4> wy = cubic_weights(y - static_cast<double>(y0) - 1.0);
    double sum = 0.0;
    for (int64_t i = 0; i < 4; ++i) {
      double row = 0.0;
      for (int64_t j = 0; j < 4; ++j) row += wx[static_cast<size_t>(j)] * pixel(image, y0 + i, x0 + j);
      sum += wy[static_cast<size_t>(i)] * row;
    }
    return sum;
  }

  SampleConfig c_;
  int64_t n_, channels_, h_, w_, h_out_, w_out_;
  double low_x_, high_x_, low_y_, high_y_;  // the borders reflection folds into
};

std::string read_sample_config(const NodeContext& node, SampleConfig* c) {
  const std::string mode = node.attr_string("mode", "bilinear");
  if (mode == "bilinear") {
    c->mode = SampleMode::kBilinear;
  } else if (mode == "nearest") {
    c->mode = SampleMode::kNearest;
  } else if (mode == "bicubic") {
    c->mode = SampleMode::kBicubic;
  } else {
    return "mode '" + mode + "' is not bilinear, nearest or bicubic";
  }
  const std::string padding = node.attr_string("padding_mode", "zeros");
  if (padding == "zeros") {
    c->padding = Padding::kZeros;
  } else if (padding == "border") {
    c->padding = Padding::kBorder;
  } else if (padding == "reflection") {
    c->padding = Padding::kReflection;
  } else {
    return "padding_mode '" + padding + "' is not zeros, border or reflection";
  }
  c->align_corners = node.attr_int("align_corners", 0) != 0;
  return {};
}

Prepared prepare_grid_sample(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  const TensorInfo& grid = *node.input(1);
  if (x.shape.rank != 4) return prepare_error(node, "X has shape " + to_string(x.shape) + "; expected [N, C, H, W]");
  if (grid.shape.rank != 4 || grid.shape[0] != x.shape[0] || grid.shape[3] != 2 || grid.dtype != x.dtype) {
    return prepare_error(node,
                         "grid has shape " + to_string(grid.shape) + "; expected [N, H_out, W_out, 2] of X's dtype");
  }
  if (x.shape[2] == 0 || x.shape[3] == 0) return prepare_error(node, "X is empty: " + to_string(x.shape));
  SampleConfig c;
  if (std::string why = read_sample_config(node, &c); !why.empty()) return prepare_error(node, why);
  const Shape out{x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]};
  if (std::string why = check_output(node, 0, out, x.dtype); !why.empty()) return prepare_error(node, why);
  return dispatch<kFloatTypes>(node, x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<GridSampleKernel<T>>(c, x.shape, grid.shape);
  });
}

}  // namespace

void add_grid_sample_kernels(std::vector<KernelEntry>& table) { table.push_back({"GridSample", prepare_grid_sample}); }

}  // namespace plugrt::portable
