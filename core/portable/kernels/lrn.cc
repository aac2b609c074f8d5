// SPDX-License-Identifier: Apache-2.0
// LRN, local response normalization across channels, float32: each element is divided
// by (bias + alpha / size * the sum of squares over the `size` channels around it)^beta,
// the window running from c - floor((size - 1) / 2) to c + ceil((size - 1) / 2), clipped
// to the channels there are. Sums in double.
#include <algorithm>
#include <cmath>

#include "kernel_families.h"

namespace plugrt::portable {

namespace {

class LrnKernel final : public Kernel {
 public:
  LrnKernel(const Shape& shape, int64_t size, double alpha, double beta, double bias)
      : batch_(shape[0]),
        channels_(shape[1]),
        inner_(shape.product(2, shape.rank)),
        before_((size - 1) / 2),
        after_(size - 1 - (size - 1) / 2),
        scale_(alpha / static_cast<double>(size)),
        beta_(beta),
        bias_(bias) {}

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    for (int64_t n = 0; n < batch_; ++n) {
      const float* plane = x + n * channels_ * inner_;
      for (int64_t c = 0; c < channels_; ++c) {
        const int64_t first = std::max<int64_t>(0, c - before_);
        const int64_t last = std::min(channels_ - 1, c + after_);
        for (int64_t i = 0; i < inner_; ++i) {
          double sum = 0.0;
          for (int64_t k = first; k <= last; ++k)
            sum += static_cast<double>(plane[k * inner_ + i]) * plane[k * inner_ + i];
          const double value = plane[c * inner_ + i];
          y[(n * channels_ + c) * inner_ + i] = static_cast<float>(value / std::pow(bias_ + scale_ * sum, beta_));
        }
      }
    }
  }

 private:
  int64_t batch_, channels_, inner_, before_, after_;
  double scale_, beta_, bias_;
};

Prepared prepare_lrn(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  if (std::string why = check_dtype("input", 0, &x, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  if (x.shape.rank < 3)
    return prepare_error(node, "input has shape " + to_string(x.shape) + "; expected N x C x D1...");
  const int64_t size = node.attr_int("size", 0);
  if (size < 1) return prepare_error(node, "the 'size' attribute is required and must be positive");
  if (std::string why = check_output(node, 0, x.shape, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  return prepared<LrnKernel>(x.shape, size, node.attr_float("alpha", 1e-4f), node.attr_float("beta", 0.75f),
                             node.attr_float("bias", 1.0f));
}

}  // namespace

void add_lrn_kernels(std::vector<KernelEntry>& table) { table.push_back({"LRN", prepare_lrn}); }

}  // namespace plugrt::portable
