// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels: unary math, binary arithmetic and comparisons with NumPy
// broadcasting, Where and Cast. They all share one loop, BroadcastKernel. (Expand is in
// the layout family: layout_strided.cc.)
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "broadcast.h"
#include "kernel_families.h"

namespace plugrt::portable {

std::string broadcast_inputs(const NodeContext& node, size_t count, Shape* out) {
  Shape result = node.input(0)->shape;
  for (size_t i = 1; i < count; ++i) {
    if (!broadcast_shapes(result, node.input(i)->shape, &result)) {
      std::string shapes;
      for (size_t k = 0; k < count; ++k) shapes += (k > 0 ? " and " : "") + to_string(node.input(k)->shape);
      return "shapes " + shapes + " do not broadcast";
    }
  }
  *out = result;
  return {};
}

std::string check_same_dtypes(const NodeContext& node, size_t first, size_t count) {
  for (size_t i = first + 1; i < first + count; ++i) {
    if (node.input(i)->dtype != node.input(first)->dtype) {
      return "inputs " + std::to_string(first) + " and " + std::to_string(i) + " are " +
             std::string(to_string(node.input(first)->dtype)) + " and " + std::string(to_string(node.input(i)->dtype)) +
             "; they must match";
    }
  }
  return {};
}

namespace {

std::string name_of(DType dtype) { return std::string(to_string(dtype)); }

// ---- Cast -----------------------------------------------------------------------------

/// float -> integer truncates toward zero and saturates (NaN gives 0); integer ->
/// narrower integer wraps; anything -> bool is x != 0 (bool is stored as uint8_t).
template <typename To>
struct CastOp {
  bool to_bool;
  template <typename From>
  To operator()(From x) const {
    if (to_bool) return static_cast<To>(x != From{0});
    if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
      if (std::isnan(x)) return 0;
      const double v = std::trunc(static_cast<double>(x));
      if (v <= static_cast<double>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
      if (v >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
      return static_cast<To>(v);
    } else {
      return static_cast<To>(x);
    }
  }
};

// ---- Binary arithmetic and comparisons ------------------------------------------------

/// Integer arithmetic wraps around (two's complement) instead of overflowing.
template <typename T, typename F>
T arithmetic(T a, T b, F f) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(f(static_cast<uint64_t>(a), static_cast<uint64_t>(b)));
  } else {
    return f(a, b);
  }
}

struct AddOp {
  template <typename T>
  T operator()(T a, T b) const {
    return arithmetic(a, b, [](auto x, auto y) { return x + y; });
  }
};
struct SubOp {
  template <typename T>
  T operator()(T a, T b) const {
    return arithmetic(a, b, [](auto x, auto y) { return x - y; });
  }
};
struct MulOp {
  template <typename T>
  T operator()(T a, T b) const {
    return arithmetic(a, b, [](auto x, auto y) { return x * y; });
  }
};
/// Integer division truncates toward zero; x / 0 gives 0 rather than a crash.
struct DivOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return arithmetic(T{0}, a, [](auto x, auto y) { return x - y; });
      }
      return static_cast<T>(a / b);
    } else {
      return a / b;
    }
  }
};
/// Computed in double; an integer result truncates toward zero, as NumPy's cast does.
struct PowOp {
  template <typename B, typename E>
  B operator()(B base, E exponent) const {
    const double value = std::pow(static_cast<double>(base), static_cast<double>(exponent));
    if constexpr (std::is_integral_v<B>) {
      return CastOp<B>{false}(value);
    } else {
      return static_cast<B>(value);
    }
  }
};
struct EqualOp {
  template <typename T>
  uint8_t operator()(T a, T b) const {
    return a == b;
  }
};
struct LessOp {
  template <typename T>
  uint8_t operator()(T a, T b) const {
    return a < b;
  }
};
struct GreaterOp {
  template <typename T>
  uint8_t operator()(T a, T b) const {
    return a > b;
  }
};
struct LessOrEqualOp {
  template <typename T>
  uint8_t operator()(T a, T b) const {
    return a <= b;
  }
};
struct GreaterOrEqualOp {
  template <typename T>
  uint8_t operator()(T a, T b) const {
    return a >= b;
  }
};

/// Two inputs of one numeric dtype that broadcast; the output has their dtype, or bool
/// for a comparison.
template <typename Op, bool kComparison>
Prepared prepare_binary(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_same_dtypes(node, 0, 2); !why.empty()) return prepare_error(node, why);
  Shape out;
  if (std::string why = broadcast_inputs(node, 2, &out); !why.empty()) return prepare_error(node, why);
  const DType dtype = node.input(0)->dtype;
  if (std::string why = check_output(node, 0, out, kComparison ? DType::kBool : dtype); !why.empty()) {
    return prepare_error(node, why);
  }
  const std::array<Shape, 2> shapes{node.input(0)->shape, node.input(1)->shape};
  auto make = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Out = std::conditional_t<kComparison, uint8_t, T>;
    return make_broadcast<Out, T, T>(shapes, out, Op{});
  };
  if constexpr (std::is_same_v<Op, EqualOp>) return dispatch<kAllTypes>(node, dtype, make);
  return dispatch<kNumericTypes>(node, dtype, make);
}

template <typename Op>
Prepared prepare_arithmetic(const NodeContext& node) {
  return prepare_binary<Op, false>(node);
}
template <typename Op>
Prepared prepare_comparison(const NodeContext& node) {
  return prepare_binary<Op, true>(node);
}

/// Pow: a float base and exponent; from opset 12 also int32 and int64 bases and any
/// numeric exponent. The output has the base's dtype.
Prepared prepare_pow(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  Shape out;
  if (std::string why = broadcast_inputs(node, 2, &out); !why.empty()) return prepare_error(node, why);
  const DType base = node.input(0)->dtype;
  const DType exponent = node.input(1)->dtype;
  if (std::string why = check_output(node, 0, out, base); !why.empty()) return prepare_error(node, why);
  const bool opset12 = node.opset() >= 12;
  if (!opset12 && exponent != base) {
    return prepare_error(node, "the exponent is " + name_of(exponent) + " and the base " + name_of(base) +
                                   "; before opset 12 they must match");
  }
  const std::array<Shape, 2> shapes{node.input(0)->shape, node.input(1)->shape};
  constexpr unsigned kBases = kFloatTypes | kSignedInts;
  return dispatch<kBases>(node, base, [&](auto base_tag) {
    using B = typename decltype(base_tag)::type;
    if constexpr (std::is_same_v<B, int8_t> || std::is_same_v<B, int16_t>) {
      return prepare_error(node, "supports float, int32 and int64 bases, not " + name_of(base));
    } else {
      return dispatch<kNumericTypes>(node, exponent, [&](auto exponent_tag) {
        using E = typename decltype(exponent_tag)::type;
        return make_broadcast<B, B, E>(shapes, out, PowOp{});
      });
    }
  });
}

/// Where(condition, X, Y): any element type, moved by its bytes.
Prepared prepare_where(const NodeContext& node) {
  if (std::string why = check_arity(node, 3, 3, 1, 1); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_dtype("input", 0, node.input(0), DType::kBool); !why.empty()) {
    return prepare_error(node, why);
  }
  if (std::string why = check_same_dtypes(node, 1, 2); !why.empty()) return prepare_error(node, why);
  Shape out;
  if (std::string why = broadcast_inputs(node, 3, &out); !why.empty()) return prepare_error(node, why);
  const DType dtype = node.input(1)->dtype;
  if (std::string why = check_output(node, 0, out, dtype); !why.empty()) return prepare_error(node, why);
  const std::array<Shape, 3> shapes{node.input(0)->shape, node.input(1)->shape, node.input(2)->shape};
  return dispatch_bits(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return make_broadcast<T, uint8_t, T, T>(shapes, out, [](uint8_t c, T x, T y) { return c != 0 ? x : y; });
  });
}

// ---- Unary ops ------------------------------------------------------------------------

/// A float input (float32, double, float16, bfloat16) and an output of its shape and
/// dtype; `max_inputs` > 1 for ops whose extra inputs the caller has read (Clip).
template <typename Op>
Prepared prepare_unary_float(const NodeContext& node, Op op, size_t max_inputs = 1) {
  return prepare_same_type_unary<kFloatTypes>(node, op, max_inputs);
}

/// A stateless unary op, as a prepare function.
template <typename Op>
Prepared prepare_math(const NodeContext& node) {
  return prepare_unary_float(node, Op{});
}

struct Relu {
  template <typename T>
  T operator()(T x) const {
    return std::max(x, T{0});
  }
};
struct Sigmoid {  // never overflows exp
  template <typename T>
  T operator()(T x) const {
    if (x >= 0) return T{1} / (T{1} + std::exp(-x));
    const T e = std::exp(x);
    return e / (T{1} + e);
  }
};
struct HardSwish {
  template <typename T>
  T operator()(T x) const {
    return x * std::max(T{0}, std::min(T{1}, x / T{6} + T{0.5}));
  }
};
struct Tanh {
  template <typename T>
  T operator()(T x) const {
    return std::tanh(x);
  }
};
struct Erf {
  template <typename T>
  T operator()(T x) const {
    return std::erf(x);
  }
};
struct Sqrt {
  template <typename T>
  T operator()(T x) const {
    return std::sqrt(x);
  }
};
struct Exp {
  template <typename T>
  T operator()(T x) const {
    return std::exp(x);
  }
};
struct Log {
  template <typename T>
  T operator()(T x) const {
    return std::log(x);
  }
};
struct Reciprocal {
  template <typename T>
  T operator()(T x) const {
    return T{1} / x;
  }
};

Prepared prepare_leaky_relu(const NodeContext& node) {
  const float alpha = node.attr_float("alpha", 0.01f);
  return prepare_unary_float(node, [alpha](auto x) { return x >= 0 ? x : static_cast<decltype(x)>(alpha) * x; });
}

/// Gelu (opset 20): x * Phi(x) with the normal distribution's Phi, or its tanh form.
Prepared prepare_gelu(const NodeContext& node) {
  const std::string approximate = node.attr_string("approximate", "none");
  if (approximate == "none") {
    return prepare_unary_float(node, [](auto x) {
      using T = decltype(x);
      return T{0.5} * x * (T{1} + std::erf(x * static_cast<T>(M_SQRT1_2)));
    });
  }
  if (approximate == "tanh") {
    return prepare_unary_float(node, [](auto x) {
      using T = decltype(x);
      const T inner = static_cast<T>(std::sqrt(2.0 / M_PI)) * (x + T{0.044715} * x * x * x);
      return T{0.5} * x * (T{1} + std::tanh(inner));
    });
  }
  return prepare_error(node, "approximate is '" + approximate + "'; ONNX defines 'none' and 'tanh'");
}

Prepared prepare_hard_sigmoid(const NodeContext& node) {
  const float alpha = node.attr_float("alpha", 0.2f);
  const float beta = node.attr_float("beta", 0.5f);
  return prepare_unary_float(node, [alpha, beta](auto x) {
    using T = decltype(x);
    return std::max(T{0}, std::min(T{1}, static_cast<T>(alpha) * x + static_cast<T>(beta)));
  });
}

/// Clip from opset 11 with a bound given at run time: the bounds are read on each run,
/// each one from its input, or the constant (or infinity) prepared for it.
template <typename T>
class RuntimeClipKernel final : public Kernel {
 public:
  RuntimeClipKernel(int64_t count, const double bounds[2], const bool from_input[2])
      : count_(count), bounds_{bounds[0], bounds[1]}, from_input_{from_input[0], from_input[1]} {}

  void run(const KernelArgs& args) const override {
    double lo = bounds_[0];
    double hi = bounds_[1];
    if (from_input_[0]) lo = static_cast<double>(load(*static_cast<const T*>(args.inputs[1])));
    if (from_input_[1]) hi = static_cast<double>(load(*static_cast<const T*>(args.inputs[2])));
    const T* in = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    for (int64_t i = 0; i < count_; ++i) {
      Compute<T> x = load(in[i]);
      if (static_cast<double>(x) < lo) x = static_cast<Compute<T>>(lo);
      if (static_cast<double>(x) > hi) x = static_cast<Compute<T>>(hi);
      out[i] = store<T>(x);
    }
  }

 private:
  int64_t count_;
  double bounds_[2];
  bool from_input_[2];
};

/// Clip: min/max attributes before opset 11, optional scalar inputs of the input's dtype
/// from 11, constant or given at run time. An absent bound does not clip; min > max
/// gives max everywhere, as ONNX says.
Prepared prepare_clip(const NodeContext& node) {
  double bounds[2] = {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  bool from_input[2] = {false, false};
  const bool bound_inputs = node.opset() >= 11;
  if (!bound_inputs) {
    bounds[0] = node.attr_float("min", -std::numeric_limits<float>::infinity());
    bounds[1] = node.attr_float("max", std::numeric_limits<float>::infinity());
  }
  const DType dtype = node.input(0) != nullptr ? node.input(0)->dtype : DType::kUndefined;
  for (size_t i = 1; bound_inputs && i <= 2; ++i) {
    const TensorInfo* bound = node.input(i);
    if (bound == nullptr) continue;
    const std::string what = i == 1 ? "min (input 1)" : "max (input 2)";
    if (bound->dtype != dtype || bound->num_elements() != 1) {
      return prepare_error(node, what + " must be a scalar of the input's dtype");
    }
    if (bound->constant_data == nullptr) {
      from_input[i - 1] = true;
      continue;
    }
    Prepared read = dispatch<kNumericTypes>(node, dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      bounds[i - 1] = static_cast<double>(load(*static_cast<const T*>(bound->constant_data)));
      return Prepared{};
    });
    if (!read.error.empty()) return read;
  }
  constexpr unsigned kTypes = kFloatTypes | kIntTypes;
  if (from_input[0] || from_input[1]) {
    if (std::string why = check_arity(node, 1, 3, 1, 1); !why.empty()) return prepare_error(node, why);
    const TensorInfo& in = *node.input(0);
    if (std::string why = check_output(node, 0, in.shape, in.dtype); !why.empty()) return prepare_error(node, why);
    return dispatch<kTypes>(node, in.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      return prepared<RuntimeClipKernel<T>>(in.shape.num_elements(), bounds, from_input);
    });
  }
  // An absent bound is infinite and never compared true, so no infinity is cast to an
  // integer type; min > max gives max everywhere.
  const auto clip = [lo = bounds[0], hi = bounds[1]](auto x) {
    using T = decltype(x);
    if (static_cast<double>(x) < lo) x = static_cast<T>(lo);
    if (static_cast<double>(x) > hi) x = static_cast<T>(hi);
    return x;
  };
  if (!bound_inputs) return prepare_unary_float(node, clip);
  return prepare_same_type_unary<kTypes>(node, clip, 3);
}

/// Neg and Abs: float32, int64 or int32; integers wrap (-INT64_MIN is INT64_MIN).
struct NegOp {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return SubOp{}(T{0}, x);
    else
      return -x;
  }
};
struct AbsOp {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>)
      return x;
    else if constexpr (std::is_integral_v<T>)
      return x < 0 ? NegOp{}(x) : x;
    else
      return std::fabs(x);
  }
};

template <typename Op>
Prepared prepare_signed_unary(const NodeContext& node) {
  constexpr unsigned kTypes = std::is_same_v<Op, AbsOp> ? kNumericTypes : kFloatTypes | kSignedInts;
  return prepare_same_type_unary<kTypes>(node, Op{});
}

/// A Cast of input 0 to `to`.
Prepared make_cast(const NodeContext& node, DType to) {
  const TensorInfo& in = *node.input(0);
  if (std::string why = check_output(node, 0, in.shape, to); !why.empty()) return prepare_error(node, why);
  return dispatch<kAllTypes>(node, in.dtype, [&](auto from_tag) {
    return dispatch<kAllTypes>(node, to, [&](auto to_tag) {
      using From = typename decltype(from_tag)::type;
      using To = typename decltype(to_tag)::type;
      return make_broadcast<To, From>({in.shape}, in.shape, CastOp<Compute<To>>{to == DType::kBool});
    });
  });
}

Prepared prepare_cast(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  if (!node.has_attribute("to")) return prepare_error(node, "the 'to' attribute is required");
  const int64_t code = node.attr_int("to", 0);
  const DType to = static_cast<DType>(code);
  if (code < 0 || code > 16 || !dtype_in(to, kAllTypes)) {  // ONNX codes are small: no wrapping cast
    return prepare_error(
        node, "cannot cast to ONNX dtype " + std::to_string(code) + " (supported: " + describe_dtypes(kAllTypes) + ")");
  }
  return make_cast(node, to);
}

/// CastLike(input, target_type): a Cast to the second input's dtype (its values unused).
Prepared prepare_cast_like(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  return make_cast(node, node.input(1)->dtype);
}

/// Dropout as inference runs it: the output is the input, the optional mask all true.
/// Training mode (a constant true training_mode input) is taken only with a ratio of 0,
/// the one case whose result is not random.
class DropoutKernel final : public Kernel {
 public:
  DropoutKernel(size_t bytes, int64_t mask_count) : bytes_(bytes), mask_count_(mask_count) {}
  void run(const KernelArgs& args) const override {
    if (bytes_ > 0 && args.outputs[0] != args.inputs[0]) std::memcpy(args.outputs[0], args.inputs[0], bytes_);
    if (mask_count_ > 0) std::memset(args.outputs[1], 1, static_cast<size_t>(mask_count_));
  }

 private:
  size_t bytes_;
  int64_t mask_count_;  // 0 without a mask output
};

Prepared prepare_dropout(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 3, 1, 2); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  bool training = false;
  if (const TensorInfo* mode = node.input(2); mode != nullptr) {
    if (mode->constant_data == nullptr || mode->dtype != DType::kBool || mode->num_elements() != 1) {
      return prepare_error(node, "training_mode (input 2) must be a constant bool scalar");
    }
    training = *static_cast<const uint8_t*>(mode->constant_data) != 0;
  }
  if (training) {
    double ratio = 0.5;
    if (const TensorInfo* given = node.input(1); given != nullptr) {
      if (given->constant_data == nullptr || given->num_elements() != 1) {
        return prepare_error(node, "in training mode the ratio (input 1) must be a constant scalar");
      }
      Prepared read = dispatch<kFloatTypes>(node, given->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        ratio = static_cast<double>(load(*static_cast<const T*>(given->constant_data)));
        return Prepared{};
      });
      if (!read.error.empty()) return read;
    }
    if (ratio != 0) return prepare_error(node, "training mode with a non-zero ratio is random; it is not supported");
  }
  if (std::string why = check_output(node, 0, in.shape, in.dtype); !why.empty()) return prepare_error(node, why);
  int64_t mask_count = 0;
  if (node.output(1) != nullptr) {
    // The mask is bool from opset 10, before that the input's dtype (1 for kept).
    if (node.opset() < 10) return prepare_error(node, "the mask output before opset 10 is not supported");
    if (std::string why = check_output(node, 1, in.shape, DType::kBool); !why.empty()) return prepare_error(node, why);
    mask_count = in.num_elements();
  }
  return prepared<DropoutKernel>(in.num_bytes(), mask_count);
}

}  // namespace

void add_elementwise_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"Add", prepare_arithmetic<AddOp>});
  table.push_back({"Sub", prepare_arithmetic<SubOp>});
  table.push_back({"Mul", prepare_arithmetic<MulOp>});
  table.push_back({"Div", prepare_arithmetic<DivOp>});
  table.push_back({"Pow", prepare_pow});
  table.push_back({"Equal", prepare_comparison<EqualOp>});
  table.push_back({"Less", prepare_comparison<LessOp>});
  table.push_back({"Greater", prepare_comparison<GreaterOp>});
  table.push_back({"LessOrEqual", prepare_comparison<LessOrEqualOp>});
  table.push_back({"GreaterOrEqual", prepare_comparison<GreaterOrEqualOp>});
  table.push_back({"Where", prepare_where});
  table.push_back({"Relu", prepare_math<Relu>});
  table.push_back({"LeakyRelu", prepare_leaky_relu});
  table.push_back({"Clip", prepare_clip});
  table.push_back({"Sigmoid", prepare_math<Sigmoid>});
  table.push_back({"HardSigmoid", prepare_hard_sigmoid});
  table.push_back({"HardSwish", prepare_math<HardSwish>});
  table.push_back({"Gelu", prepare_gelu});
  table.push_back({"Tanh", prepare_math<Tanh>});
  table.push_back({"Erf", prepare_math<Erf>});
  table.push_back({"Sqrt", prepare_math<Sqrt>});
  table.push_back({"Exp", prepare_math<Exp>});
  table.push_back({"Log", prepare_math<Log>});
  table.push_back({"Reciprocal", prepare_math<Reciprocal>});
  table.push_back({"Neg", prepare_signed_unary<NegOp>});
  table.push_back({"Abs", prepare_signed_unary<AbsOp>});
  table.push_back({"Cast", prepare_cast});
  table.push_back({"CastLike", prepare_cast_like});
  table.push_back({"Dropout", prepare_dropout});
}

}  // namespace plugrt::portable
