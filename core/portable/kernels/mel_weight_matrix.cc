// SPDX-License-Identifier: Apache-2.0
// MelWeightMatrix (opset 17): the [dft_length / 2 + 1, num_mel_bins] matrix of
// triangular filters that maps a onesided spectrum to mel bands, as ONNX's reference
// builds it: num_mel_bins + 2 points evenly spaced in mel (2595 log10(1 + f / 700))
// from lower_edge_hertz by (upper - lower) / (num_mel_bins + 2), each turned back into
// hertz and into the spectrum bin floor((dft_length + 1) * f / sample_rate); filter i
// rises from point i to point i + 1 and falls to point i + 2. Its inputs are scalars,
// constants or given at run time; output_datatype is any numeric dtype (float32 by default).
#include <cmath>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

struct MelConfig {
  int64_t mel_bins = 0, dft_length = 0, sample_rate = 0;
  double lower_hertz = 0.0, upper_hertz = 0.0;
};

/// The matrix, row-major [spectrum bins, mel bins], in double.
std::vector<double> mel_matrix(const MelConfig& c) {
  const int64_t spectrum_bins = c.dft_length / 2 + 1;
  std::vector<double> out(static_cast<size_t>(spectrum_bins * c.mel_bins), 0.0);
  const double low_mel = 2595.0 * std::log10(1.0 + c.lower_hertz / 700.0);
  const double high_mel = 2595.0 * std::log10(1.0 + c.upper_hertz / 700.0);
  const double step = (high_mel - low_mel) / static_cast<double>(c.mel_bins + 2);
  std::vector<int64_t> points;
  for (int64_t k = 0; k < c.mel_bins + 2; ++k) {
    const double hertz = 700.0 * (std::pow(10.0, (static_cast<double>(k) * step + low_mel) / 2595.0) - 1.0);
    points.push_back(static_cast<int64_t>(
        std::floor(static_cast<double>(c.dft_length + 1) * hertz / static_cast<double>(c.sample_rate))));
  }
  auto set = [&](int64_t row, int64_t column, double value) {
    if (row >= 0 && row < spectrum_bins) out[static_cast<size_t>(row * c.mel_bins + column)] = value;
  };
  for (int64_t i = 0; i < c.mel_bins; ++i) {
    const int64_t low = points[static_cast<size_t>(i)], center = points[static_cast<size_t>(i + 1)];
    const int64_t high = points[static_cast<size_t>(i + 2)];
    if (center == low) {
      set(center, i, 1.0);
    } else {
      for (int64_t j = low; j <= center; ++j)
        set(j, i, static_cast<double>(j - low) / static_cast<double>(center - low));
    }
    for (int64_t j = center; j < high; ++j)
      set(j, i, static_cast<double>(high - j) / static_cast<double>(high - center));
  }
  return out;
}

template <typename T>
class MelWeightMatrixKernel final : public Kernel {
 public:
  explicit MelWeightMatrixKernel(std::vector<double> values) : values_(std::move(values)) {}
  void run(const KernelArgs& args) const override {
    T* y = static_cast<T*>(args.outputs[0]);
    for (size_t i = 0; i < values_.size(); ++i) y[i] = store<T>(values_[i]);
  }

 private:
  std::vector<double> values_;
};

/// Scalar input `i` as a double: an integer or float32 scalar; nullopt otherwise.
std::optional<double> scalar_value(const NodeContext& node, size_t i) {
  if (node.input(i) == nullptr || node.input(i)->num_elements() != 1) return std::nullopt;
  if (std::optional<std::vector<int64_t>> ints = node.constant_ints(i)) return static_cast<double>((*ints)[0]);
  if (std::optional<std::vector<float>> floats = node.constant_floats(i)) return static_cast<double>((*floats)[0]);
  return std::nullopt;
}

Prepared prepare_mel_weight_matrix(const NodeContext& node) {
  if (std::string why = check_arity(node, 5, 5, 1, 1); !why.empty()) return prepare_error(node, why);
  std::optional<double> values[5];
  for (size_t i = 0; i < 5; ++i) {
    values[i] = scalar_value(node, i);
    if (!values[i]) {
      return prepare_error(node, "input " + std::to_string(i) +
                                     " must be an int32, int64 or float32 scalar, constant or given at run time");
    }
  }
  MelConfig c;
  c.mel_bins = static_cast<int64_t>(*values[0]);
  c.dft_length = static_cast<int64_t>(*values[1]);
  c.sample_rate = static_cast<int64_t>(*values[2]);
  c.lower_hertz = *values[3];
  c.upper_hertz = *values[4];
  if (c.mel_bins < 1 || c.dft_length < 1 || c.sample_rate < 1 || c.mel_bins > (int64_t{1} << 20) ||
      c.dft_length > (int64_t{1} << 24)) {
    return prepare_error(node, "num_mel_bins, dft_length and sample_rate must be positive (and not huge)");
  }
  const auto dtype = static_cast<DType>(node.attr_int("output_datatype", static_cast<int64_t>(DType::kFloat32)));
  const Shape out{c.dft_length / 2 + 1, c.mel_bins};
  if (std::string why = check_output(node, 0, out, dtype); !why.empty()) return prepare_error(node, why);
  return dispatch<kNumericTypes>(node, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<MelWeightMatrixKernel<T>>(mel_matrix(c));
  });
}

}  // namespace

void add_mel_weight_matrix_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"MelWeightMatrix", prepare_mel_weight_matrix});
}

}  // namespace plugrt::portable
