// SPDX-License-Identifier: Apache-2.0
// The window functions of opset 17: HannWindow, HammingWindow and BlackmanWindow.
//
// Each takes its length as a scalar (int32 or int64, a constant or given at run time)
// and writes that many values of output_datatype (any numeric dtype; float32 by
// default), computed in double as ONNX's reference does: n over N = size, or size - 1
// when periodic is 0.
#include <cmath>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

enum class Window { kHann, kHamming, kBlackman };

/// The window's value at `n` of a period `period`.
double window_value(Window window, double n, double period) {
  if (period == 0.0) return 1.0;  // a symmetric window of one value
  constexpr double kPi = 3.14159265358979323846;
  const double phase = n * kPi * 2.0 / period;
  switch (window) {
    case Window::kHann: {
      const double s = std::sin(n * kPi / period);
      return s * s;
    }
    case Window::kHamming: {
      constexpr double kAlpha = 25.0 / 46.0;
      return kAlpha - std::cos(phase) * (1.0 - kAlpha);
    }
    case Window::kBlackman: return std::cos(phase) * -0.5 + std::cos(n * kPi * 4.0 / period) * 0.08 + 0.42;
  }
  return 0.0;
}

template <typename T>
class WindowKernel final : public Kernel {
 public:
  WindowKernel(Window window, int64_t size, double period) : window_(window), size_(size), period_(period) {}
  void run(const KernelArgs& args) const override {
    T* y = static_cast<T*>(args.outputs[0]);
    for (int64_t n = 0; n < size_; ++n) y[n] = store<T>(window_value(window_, static_cast<double>(n), period_));
  }

 private:
  Window window_;
  int64_t size_;
  double period_;
};

Prepared prepare_window(const NodeContext& node, Window window) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  if (node.input(0)->num_elements() != 1) return prepare_error(node, "size must be a scalar");
  const std::optional<std::vector<int64_t>> size = node.constant_ints(0);
  if (!size) return prepare_error(node, "size must be an int32 or int64 constant or given at run time");
  const int64_t length = (*size)[0];
  if (length < 0) return prepare_error(node, "size is " + std::to_string(length) + "; it must not be negative");
  const auto dtype = static_cast<DType>(node.attr_int("output_datatype", static_cast<int64_t>(DType::kFloat32)));
  if (std::string why = check_output(node, 0, Shape{length}, dtype); !why.empty()) return prepare_error(node, why);
  const bool periodic = node.attr_int("periodic", 1) != 0;
  const auto period = static_cast<double>(periodic ? length : length - 1);
  return dispatch<kNumericTypes>(node, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<WindowKernel<T>>(window, length, period);
  });
}

Prepared prepare_hann_window(const NodeContext& node) { return prepare_window(node, Window::kHann); }
Prepared prepare_hamming_window(const NodeContext& node) { return prepare_window(node, Window::kHamming); }
Prepared prepare_blackman_window(const NodeContext& node) { return prepare_window(node, Window::kBlackman); }

}  // namespace

void add_window_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"BlackmanWindow", prepare_blackman_window});
  table.push_back({"HammingWindow", prepare_hamming_window});
  table.push_back({"HannWindow", prepare_hann_window});
}

}  // namespace plugrt::portable
