// SPDX-License-Identifier: Apache-2.0
// More arithmetic kernels: Mod and PRelu (binary, broadcasting), and the variadic Min,
// Max, Mean and Sum, which broadcast any number of inputs.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "broadcast.h"
#include "kernel_families.h"

namespace plugrt::portable {

namespace {

std::string name_of(DType dtype) { return std::string(to_string(dtype)); }

/// fmod = 1: the remainder has the dividend's sign (C's fmod); fmod = 0: the divisor's
/// (Python's %). An integer remainder by 0 is 0 rather than a crash.
template <bool kFmod>
struct ModOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return T{0};
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return T{0};  // INT_MIN % -1 overflows
        const T r = static_cast<T>(a % b);
        if (!kFmod && r != 0 && ((r < 0) != (b < 0))) return static_cast<T>(r + b);
        return r;
      } else {
        return static_cast<T>(a % b);
      }
    } else {
      T r = std::fmod(a, b);
      if (!kFmod && r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
};

Prepared prepare_mod(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_same_dtypes(node, 0, 2); !why.empty()) return prepare_error(node, why);
  Shape out;
  if (std::string why = broadcast_inputs(node, 2, &out); !why.empty()) return prepare_error(node, why);
  const DType dtype = node.input(0)->dtype;
  if (std::string why = check_output(node, 0, out, dtype); !why.empty()) return prepare_error(node, why);
  const int64_t fmod = node.attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1) return prepare_error(node, "fmod must be 0 or 1");
  if (fmod == 0 && dtype_in(dtype, kFloatTypes)) {
    return prepare_error(node, "fmod must be 1 for " + name_of(dtype) + " inputs");
  }
  const std::array<Shape, 2> shapes{node.input(0)->shape, node.input(1)->shape};
  return dispatch<kNumericTypes>(node, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (fmod == 1) return make_broadcast<T, T, T>(shapes, out, ModOp<true>{});
    return make_broadcast<T, T, T>(shapes, out, ModOp<false>{});
  });
}

/// PRelu: x < 0 ? slope * x : x, the slope broadcast to x's shape.
Prepared prepare_prelu(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_same_dtypes(node, 0, 2); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  Shape out;
  if (std::string why = broadcast_inputs(node, 2, &out); !why.empty()) return prepare_error(node, why);
  if (out != x.shape) {
    return prepare_error(node, "the slope's shape " + to_string(node.input(1)->shape) +
                                   " must broadcast to the input's " + to_string(x.shape));
  }
  if (std::string why = check_output(node, 0, out, x.dtype); !why.empty()) return prepare_error(node, why);
  const std::array<Shape, 2> shapes{x.shape, node.input(1)->shape};
  return dispatch<kFloatTypes | kSignedInts>(node, x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return make_broadcast<T, T, T>(shapes, out, [](auto v, auto slope) {
      using C = decltype(v);
      return v < C{0} ? static_cast<C>(slope * v) : v;
    });
  });
}

// ---- Min, Max, Mean, Sum: any number of inputs --------------------------------------

enum class Fold { kMin, kMax, kSum, kMean };

/// out = input 0 broadcast, then out = op(out, input k) for each further input.
template <typename T, Fold kFold>
class VariadicKernel final : public Kernel {
 public:
  VariadicKernel(const std::vector<Shape>& inputs, const Shape& out) : out_(out) {
    for (const Shape& shape : inputs) strides_.push_back(broadcast_strides(shape, out));
  }

  void run(const KernelArgs& args) const override {
    T* out = static_cast<T*>(args.outputs[0]);
    const int64_t count = out_.num_elements();
    for (size_t k = 0; k < strides_.size(); ++k) {
      const T* in = static_cast<const T*>(args.inputs[k]);
      BroadcastIterator it(out_, 1, &strides_[k]);
      for (int64_t i = 0; i < count; ++i, it.next()) {
        const Compute<T> v = load(in[it.offset(0)]);
        out[i] = store<T>(k == 0 ? v : combine(load(out[i]), v));
      }
    }
    if constexpr (kFold == Fold::kMean) {
      const auto n = static_cast<Compute<T>>(strides_.size());
      for (int64_t i = 0; i < count; ++i) out[i] = store<T>(load(out[i]) / n);
    }
  }

 private:
  /// NaN wins in Min and Max, as in NumPy's minimum and maximum.
  static Compute<T> combine(Compute<T> a, Compute<T> b) {
    if constexpr (kFold == Fold::kMin) {
      return a < b || is_nan(a) ? a : b;
    } else if constexpr (kFold == Fold::kMax) {
      return a > b || is_nan(a) ? a : b;
    } else {
      return static_cast<Compute<T>>(a + b);
    }
  }
  static bool is_nan(Compute<T> x) {
    if constexpr (std::is_floating_point_v<Compute<T>>) {
      return std::isnan(x);
    } else {
      return false;
    }
  }

  Shape out_;
  std::vector<std::array<int64_t, kMaxRank>> strides_;
};

template <Fold kFold>
Prepared prepare_variadic(const NodeContext& node) {
  if (node.num_inputs() == 0) return prepare_error(node, "takes at least one input");
  if (std::string why = check_arity(node, node.num_inputs(), node.num_inputs(), 1, 1); !why.empty()) {
    return prepare_error(node, why);
  }
  if (std::string why = check_same_dtypes(node, 0, node.num_inputs()); !why.empty()) return prepare_error(node, why);
  Shape out;
  if (std::string why = broadcast_inputs(node, node.num_inputs(), &out); !why.empty()) return prepare_error(node, why);
  const DType dtype = node.input(0)->dtype;
  if (std::string why = check_output(node, 0, out, dtype); !why.empty()) return prepare_error(node, why);
  std::vector<Shape> shapes;
  for (size_t k = 0; k < node.num_inputs(); ++k) shapes.push_back(node.input(k)->shape);
  constexpr unsigned kTypes = kFold == Fold::kMin || kFold == Fold::kMax ? kNumericTypes : kFloatTypes;
  return dispatch<kTypes>(node, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<VariadicKernel<T, kFold>>(shapes, out);
  });
}

}  // namespace

void add_arithmetic_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"Mod", prepare_mod});
  table.push_back({"PRelu", prepare_prelu});
  table.push_back({"Min", prepare_variadic<Fold::kMin>});
  table.push_back({"Max", prepare_variadic<Fold::kMax>});
  table.push_back({"Sum", prepare_variadic<Fold::kSum>});
  table.push_back({"Mean", prepare_variadic<Fold::kMean>});
}

}  // namespace plugrt::portable
