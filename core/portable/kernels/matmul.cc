// SPDX-License-Identifier: Apache-2.0
// Matrix multiplication kernels, float32: Gemm and MatMul, both on gemm_accumulate.
#include <algorithm>

#include "gemm.h"
#include "kernel_families.h"

namespace plugrt::portable {

namespace {

// ---- Gemm: Y = alpha * A' * B' + beta * C -----------------------------------------------

class GemmKernel final : public Kernel {
 public:
  GemmKernel(int64_t m, int64_t n, int64_t k, float alpha, float beta, bool trans_a, bool trans_b, bool has_c,
             const std::array<int64_t, kMaxRank>& c_strides)
      : m_(m),
        n_(n),
        k_(k),
        alpha_(alpha),
        beta_(beta),
        trans_a_(trans_a),
        trans_b_(trans_b),
        has_c_(has_c),
        c_strides_(c_strides) {}

  void run(const KernelArgs& args) const override {
    const float* a = static_cast<const float*>(args.inputs[0]);
    const float* b = static_cast<const float*>(args.inputs[1]);
    const float* c = has_c_ ? static_cast<const float*>(args.inputs[2]) : nullptr;
    float* y = static_cast<float*>(args.outputs[0]);
    for (int64_t i = 0; i < m_; ++i) {
      for (int64_t j = 0; j < n_; ++j) {
        y[i * n_ + j] = c != nullptr ? beta_ * c[i * c_strides_[0] + j * c_strides_[1]] : 0.0f;
      }
    }
    const MatrixRef a_ref{a, trans_a_ ? m_ : k_, trans_a_};
    const MatrixRef b_ref{b, trans_b_ ? k_ : n_, trans_b_};
    gemm_accumulate(m_, n_, k_, alpha_, a_ref, b_ref, y, n_);
  }

 private:
  int64_t m_, n_, k_;
  float alpha_, beta_;
  bool trans_a_, trans_b_, has_c_;
  std::array<int64_t, kMaxRank> c_strides_;  // C read as M x N
};

Prepared prepare_gemm(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 3, 1, 1); !why.empty()) return prepare_error(node, why);
  for (size_t i = 0; i < 3; ++i) {
    if (std::string why = check_dtype("input", i, node.input(i), DType::kFloat32); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  if (node.opset() < 11 && node.input(2) == nullptr)
    return prepare_error(node, "input 2 (C) is required before opset 11");
  const Shape& a = node.input(0)->shape;
  const Shape& b = node.input(1)->shape;
  if (a.rank != 2 || b.rank != 2) {
    return prepare_error(node, "A and B must be 2-D; got " + to_string(a) + " and " + to_string(b));
  }
  const bool trans_a = node.attr_int("transA", 0) != 0;
  const bool trans_b = node.attr_int("transB", 0) != 0;
  const int64_t m = trans_a ? a[1] : a[0];
  const int64_t k = trans_a ? a[0] : a[1];
  const int64_t n = trans_b ? b[0] : b[1];
  if ((trans_b ? b[1] : b[0]) != k) {
    return prepare_error(node, "A " + to_string(a) + " and B " + to_string(b) + " do not multiply with transA " +
                                   std::to_string(trans_a) + " and transB " + std::to_string(trans_b));
  }
  const Shape out{m, n};
  std::array<int64_t, kMaxRank> c_strides{};
  if (const TensorInfo* c = node.input(2); c != nullptr) {
    Shape broadcast;
    if (c->shape.rank > 2 || !broadcast_shapes(c->shape, out, &broadcast) || broadcast != out) {
      return prepare_error(node,
                           "C has shape " + to_string(c->shape) + ", which does not broadcast to " + to_string(out));
    }
    c_strides = broadcast_strides(c->shape, out);
  }
  if (std::string why = check_output(node, 0, out, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  return prepared<GemmKernel>(m, n, k, node.attr_float("alpha", 1.0f), node.attr_float("beta", 1.0f), trans_a, trans_b,
                              node.input(2) != nullptr, c_strides);
}

// ---- MatMul: NumPy matmul, batch dims broadcast -----------------------------------------

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(const Shape& batch, const std::array<int64_t, kMaxRank>& a_strides,
               const std::array<int64_t, kMaxRank>& b_strides, int64_t m, int64_t n, int64_t k, bool shared_b)
      : batch_(batch), m_(m), n_(n), k_(k), shared_b_(shared_b) {
    strides_[0] = a_strides;
    strides_[1] = b_strides;
  }

  void run(const KernelArgs& args) const override {
    const float* a = static_cast<const float*>(args.inputs[0]);
    const float* b = static_cast<const float*>(args.inputs[1]);
    float* y = static_cast<float*>(args.outputs[0]);
    const int64_t count = batch_.num_elements();
    std::fill_n(y, count * m_ * n_, 0.0f);
    if (shared_b_) {  // one B for every batch: stack A's matrices into one tall product
      gemm_accumulate(count * m_, n_, k_, 1.0f, {a, k_}, {b, n_}, y, n_);
      return;
    }
    BroadcastIterator it(batch_, 2, strides_);
    for (int64_t i = 0; i < count; ++i, it.next()) {
      gemm_accumulate(m_, n_, k_, 1.0f, {a + it.offset(0) * m_ * k_, k_}, {b + it.offset(1) * k_ * n_, n_},
                      y + i * m_ * n_, n_);
    }
  }

 private:
  Shape batch_;
  std::array<int64_t, kMaxRank> strides_[2];  // A's and B's strides over batch_, in matrices
  int64_t m_, n_, k_;
  bool shared_b_;
};

/// dims[begin, end) of `shape` as a Shape.
Shape sub_shape(const Shape& shape, int begin, int end) {
  Shape result;
  for (int axis = begin; axis < end; ++axis) result.push_back(shape[axis]);
  return result;
}

Prepared prepare_matmul(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  for (size_t i = 0; i < 2; ++i) {
    if (std::string why = check_dtype("input", i, node.input(i), DType::kFloat32); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  const Shape& a = node.input(0)->shape;
  const Shape& b = node.input(1)->shape;
  if (a.rank < 1 || b.rank < 1) return prepare_error(node, "inputs must have rank 1 or more");
  // A 1-D A is a row (1 x K), a 1-D B a column (K x 1); their unit dims are dropped.
  const int64_t m = a.rank == 1 ? 1 : a[a.rank - 2];
  const int64_t k = a[a.rank - 1];
  const int64_t n = b.rank == 1 ? 1 : b[b.rank - 1];
  const int64_t b_k = b.rank == 1 ? b[0] : b[b.rank - 2];
  if (k != b_k) {
    return prepare_error(node, "shapes " + to_string(a) + " and " + to_string(b) + " do not multiply");
  }
  const Shape a_batch = sub_shape(a, 0, std::max(0, a.rank - 2));
  const Shape b_batch = sub_shape(b, 0, std::max(0, b.rank - 2));
  Shape batch;
  if (!broadcast_shapes(a_batch, b_batch, &batch)) {
    return prepare_error(node, "batch dims of " + to_string(a) + " and " + to_string(b) + " do not broadcast");
  }
  Shape out = batch;
  if (a.rank > 1) out.push_back(m);
  if (b.rank > 1) out.push_back(n);
  if (std::string why = check_output(node, 0, out, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  return prepared<MatMulKernel>(batch, broadcast_strides(a_batch, batch), broadcast_strides(b_batch, batch), m, n, k,
                                b_batch.num_elements() == 1);
}

}  // namespace

void add_matmul_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"Gemm", prepare_gemm});
  table.push_back({"MatMul", prepare_matmul});
}

}  // namespace plugrt::portable
