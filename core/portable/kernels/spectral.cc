// SPDX-License-Identifier: Apache-2.0
// DFT and STFT (opset 17), float32 and double, by the direct O(n^2) sum in double.
//
// DFT transforms `axis` of a real ([..., 1]) or complex ([..., 2]) signal to a complex
// one: dft_length points (the signal cut or zero-padded; a constant or given at run
// time), the first dft_length / 2 + 1 of them with onesided, e^(+2 pi i k n / N) / N
// with inverse. STFT transforms frames of [batch, length, 1 or 2]: frame f is the
// frame_length points from f * frame_step, times the window when given (frame_length
// defaults to its length), into [batch, frames, bins, 2]; onesided (the default) keeps
// frame_length / 2 + 1 bins.
#include <cmath>
#include <optional>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

/// One transform along a line: `in` points `stride` apart (complex when `complex_in`),
/// zero past `available`, into `bins` complex outputs `out_stride` apart.
struct Line {
  int64_t length = 0;     // the transform's N
  int64_t available = 0;  // points read from the signal
  int64_t bins = 0;
  bool complex_in = false;
  bool inverse = false;
};

template <typename T>
void transform_line(const Line& line, const T* in, int64_t stride, const T* window, T* out, int64_t out_stride) {
  constexpr double kPi = 3.14159265358979323846;
  const double sign = line.inverse ? 1.0 : -1.0;
  const auto n = static_cast<double>(line.length);
  const int64_t points = line.complex_in ? 2 : 1;
  for (int64_t k = 0; k < line.bins; ++k) {
    double re = 0.0, im = 0.0;
    for (int64_t t = 0; t < line.available; ++t) {
      const double w = window != nullptr ? static_cast<double>(load(window[t])) : 1.0;
      const double a = static_cast<double>(load(in[t * stride * points])) * w;
      const double b = line.complex_in ? static_cast<double>(load(in[t * stride * points + 1])) * w : 0.0;
      const double angle = sign * 2.0 * kPi * static_cast<double>((k * t) % line.length) / n;
      const double c = std::cos(angle), s = std::sin(angle);
      re += a * c - b * s;
      im += a * s + b * c;
    }
    if (line.inverse) {
      re /= n;
      im /= n;
    }
    out[k * out_stride * 2] = store<T>(re);
    out[k * out_stride * 2 + 1] = store<T>(im);
  }
}

template <typename T>
class DftKernel final : public Kernel {
 public:
  DftKernel(const Line& line, const Shape& in, int axis) : line_(line), in_(in), axis_(axis) {}
  void run(const KernelArgs& args) const override {
    const T* x = static_cast<const T*>(args.inputs[0]);
    T* y = static_cast<T*>(args.outputs[0]);
    const int64_t outer = in_.product(0, axis_), inner = in_.product(axis_ + 1, in_.rank - 1);
    const int64_t in_axis = in_[axis_], points = in_[in_.rank - 1];
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        transform_line(line_, x + (o * in_axis * inner + i) * points, inner, static_cast<const T*>(nullptr),
                       y + (o * line_.bins * inner + i) * 2, inner);
      }
    }
  }

 private:
  Line line_;
  Shape in_;
  int axis_;
};

std::optional<int64_t> scalar_input(const NodeContext& node, size_t i) {
  if (node.input(i) == nullptr || node.input(i)->num_elements() != 1) return std::nullopt;
  std::optional<std::vector<int64_t>> values = node.constant_ints(i);
  if (!values) return std::nullopt;
  return (*values)[0];
}

Prepared prepare_dft(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  const Shape& shape = x.shape;
  if (shape.rank < 3 || (shape[shape.rank - 1] != 1 && shape[shape.rank - 1] != 2)) {
    return prepare_error(node, "input has shape " + to_string(shape) + "; expected [batch, ..., 1 or 2]");
  }
  int axis = 0;
  if (!normalize_axis(node.attr_int("axis", 1), shape.rank, &axis) || axis == 0 || axis == shape.rank - 1) {
    return prepare_error(node, "axis must name a signal dimension of " + to_string(shape));
  }
  Line line;
  line.length = shape[axis];
  if (node.input(1) != nullptr) {
    const std::optional<int64_t> length = scalar_input(node, 1);
    if (!length || *length < 1)
      return prepare_error(node, "dft_length must be a positive int scalar, constant or given at run time");
    line.length = *length;
  }
  line.available = std::min(line.length, shape[axis]);
  line.complex_in = shape[shape.rank - 1] == 2;
  line.inverse = node.attr_int("inverse", 0) != 0;
  const bool onesided = node.attr_int("onesided", 0) != 0;
  if (onesided && (line.complex_in || line.inverse)) {
    return prepare_error(node, "onesided is only supported for a real forward transform");
  }
  line.bins = onesided ? line.length / 2 + 1 : line.length;
  Shape out = shape;
  out[axis] = line.bins;
  out[shape.rank - 1] = 2;
  if (std::string why = check_output(node, 0, out, x.dtype); !why.empty()) return prepare_error(node, why);
  return dispatch<kFloat32Only | kDoubleType>(node, x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<DftKernel<T>>(line, shape, axis);
  });
}

template <typename T>
class StftKernel final : public Kernel {
 public:
  StftKernel(const Line& line, int64_t batch, int64_t length, int64_t frames, int64_t step, bool window)
      : line_(line), batch_(batch), length_(length), frames_(frames), step_(step), window_(window) {}
  void run(const KernelArgs& args) const override {
    const T* x = static_cast<const T*>(args.inputs[0]);
    const T* window = window_ ? static_cast<const T*>(args.inputs[2]) : nullptr;
    T* y = static_cast<T*>(args.outputs[0]);
    const int64_t points = line_.complex_in ? 2 : 1;
    for (int64_t b = 0; b < batch_; ++b) {
      for (int64_t f = 0; f < frames_; ++f) {
        transform_line(line_, x + (b * length_ + f * step_) * points, 1, window, y + (b * frames_ + f) * line_.bins * 2,
                       1);
      }
    }
  }

 private:
  Line line_;
  int64_t batch_, length_, frames_, step_;
  bool window_;  // whether the window input is there
};

Prepared prepare_stft(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 4, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  const Shape& shape = x.shape;
  if (shape.rank != 3 || (shape[2] != 1 && shape[2] != 2)) {
    return prepare_error(node, "signal has shape " + to_string(shape) + "; expected [batch, length, 1 or 2]");
  }
  const std::optional<int64_t> step = scalar_input(node, 1);
  if (!step || *step < 1)
    return prepare_error(node, "frame_step must be a positive int scalar, constant or given at run time");
  const TensorInfo* window = node.input(2);
  if (window != nullptr && (window->shape.rank != 1 || window->dtype != x.dtype)) {
    return prepare_error(node, "window must be 1-D of the signal's dtype");
  }
  Line line;
  if (node.input(3) != nullptr) {
    const std::optional<int64_t> frame = scalar_input(node, 3);
    if (!frame) return prepare_error(node, "frame_length must be an int scalar, constant or given at run time");
    line.length = *frame;
  } else if (window != nullptr) {
    line.length = window->shape[0];
  }
  if (line.length < 1 || line.length > shape[1] || (window != nullptr && window->shape[0] != line.length)) {
    return prepare_error(node, "frame_length must be between 1 and the signal's length, and the window's length");
  }
  line.available = line.length;
  line.complex_in = shape[2] == 2;
  const bool onesided = node.attr_int("onesided", 1) != 0;
  if (onesided && line.complex_in) return prepare_error(node, "onesided is only supported for a real signal");
  line.bins = onesided ? line.length / 2 + 1 : line.length;
  const int64_t frames = (shape[1] - line.length) / *step + 1;
  if (std::string why = check_output(node, 0, Shape{shape[0], frames, line.bins, 2}, x.dtype); !why.empty()) {
    return prepare_error(node, why);
  }
  return dispatch<kFloat32Only | kDoubleType>(node, x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<StftKernel<T>>(line, shape[0], shape[1], frames, *step, window != nullptr);
  });
}

}  // namespace

void add_spectral_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"DFT", prepare_dft});
  table.push_back({"STFT", prepare_stft});
}

}  // namespace plugrt::portable
