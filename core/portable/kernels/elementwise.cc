// Elementwise kernels: unary math, binary arithmetic with broadcasting, comparisons.
#include <algorithm>
#include <cmath>

#include "kernel_families.h"

namespace plugrt::portable {

namespace {

// ---- Binary arithmetic, NumPy broadcasting -------------------------------------------

template <typename T, typename Op>
class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(const Shape& a, const Shape& b, const Shape& out) : out_(out) {
    strides_[0] = broadcast_strides(a, out);
    strides_[1] = broadcast_strides(b, out);
    same_shapes_ = a == out && b == out;
  }

  void run(const KernelArgs& args) const override {
    const T* a = static_cast<const T*>(args.inputs[0]);
    const T* b = static_cast<const T*>(args.inputs[1]);
    T* out = static_cast<T*>(args.outputs[0]);
    const int64_t count = out_.num_elements();
    if (same_shapes_) {
      for (int64_t i = 0; i < count; ++i) out[i] = Op::apply(a[i], b[i]);
      return;
    }
    BroadcastIterator it(out_, 2, strides_);
    for (int64_t i = 0; i < count; ++i, it.next()) out[i] = Op::apply(a[it.offset(0)], b[it.offset(1)]);
  }

 private:
  Shape out_;
  std::array<int64_t, kMaxRank> strides_[2];
  bool same_shapes_ = false;
};

struct AddOp {
  template <typename T>
  static T apply(T a, T b) { return a + b; }
};

template <typename Op>
Prepared prepare_binary(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& a = *node.input(0);
  const TensorInfo& b = *node.input(1);
  if (a.dtype != b.dtype) {
    return prepare_error(node, "inputs are " + std::string(to_string(a.dtype)) + " and " +
                                   std::string(to_string(b.dtype)) + "; they must match");
  }
  Shape out;
  if (!broadcast_shapes(a.shape, b.shape, &out)) {
    return prepare_error(node, "shapes " + to_string(a.shape) + " and " + to_string(b.shape) +
                                   " do not broadcast");
  }
  if (std::string why = check_output(node, 0, out, a.dtype); !why.empty()) return prepare_error(node, why);
  switch (a.dtype) {
    case DType::kFloat32: return prepared<BinaryKernel<float, Op>>(a.shape, b.shape, out);
    case DType::kInt64: return prepared<BinaryKernel<int64_t, Op>>(a.shape, b.shape, out);
    default: return prepare_error(node, "supports float32 and int64, not " + std::string(to_string(a.dtype)));
  }
}

// ---- Unary float math -----------------------------------------------------------------

template <typename Op>
class UnaryFloatKernel final : public Kernel {
 public:
  UnaryFloatKernel(int64_t count, Op op) : count_(count), op_(op) {}
  void run(const KernelArgs& args) const override {
    const float* in = static_cast<const float*>(args.inputs[0]);
    float* out = static_cast<float*>(args.outputs[0]);
    for (int64_t i = 0; i < count_; ++i) out[i] = op_(in[i]);
  }

 private:
  int64_t count_;
  Op op_;
};

template <typename Op>
Prepared prepare_unary_float(const NodeContext& node, Op op) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  if (std::string why = check_dtype("input", 0, &in, DType::kFloat32); !why.empty()) {
    return prepare_error(node, why);
  }
  if (std::string why = check_output(node, 0, in.shape, DType::kFloat32); !why.empty()) {
    return prepare_error(node, why);
  }
  return prepared<UnaryFloatKernel<Op>>(in.num_elements(), op);
}

Prepared prepare_relu(const NodeContext& node) {
  return prepare_unary_float(node, [](float x) { return std::max(x, 0.0f); });
}

}  // namespace

void add_elementwise_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"Add", prepare_binary<AddOp>});
  table.push_back({"Relu", prepare_relu});
}

}  // namespace plugrt::portable
