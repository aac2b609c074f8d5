// SPDX-License-Identifier: Apache-2.0
// BatchNormalization with training_mode=1, float32, as ONNX's reference computes it:
// each channel's mean and population variance over the batch and spatial axes normalize
// X, and the optional running_mean and running_var outputs blend the inputs' statistics
// with them: input * momentum + current * (1 - momentum).
#include <array>
#include <cmath>

#include "batch_norm_training.h"

namespace plugrt::portable {

namespace {

class BatchNormTrainingKernel final : public Kernel {
 public:
  BatchNormTrainingKernel(int64_t outer, int64_t channels, int64_t inner, double epsilon, double momentum,
                          std::array<bool, 2> running)
      : outer_(outer), channels_(channels), inner_(inner), epsilon_(epsilon), momentum_(momentum), running_(running) {}

  void run(const KernelArgs& args) const override {
    for (int64_t c = 0; c < channels_; ++c) {
      double mean = 0.0, variance = 0.0;
      statistics(static_cast<const float*>(args.inputs[0]), c, &mean, &variance);
      normalize(args, c, mean, variance);
      if (running_[0]) {
        const double running = static_cast<const float*>(args.inputs[3])[c];
        static_cast<float*>(args.outputs[1])[c] = static_cast<float>(running * momentum_ + mean * (1.0 - momentum_));
      }
      if (running_[1]) {
        const double running = static_cast<const float*>(args.inputs[4])[c];
        static_cast<float*>(args.outputs[2])[c] =
            static_cast<float>(running * momentum_ + variance * (1.0 - momentum_));
      }
    }
  }

 private:
  /// The mean and population variance of channel `c`.
  void statistics(const float* x, int64_t c, double* mean, double* variance) const {
    const auto count = static_cast<double>(outer_ * inner_);
    double sum = 0.0;
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) sum += x[(o * channels_ + c) * inner_ + i];
    }
    *mean = count > 0 ? sum / count : 0.0;
    double squares = 0.0;
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) {
        const double d = x[(o * channels_ + c) * inner_ + i] - *mean;
        squares += d * d;
      }
    }
    *variance = count > 0 ? squares / count : 0.0;
  }

  void normalize(const KernelArgs& args, int64_t c, double mean, double variance) const {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const double scale = static_cast<const float*>(args.inputs[1])[c];
    const double bias = static_cast<const float*>(args.inputs[2])[c];
    float* y = static_cast<float*>(args.outputs[0]);
    const double factor = scale / std::sqrt(variance + epsilon_);
    for (int64_t o = 0; o < outer_; ++o) {
      const int64_t base = (o * channels_ + c) * inner_;
      for (int64_t i = 0; i < inner_; ++i) y[base + i] = static_cast<float>((x[base + i] - mean) * factor + bias);
    }
  }

  int64_t outer_, channels_, inner_;
  double epsilon_, momentum_;
  std::array<bool, 2> running_;  // whether running_mean and running_var are there
};

}  // namespace

/// X [N, C, ...], scale, B, input_mean, input_var [C] in; Y and optionally running_mean
/// and running_var [C] out.
Prepared prepare_batch_norm_training(const NodeContext& node) {
  if (std::string why = check_arity(node, 5, 5, 1, 3); !why.empty()) return prepare_error(node, why);
  for (size_t i = 0; i < 5; ++i) {
    if (std::string why = check_dtype("input", i, node.input(i), DType::kFloat32); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  const Shape& shape = node.input(0)->shape;
  if (shape.rank < 2) return prepare_error(node, "in training mode X must have rank 2 or more");
  const Shape params{shape[1]};
  for (size_t i = 1; i < 5; ++i) {
    if (node.input(i)->shape != params) {
      return prepare_error(node, "input " + std::to_string(i) + " has shape " + to_string(node.input(i)->shape) +
                                     "; X " + to_string(shape) + " needs " + to_string(params));
    }
  }
  if (std::string why = check_output(node, 0, shape, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  for (size_t i = 1; i < 3; ++i) {
    if (node.output(i) == nullptr) continue;
    if (std::string why = check_output(node, i, params, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  }
  const double epsilon = node.attr_float("epsilon", 1e-5f);
  const double momentum = node.attr_float("momentum", 0.9f);
  const std::array<bool, 2> running{node.output(1) != nullptr, node.output(2) != nullptr};
  return prepared<BatchNormTrainingKernel>(shape[0], shape[1], shape.product(2, shape.rank), epsilon, momentum,
                                           running);
}

}  // namespace plugrt::portable
