// SPDX-License-Identifier: Apache-2.0
// Normalization kernels: BatchNormalization (inference) and LayerNormalization.
#include <cmath>

#include "batch_norm_training.h"
#include "kernel_families.h"

namespace plugrt::portable {

namespace {

// ---- BatchNormalization ---------------------------------------------------------------

/// y = (x - mean[p]) * scale[p] / sqrt(var[p] + epsilon) + B[p], where the input is seen
/// as [outer, params, inner] and p indexes the middle dimension.
class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(int64_t outer, int64_t params, int64_t inner, float epsilon)
      : outer_(outer), params_(params), inner_(inner), epsilon_(epsilon) {}

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* scale = static_cast<const float*>(args.inputs[1]);
    const float* bias = static_cast<const float*>(args.inputs[2]);
    const float* mean = static_cast<const float*>(args.inputs[3]);
    const float* var = static_cast<const float*>(args.inputs[4]);
    float* y = static_cast<float*>(args.outputs[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t p = 0; p < params_; ++p) {
        const float factor = static_cast<float>(scale[p] / std::sqrt(static_cast<double>(var[p]) + epsilon_));
        const int64_t base = (o * params_ + p) * inner_;
        for (int64_t i = base; i < base + inner_; ++i) y[i] = (x[i] - mean[p]) * factor + bias[p];
      }
    }
  }

 private:
  int64_t outer_, params_, inner_;
  float epsilon_;
};

/// Inference (training_mode=1: batch_norm_training.cc): X, scale, B, input_mean, input_var in; Y out. Opsets 7 and 8
/// have `spatial`: 0 gives one parameter per element of dims[1:] instead of per channel.
Prepared prepare_batch_norm(const NodeContext& node) {
  if (node.opset() >= 14 && node.attr_int("training_mode", 0) != 0) return prepare_batch_norm_training(node);
  if (std::string why = check_arity(node, 5, 5, 1, 5); !why.empty()) return prepare_error(node, why);
  for (size_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output(i) != nullptr) {
      return prepare_error(
          node, "only inference is supported: output " + std::to_string(i) + " (a training statistic) must be absent");
    }
  }
  if (node.attr_int("training_mode", 0) != 0) {
    return prepare_error(node, "training_mode=1 needs opset 14 or later");
  }
  const int64_t spatial = node.opset() < 9 ? node.attr_int("spatial", 1) : 1;
  if (spatial != 0 && spatial != 1) return prepare_error(node, "spatial must be 0 or 1");
  for (size_t i = 0; i < 5; ++i) {
    if (std::string why = check_dtype("input", i, node.input(i), DType::kFloat32); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  const Shape& shape = node.input(0)->shape;
  if (shape.rank < 1) return prepare_error(node, "X must have rank 1 or more");
  // A 1-D input [N] has one channel.
  Shape params{1};
  int64_t outer = shape[0], inner = 1;
  if (shape.rank >= 2 && spatial == 1) {
    params = Shape{shape[1]};
    inner = shape.product(2, shape.rank);
  } else if (shape.rank >= 2) {
    params = Shape();
    for (int a = 1; a < shape.rank; ++a) params.push_back(shape[a]);
  }
  static const char* const kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    if (node.input(i)->shape != params) {
      return prepare_error(node, std::string(kNames[i]) + " has shape " + to_string(node.input(i)->shape) + "; X " +
                                     to_string(shape) + " needs " + to_string(params));
    }
  }
  if (std::string why = check_output(node, 0, shape, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  return prepared<BatchNormKernel>(outer, params.num_elements(), inner, node.attr_float("epsilon", 1e-5f));
}

// ---- LayerNormalization ---------------------------------------------------------------

/// Normalizes each of `rows` rows of `length` elements; scale and bias broadcast to X.
class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(const NodeContext& node, int64_t rows, float epsilon)
      : x_(node.input(0)->shape),
        rows_(rows),
        length_(rows > 0 ? x_.num_elements() / rows : 0),
        epsilon_(epsilon),
        has_bias_(node.input(2) != nullptr),
        has_mean_(node.output(1) != nullptr),
        has_inv_std_(node.output(2) != nullptr) {
    strides_[0] = broadcast_strides(node.input(1)->shape, x_);
    if (has_bias_) strides_[1] = broadcast_strides(node.input(2)->shape, x_);
  }

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* scale = static_cast<const float*>(args.inputs[1]);
    const float* bias = has_bias_ ? static_cast<const float*>(args.inputs[2]) : nullptr;
    float* y = static_cast<float*>(args.outputs[0]);
    float* mean_out = has_mean_ ? static_cast<float*>(args.outputs[1]) : nullptr;
    float* inv_std_out = has_inv_std_ ? static_cast<float*>(args.outputs[2]) : nullptr;
    BroadcastIterator it(x_, 2, strides_);
    for (int64_t r = 0; r < rows_; ++r) {
      const float* row = x + r * length_;
      double sum = 0;
      for (int64_t k = 0; k < length_; ++k) sum += row[k];
      const double mean = sum / static_cast<double>(length_);
      double squares = 0;
      for (int64_t k = 0; k < length_; ++k) squares += (row[k] - mean) * (row[k] - mean);
      const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(length_) + epsilon_);
      for (int64_t k = 0; k < length_; ++k, it.next()) {
        const float b = bias != nullptr ? bias[it.offset(1)] : 0.0f;
        y[r * length_ + k] = static_cast<float>((row[k] - mean) * inv_std) * scale[it.offset(0)] + b;
      }
      if (mean_out != nullptr) mean_out[r] = static_cast<float>(mean);
      if (inv_std_out != nullptr) inv_std_out[r] = static_cast<float>(inv_std);
    }
  }

 private:
  Shape x_;
  int64_t rows_, length_;
  float epsilon_;
  bool has_bias_, has_mean_, has_inv_std_;
  std::array<int64_t, kMaxRank> strides_[2]{};
};

/// LayerNormalization (opset 17): X, Scale, optional B in; Y, optional Mean and
/// InvStdDev (shape: X's dims before axis, then 1s) out.
Prepared prepare_layer_norm(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 3, 1, 3); !why.empty()) return prepare_error(node, why);
  for (size_t i = 0; i < 3; ++i) {
    if (std::string why = check_dtype("input", i, node.input(i), DType::kFloat32); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  if (node.attr_int("stash_type", 1) != 1) return prepare_error(node, "only stash_type=1 (float32) is supported");
  const Shape& shape = node.input(0)->shape;
  const int64_t axis = node.attr_int("axis", -1);
  int a = 0;
  if (!normalize_axis(axis, shape.rank, &a)) {
    return prepare_error(node,
                         "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(shape.rank));
  }
  // Scale and B broadcast to X along the normalized dimensions only.
  Shape normalized;
  for (int d = a; d < shape.rank; ++d) normalized.push_back(shape[d]);
  const Shape bias = node.input(2) != nullptr ? node.input(2)->shape : Shape();
  for (size_t i = 1; i < 3; ++i) {
    const Shape& param = i == 1 ? node.input(1)->shape : bias;
    Shape joined;
    if (param.rank > normalized.rank || !broadcast_shapes(param, normalized, &joined) || joined != normalized) {
      return prepare_error(node, std::string(i == 1 ? "Scale" : "B") + " has shape " + to_string(param) +
                                     ", which does not broadcast to the normalized dimensions " +
                                     to_string(normalized));
    }
  }
  if (std::string why = check_output(node, 0, shape, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  Shape stats;
  for (int d = 0; d < shape.rank; ++d) stats.push_back(d < a ? shape[d] : 1);
  for (size_t i = 1; i < 3; ++i) {
    if (node.output(i) == nullptr) continue;
    if (std::string why = check_output(node, i, stats, DType::kFloat32); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  return prepared<LayerNormKernel>(node, shape.product(0, a), node.attr_float("epsilon", 1e-5f));
}

}  // namespace

void add_normalization_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"BatchNormalization", prepare_batch_norm});
  table.push_back({"LayerNormalization", prepare_layer_norm});
}

}  // namespace plugrt::portable
