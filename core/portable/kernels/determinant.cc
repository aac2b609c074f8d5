// SPDX-License-Identifier: Apache-2.0
// Det: the determinant of each square matrix in the last two axes ([..., M, M] to
// [...]), float32 and double, by LU decomposition with partial pivoting in double.
#include <cmath>
#include <utility>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

/// The determinant of the m x m matrix in `a` (row-major), which it overwrites.
double lu_determinant(double* a, int64_t m) {
  double det = 1.0;
  for (int64_t k = 0; k < m; ++k) {
    int64_t pivot = k;
    for (int64_t r = k + 1; r < m; ++r) {
      if (std::fabs(a[r * m + k]) > std::fabs(a[pivot * m + k])) pivot = r;
    }
    if (a[pivot * m + k] == 0.0) return 0.0;
    if (pivot != k) {
      for (int64_t c = 0; c < m; ++c) std::swap(a[k * m + c], a[pivot * m + c]);
      det = -det;
    }
    det *= a[k * m + k];
    for (int64_t r = k + 1; r < m; ++r) {
      const double factor = a[r * m + k] / a[k * m + k];
      for (int64_t c = k + 1; c < m; ++c) a[r * m + c] -= factor * a[k * m + c];
    }
  }
  return det;
}

template <typename T>
class DetKernel final : public Kernel {
 public:
  DetKernel(int64_t count, int64_t m) : count_(count), m_(m) {}
  size_t scratch_bytes() const override { return static_cast<size_t>(m_ * m_) * sizeof(double); }
  void run(const KernelArgs& args) const override {
    const T* x = static_cast<const T*>(args.inputs[0]);
    T* y = static_cast<T*>(args.outputs[0]);
    auto* a = static_cast<double*>(args.scratch);
    for (int64_t i = 0; i < count_; ++i) {
      for (int64_t e = 0; e < m_ * m_; ++e) a[e] = static_cast<double>(load(x[i * m_ * m_ + e]));
      y[i] = store<T>(lu_determinant(a, m_));
    }
  }

 private:
  int64_t count_, m_;
};

Prepared prepare_det(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  const Shape& shape = x.shape;
  if (shape.rank < 2 || shape[shape.rank - 1] != shape[shape.rank - 2]) {
    return prepare_error(node, "input has shape " + to_string(shape) + "; expected [..., M, M]");
  }
  Shape out;
  for (int a = 0; a < shape.rank - 2; ++a) out.push_back(shape[a]);
  if (std::string why = check_output(node, 0, out, x.dtype); !why.empty()) return prepare_error(node, why);
  return dispatch<kFloatTypes>(node, x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<DetKernel<T>>(out.num_elements(), shape[shape.rank - 1]);
  });
}

}  // namespace

void add_determinant_kernels(std::vector<KernelEntry>& table) { table.push_back({"Det", prepare_det}); }

}  // namespace plugrt::portable
