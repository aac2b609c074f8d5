// SPDX-License-Identifier: Apache-2.0
// Loss kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (the latter is
// the former on the log-softmax of its scores over axis 1). Both reduce with "none",
// "sum" or "mean"; a "mean" with weights or an ignore_index divides by the sum of the
// weights that applied, as ONNX's reference does. Computed in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

enum class Reduction { kNone, kSum, kMean };

/// Scores [N, C, D...] seen as [N, C, D]; targets [N, D...] as [N, D].
struct LossGeometry {
  int64_t n, classes, d;
  Reduction reduction;
  bool has_ignore;
  int64_t ignore_index;
  bool wide_targets;
  bool has_weights;   // input 2 is given
  bool has_log_prob;  // SoftmaxCrossEntropyLoss's output 1 is wanted
};

/// The loss of every (n, d) and its reduction; `log_prob(n, c, d)` gives the log
/// probability. A target outside [0, C) that is not ignore_index adds nothing.
template <typename T, typename LogProb>
void nll(const LossGeometry& g, LogProb log_prob, const void* targets, const T* weights, T* out) {
  double total = 0, weight_total = 0;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t d = 0; d < g.d; ++d) {
      const int64_t at = n * g.d + d;
      const int64_t target =
          g.wide_targets ? static_cast<const int64_t*>(targets)[at] : static_cast<const int32_t*>(targets)[at];
      double weight = 0, loss = 0;
      if (!(g.has_ignore && target == g.ignore_index) && target >= 0 && target < g.classes) {
        weight = weights != nullptr ? static_cast<double>(load(weights[target])) : 1.0;
        loss = -log_prob(n, target, d) * weight;
      }
      if (g.reduction == Reduction::kNone) out[at] = store<T>(loss);
      total += loss;
      weight_total += weight;
    }
  }
  if (g.reduction == Reduction::kSum) out[0] = store<T>(total);
  if (g.reduction == Reduction::kMean) {
    const bool by_weight = weights != nullptr || g.has_ignore;
    out[0] = store<T>(total / (by_weight ? weight_total : static_cast<double>(g.n * g.d)));
  }
}

/// The weights, or null when the node has none (the input list may be shorter).
template <typename T>
const T* weights_of(const LossGeometry& g, const KernelArgs& args) {
  return g.has_weights ? static_cast<const T*>(args.inputs[2]) : nullptr;
}

template <typename T>
class NllKernel final : public Kernel {
 public:
  explicit NllKernel(const LossGeometry& g) : g_(g) {}

  void run(const KernelArgs& args) const override {
    const T* scores = static_cast<const T*>(args.inputs[0]);
    const int64_t classes = g_.classes, d_count = g_.d;
    auto log_prob = [&](int64_t n, int64_t c, int64_t d) {
      return static_cast<double>(load(scores[(n * classes + c) * d_count + d]));
    };
    nll(g_, log_prob, args.inputs[1], weights_of<T>(g_, args), static_cast<T*>(args.outputs[0]));
  }

 private:
  LossGeometry g_;
};

template <typename T>
class SoftmaxCrossEntropyKernel final : public Kernel {
 public:
  explicit SoftmaxCrossEntropyKernel(const LossGeometry& g) : g_(g) {}

  size_t scratch_bytes() const override { return static_cast<size_t>(g_.n * g_.classes * g_.d) * sizeof(double); }

  void run(const KernelArgs& args) const override {
    const T* scores = static_cast<const T*>(args.inputs[0]);
    double* log_probs = static_cast<double*>(args.scratch);
    const int64_t classes = g_.classes, d_count = g_.d;
    for (int64_t n = 0; n < g_.n; ++n) {
      for (int64_t d = 0; d < d_count; ++d) {
        const int64_t base = n * classes * d_count + d;
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < classes; ++c)
          max = std::max(max, static_cast<double>(load(scores[base + c * d_count])));
        double sum = 0;
        for (int64_t c = 0; c < classes; ++c)
          sum += std::exp(static_cast<double>(load(scores[base + c * d_count])) - max);
        const double log_sum = std::log(sum);
        for (int64_t c = 0; c < classes; ++c) {
          log_probs[base + c * d_count] = static_cast<double>(load(scores[base + c * d_count])) - max - log_sum;
        }
      }
    }
    auto log_prob = [&](int64_t n, int64_t c, int64_t d) { return log_probs[(n * classes + c) * d_count + d]; };
    nll(g_, log_prob, args.inputs[1], weights_of<T>(g_, args), static_cast<T*>(args.outputs[0]));
    if (g_.has_log_prob) {
      T* out = static_cast<T*>(args.outputs[1]);
      for (int64_t i = 0; i < g_.n * classes * d_count; ++i) out[i] = store<T>(log_probs[i]);
    }
  }

 private:
  LossGeometry g_;
};

/// Both ops: (scores, targets, optional weights) -> loss (+ log_prob for the softmax one).
template <bool kSoftmax>
Prepared prepare_loss(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 3, 1, kSoftmax ? 2 : 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& scores = *node.input(0);
  const TensorInfo& targets = *node.input(1);
  const TensorInfo* weights = node.input(2);
  if (scores.shape.rank < 2) return prepare_error(node, "the input must have rank 2 or more ([N, C, ...])");
  if (targets.dtype != DType::kInt64 && targets.dtype != DType::kInt32) {
    return prepare_error(node,
                         "the targets (input 1) must be int64 or int32, not " + std::string(to_string(targets.dtype)));
  }
  Shape expected_targets;
  expected_targets.push_back(scores.shape[0]);
  for (int d = 2; d < scores.shape.rank; ++d) expected_targets.push_back(scores.shape[d]);
  if (targets.shape != expected_targets) {
    return prepare_error(node, "the targets have shape " + to_string(targets.shape) + "; the input " +
                                   to_string(scores.shape) + " needs " + to_string(expected_targets));
  }
  if (weights != nullptr && (weights->dtype != scores.dtype || weights->shape != Shape{scores.shape[1]})) {
    return prepare_error(node, "the weights (input 2) must be a 1-D tensor of C = " + std::to_string(scores.shape[1]) +
                                   " elements of the input's dtype");
  }
  LossGeometry g{scores.shape[0],
                 scores.shape[1],
                 scores.shape.product(2, scores.shape.rank),
                 Reduction::kMean,
                 node.has_attribute("ignore_index"),
                 node.attr_int("ignore_index", 0),
                 targets.dtype == DType::kInt64,
                 weights != nullptr,
                 node.output(1) != nullptr};
  const std::string reduction = node.attr_string("reduction", "mean");
  if (reduction == "none")
    g.reduction = Reduction::kNone;
  else if (reduction == "sum")
    g.reduction = Reduction::kSum;
  else if (reduction != "mean")
    return prepare_error(node, "reduction must be none, sum or mean, not " + reduction);
  const Shape loss_shape = g.reduction == Reduction::kNone ? targets.shape : Shape{};
  if (std::string why = check_output(node, 0, loss_shape, scores.dtype); !why.empty()) return prepare_error(node, why);
  if (node.output(1) != nullptr) {
    if (std::string why = check_output(node, 1, scores.shape, scores.dtype); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  return dispatch<kFloatTypes>(node, scores.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kSoftmax) {
      return prepared<SoftmaxCrossEntropyKernel<T>>(g);
    } else {
      return prepared<NllKernel<T>>(g);
    }
  });
}

}  // namespace

void add_loss_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"NegativeLogLikelihoodLoss", prepare_loss<false>});
  table.push_back({"SoftmaxCrossEntropyLoss", prepare_loss<true>});
}

}  // namespace plugrt::portable
