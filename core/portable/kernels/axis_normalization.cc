// SPDX-License-Identifier: Apache-2.0
// Normalizations over chosen axes, float32: InstanceNormalization (which GroupNorm
// exports as), MeanVarianceNormalization and LpNormalization. Statistics are summed in
// double, as LayerNormalization's are.
#include <algorithm>
#include <cmath>

#include "kernel_families.h"

namespace plugrt::portable {

namespace {

// ---- InstanceNormalization ------------------------------------------------------------

/// y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c], with mean and variance over
/// the spatial elements of each (n, c): the input is seen as [n * channels, inner].
class InstanceNormKernel final : public Kernel {
 public:
  InstanceNormKernel(int64_t instances, int64_t channels, int64_t inner, float epsilon)
      : instances_(instances), channels_(channels), inner_(inner), epsilon_(epsilon) {}

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* scale = static_cast<const float*>(args.inputs[1]);
    const float* bias = static_cast<const float*>(args.inputs[2]);
    float* y = static_cast<float*>(args.outputs[0]);
    for (int64_t i = 0; i < instances_; ++i) {
      const int64_t c = i % channels_;
      const float* row = x + i * inner_;
      double sum = 0;
      for (int64_t k = 0; k < inner_; ++k) sum += row[k];
      const double mean = inner_ > 0 ? sum / static_cast<double>(inner_) : 0.0;
      double squares = 0;
      for (int64_t k = 0; k < inner_; ++k) squares += (row[k] - mean) * (row[k] - mean);
      const double variance = inner_ > 0 ? squares / static_cast<double>(inner_) : 0.0;
      const double factor = scale[c] / std::sqrt(variance + epsilon_);
      for (int64_t k = 0; k < inner_; ++k) y[i * inner_ + k] = static_cast<float>((row[k] - mean) * factor) + bias[c];
    }
  }

 private:
  int64_t instances_, channels_, inner_;
  float epsilon_;
};

Prepared prepare_instance_norm(const NodeContext& node) {
  if (std::string why = check_arity(node, 3, 3, 1, 1); !why.empty()) return prepare_error(node, why);
  for (size_t i = 0; i < 3; ++i) {
    if (std::string why = check_dtype("input", i, node.input(i), DType::kFloat32); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  const Shape& shape = node.input(0)->shape;
  if (shape.rank < 2) return prepare_error(node, "input must have rank 2 or more (N, C, ...); got " + to_string(shape));
  for (size_t i = 1; i < 3; ++i) {
    if (node.input(i)->shape != Shape{shape[1]}) {
      return prepare_error(node, std::string(i == 1 ? "scale" : "B") + " has shape " + to_string(node.input(i)->shape) +
                                     "; input " + to_string(shape) + " needs [" + std::to_string(shape[1]) + "]");
    }
  }
  if (std::string why = check_output(node, 0, shape, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  return prepared<InstanceNormKernel>(shape[0] * shape[1], shape[1], shape.product(2, shape.rank),
                                      node.attr_float("epsilon", 1e-5f));
}

// ---- MeanVarianceNormalization --------------------------------------------------------

/// y = (x - mean) / sqrt(variance), the statistics over `axes`. Each statistic lives in a
/// tensor shaped like x with the reduced axes set to 1; broadcast strides map every
/// element to its group, so any set of axes takes one loop.
class MeanVarianceKernel final : public Kernel {
 public:
  MeanVarianceKernel(const Shape& shape, const Shape& groups)
      : shape_(shape), groups_(groups.num_elements()), per_group_(groups_ > 0 ? shape.num_elements() / groups_ : 0) {
    strides_[0] = broadcast_strides(groups, shape);
  }

  size_t scratch_bytes() const override { return static_cast<size_t>(2 * groups_) * sizeof(double); }

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    double* mean = static_cast<double*>(args.scratch);
    double* scale = mean + groups_;
    const int64_t count = shape_.num_elements();
    std::fill_n(mean, 2 * groups_, 0.0);
    BroadcastIterator sum_it(shape_, 1, strides_);
    for (int64_t i = 0; i < count; ++i, sum_it.next()) mean[sum_it.offset(0)] += x[i];
    for (int64_t g = 0; g < groups_; ++g) mean[g] /= static_cast<double>(per_group_);
    BroadcastIterator var_it(shape_, 1, strides_);
    for (int64_t i = 0; i < count; ++i, var_it.next()) {
      const double d = x[i] - mean[var_it.offset(0)];
      scale[var_it.offset(0)] += d * d;
    }
    // A constant group has x - mean = 0 everywhere: it maps to 0, not 0 / 0.
    for (int64_t g = 0; g < groups_; ++g) {
      const double std_dev = std::sqrt(scale[g] / static_cast<double>(per_group_));
      scale[g] = std_dev > 0 ? 1.0 / std_dev : 0.0;
    }
    BroadcastIterator out_it(shape_, 1, strides_);
    for (int64_t i = 0; i < count; ++i, out_it.next()) {
      const int64_t g = out_it.offset(0);
      y[i] = static_cast<float>((x[i] - mean[g]) * scale[g]);
    }
  }

 private:
  Shape shape_;
  int64_t groups_, per_group_;
  std::array<int64_t, kMaxRank> strides_[1]{};
};

Prepared prepare_mean_variance(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_dtype("input", 0, node.input(0), DType::kFloat32); !why.empty()) {
    return prepare_error(node, why);
  }
  const Shape& shape = node.input(0)->shape;
  std::vector<int64_t> axes = node.attr_ints("axes");
  if (!node.has_attribute("axes")) axes = {0, 2, 3};
  Shape groups = shape;
  for (int64_t axis : axes) {
    int a = 0;
    if (!normalize_axis(axis, shape.rank, &a)) {
      return prepare_error(node, "axis " + std::to_string(axis) + " is out of range for input " + to_string(shape));
    }
    groups[a] = 1;
  }
  if (std::string why = check_output(node, 0, shape, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  return prepared<MeanVarianceKernel>(shape, groups);
}

// ---- LpNormalization ------------------------------------------------------------------

/// y = x / ||x||_p along one axis: the input is seen as [outer, length, inner].
class LpNormKernel final : public Kernel {
 public:
  LpNormKernel(int64_t outer, int64_t length, int64_t inner, int64_t p)
      : outer_(outer), length_(length), inner_(inner), p_(p) {}

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) {
        const int64_t base = o * length_ * inner_ + i;
        double norm = 0;
        for (int64_t k = 0; k < length_; ++k) {
          const double v = x[base + k * inner_];
          norm += p_ == 1 ? std::fabs(v) : v * v;
        }
        if (p_ == 2) norm = std::sqrt(norm);
        // A zero vector stays zero rather than becoming 0 / 0.
        const double inverse = norm > 0 ? 1.0 / norm : 0.0;
        for (int64_t k = 0; k < length_; ++k) {
          y[base + k * inner_] = static_cast<float>(x[base + k * inner_] * inverse);
        }
      }
    }
  }

 private:
  int64_t outer_, length_, inner_, p_;
};

Prepared prepare_lp_norm(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_dtype("input", 0, node.input(0), DType::kFloat32); !why.empty()) {
    return prepare_error(node, why);
  }
  const Shape& shape = node.input(0)->shape;
  const int64_t axis = node.attr_int("axis", -1);
  int a = 0;
  if (!normalize_axis(axis, shape.rank, &a)) {
    return prepare_error(node, "axis " + std::to_string(axis) + " is out of range for input " + to_string(shape));
  }
  const int64_t p = node.attr_int("p", 2);
  if (p != 1 && p != 2) return prepare_error(node, "p must be 1 or 2; got " + std::to_string(p));
  if (std::string why = check_output(node, 0, shape, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  return prepared<LpNormKernel>(shape.product(0, a), shape[a], shape.product(a + 1, shape.rank), p);
}

}  // namespace

void add_axis_normalization_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"InstanceNormalization", prepare_instance_norm});
  table.push_back({"LpNormalization", prepare_lp_norm});
  table.push_back({"MeanVarianceNormalization", prepare_mean_variance});
}

}  // namespace plugrt::portable
