// SPDX-License-Identifier: Apache-2.0
// More unary elementwise kernels: rounding, sign, the smooth and exponential
// activations, trigonometry, NaN and infinity tests. They run on the shared broadcast
// loop (broadcast.h) in the input's compute type: float16 and bfloat16 in float32.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "broadcast.h"
#include "kernel_families.h"

namespace plugrt::portable {

namespace {

/// A stateless unary op on float types, as a prepare function.
template <typename Op>
Prepared prepare_float_op(const NodeContext& node) {
  return prepare_same_type_unary<kFloatTypes>(node, Op{});
}

#define PLUGRT_FLOAT_FUNCTION(Name, expression) \
  struct Name {                                 \
    template <typename T>                       \
    T operator()(T x) const {                   \
      return expression;                        \
    }                                           \
  };

PLUGRT_FLOAT_FUNCTION(Floor, std::floor(x))
PLUGRT_FLOAT_FUNCTION(Ceil, std::ceil(x))
PLUGRT_FLOAT_FUNCTION(Round, std::nearbyint(x))  // halves to even, the default rounding mode
PLUGRT_FLOAT_FUNCTION(Softsign, x / (T{1} + std::fabs(x)))
PLUGRT_FLOAT_FUNCTION(Sin, std::sin(x))
PLUGRT_FLOAT_FUNCTION(Cos, std::cos(x))
PLUGRT_FLOAT_FUNCTION(Tan, std::tan(x))
PLUGRT_FLOAT_FUNCTION(Asin, std::asin(x))
PLUGRT_FLOAT_FUNCTION(Acos, std::acos(x))
PLUGRT_FLOAT_FUNCTION(Atan, std::atan(x))
PLUGRT_FLOAT_FUNCTION(Sinh, std::sinh(x))
PLUGRT_FLOAT_FUNCTION(Cosh, std::cosh(x))
PLUGRT_FLOAT_FUNCTION(Asinh, std::asinh(x))
PLUGRT_FLOAT_FUNCTION(Acosh, std::acosh(x))
PLUGRT_FLOAT_FUNCTION(Atanh, std::atanh(x))

#undef PLUGRT_FLOAT_FUNCTION

/// log(1 + exp(x)) without overflowing exp for large x.
struct Softplus {
  template <typename T>
  T operator()(T x) const {
    return x > T{0} ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};

/// -1, 0 or 1 for any numeric type; NaN stays NaN.
struct Sign {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x)) return x;
    }
    if constexpr (std::is_unsigned_v<T>) {
      return x > T{0} ? T{1} : T{0};
    } else {
      return static_cast<T>((x > T{0}) - (x < T{0}));
    }
  }
};

Prepared prepare_sign(const NodeContext& node) { return prepare_same_type_unary<kNumericTypes>(node, Sign{}); }

Prepared prepare_elu(const NodeContext& node) {
  const double alpha = node.attr_float("alpha", 1.0f);
  return prepare_same_type_unary<kFloatTypes>(node, [alpha](auto x) {
    using T = decltype(x);
    return x < T{0} ? static_cast<T>(alpha) * (std::exp(x) - T{1}) : x;
  });
}

Prepared prepare_selu(const NodeContext& node) {
  const double alpha = node.attr_float("alpha", 1.67326319217681884765625f);
  const double gamma = node.attr_float("gamma", 1.05070102214813232421875f);
  return prepare_same_type_unary<kFloatTypes>(node, [alpha, gamma](auto x) {
    using T = decltype(x);
    return static_cast<T>(gamma) * (x > T{0} ? x : static_cast<T>(alpha) * (std::exp(x) - T{1}));
  });
}

Prepared prepare_celu(const NodeContext& node) {
  const float alpha = node.attr_float("alpha", 1.0f);
  if (alpha == 0.0f) return prepare_error(node, "alpha must not be 0");
  return prepare_same_type_unary<kFloatTypes>(node, [alpha](auto x) {
    using T = decltype(x);
    const T a = static_cast<T>(alpha);
    return std::max(T{0}, x) + std::min(T{0}, a * (std::exp(x / a) - T{1}));
  });
}

Prepared prepare_thresholded_relu(const NodeContext& node) {
  const float alpha = node.attr_float("alpha", 1.0f);
  return prepare_same_type_unary<kFloatTypes>(node, [alpha](auto x) {
    using T = decltype(x);
    return x > static_cast<T>(alpha) ? x : T{0};
  });
}

/// Shrink: x + bias below -lambd, x - bias above lambd, 0 between; any numeric type.
Prepared prepare_shrink(const NodeContext& node) {
  const double lambd = node.attr_float("lambd", 0.5f);
  const double bias = node.attr_float("bias", 0.0f);
  return prepare_same_type_unary<kNumericTypes>(node, [lambd, bias](auto x) {
    using T = decltype(x);
    const double v = static_cast<double>(x);
    if (v < -lambd) return static_cast<T>(v + bias);
    if (v > lambd) return static_cast<T>(v - bias);
    return T{0};
  });
}

/// IsNaN and IsInf: a float input, a bool output of its shape.
template <typename Test>
Prepared prepare_float_test(const NodeContext& node, Test test) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  if (std::string why = check_output(node, 0, in.shape, DType::kBool); !why.empty()) return prepare_error(node, why);
  return dispatch<kFloatTypes>(node, in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return make_broadcast<uint8_t, T>({in.shape}, in.shape, test);
  });
}

Prepared prepare_is_nan(const NodeContext& node) {
  return prepare_float_test(node, [](auto x) { return static_cast<uint8_t>(std::isnan(x)); });
}

Prepared prepare_is_inf(const NodeContext& node) {
  const bool negative = node.attr_int("detect_negative", 1) != 0;
  const bool positive = node.attr_int("detect_positive", 1) != 0;
  return prepare_float_test(node, [negative, positive](auto x) {
    return static_cast<uint8_t>(std::isinf(x) && (x > 0 ? positive : negative));
  });
}

}  // namespace

void add_math_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"Floor", prepare_float_op<Floor>});
  table.push_back({"Ceil", prepare_float_op<Ceil>});
  table.push_back({"Round", prepare_float_op<Round>});
  table.push_back({"Sign", prepare_sign});
  table.push_back({"Softplus", prepare_float_op<Softplus>});
  table.push_back({"Softsign", prepare_float_op<Softsign>});
  table.push_back({"Elu", prepare_elu});
  table.push_back({"Selu", prepare_selu});
  table.push_back({"Celu", prepare_celu});
  table.push_back({"ThresholdedRelu", prepare_thresholded_relu});
  table.push_back({"Shrink", prepare_shrink});
  table.push_back({"Sin", prepare_float_op<Sin>});
  table.push_back({"Cos", prepare_float_op<Cos>});
  table.push_back({"Tan", prepare_float_op<Tan>});
  table.push_back({"Asin", prepare_float_op<Asin>});
  table.push_back({"Acos", prepare_float_op<Acos>});
  table.push_back({"Atan", prepare_float_op<Atan>});
  table.push_back({"Sinh", prepare_float_op<Sinh>});
  table.push_back({"Cosh", prepare_float_op<Cosh>});
  table.push_back({"Asinh", prepare_float_op<Asinh>});
  table.push_back({"Acosh", prepare_float_op<Acosh>});
  table.push_back({"Atanh", prepare_float_op<Atanh>});
  table.push_back({"IsNaN", prepare_is_nan});
  table.push_back({"IsInf", prepare_is_inf});
}

}  // namespace plugrt::portable
