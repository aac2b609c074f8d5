// Elementwise kernels: unary math, binary arithmetic and comparisons with NumPy
// broadcasting, Where and Cast. They all share one loop, BroadcastKernel. (Expand is in
// the layout family: layout_strided.cc.)
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernel_families.h"

namespace plugrt::portable {

namespace {

std::string name_of(DType dtype) { return std::string(to_string(dtype)); }

// ---- The shared loop: out[i] = op(in0[...], in1[...], ...) with broadcasting ---------

template <typename Out, typename Op, typename... In>
class BroadcastKernel final : public Kernel {
  static constexpr size_t kInputs = sizeof...(In);

 public:
  BroadcastKernel(const std::array<Shape, kInputs>& inputs, const Shape& out, Op op) : out_(out), op_(op) {
    for (size_t i = 0; i < kInputs; ++i) {
      strides_[i] = broadcast_strides(inputs[i], out);
      same_shapes_ = same_shapes_ && inputs[i] == out;
    }
  }

  void run(const KernelArgs& args) const override { run_with(args, std::index_sequence_for<In...>{}); }

 private:
  template <size_t... I>
  void run_with(const KernelArgs& args, std::index_sequence<I...>) const {
    const std::tuple<const In*...> in{static_cast<const In*>(args.inputs[I])...};
    Out* out = static_cast<Out*>(args.outputs[0]);
    const int64_t count = out_.num_elements();
    if (same_shapes_) {
      for (int64_t i = 0; i < count; ++i) out[i] = op_(std::get<I>(in)[i]...);
      return;
    }
    BroadcastIterator it(out_, static_cast<int>(kInputs), strides_.data());
    for (int64_t i = 0; i < count; ++i, it.next()) {
      out[i] = op_(std::get<I>(in)[it.offset(static_cast<int>(I))]...);
    }
  }

  Shape out_;
  std::array<std::array<int64_t, kMaxRank>, kInputs> strides_{};
  Op op_;
  bool same_shapes_ = true;
};

/// make_broadcast<Out, In...>(input shapes, output shape, op).
template <typename Out, typename... In, typename Op>
Prepared make_broadcast(const std::array<Shape, sizeof...(In)>& inputs, const Shape& out, Op op) {
  return prepared<BroadcastKernel<Out, Op, In...>>(inputs, out, op);
}

/// The broadcast shape of the first `count` inputs; the reason when they do not broadcast.
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

/// Checks that inputs [first, first + count) all have input `first`'s dtype.
std::string check_same_dtypes(const NodeContext& node, size_t first, size_t count) {
  for (size_t i = first + 1; i < first + count; ++i) {
    if (node.input(i)->dtype != node.input(first)->dtype) {
      return "inputs " + std::to_string(first) + " and " + std::to_string(i) + " are " +
             name_of(node.input(first)->dtype) + " and " + name_of(node.input(i)->dtype) + "; they must match";
    }
  }
  return {};
}

template <typename T>
struct Tag {
  using type = T;
};

/// Calls f(Tag<U>) with the unsigned integer type U as wide as an element of `dtype`,
/// for ops that only move elements.
template <typename F>
Prepared visit_bits(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    default: return f(Tag<uint64_t>{});
  }
}

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
  T operator()(T a, T b) const { return arithmetic(a, b, [](auto x, auto y) { return x + y; }); }
};
struct SubOp {
  template <typename T>
  T operator()(T a, T b) const { return arithmetic(a, b, [](auto x, auto y) { return x - y; }); }
};
struct MulOp {
  template <typename T>
  T operator()(T a, T b) const { return arithmetic(a, b, [](auto x, auto y) { return x * y; }); }
};
/// Integer division truncates toward zero; x / 0 gives 0 rather than a crash.
struct DivOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if (b == -1) return arithmetic(T{0}, a, [](auto x, auto y) { return x - y; });
    }
    return a / b;
  }
};
struct PowOp {
  template <typename E>
  float operator()(float base, E exponent) const {
    return static_cast<float>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
  }
};
struct EqualOp {
  template <typename T>
  uint8_t operator()(T a, T b) const { return a == b; }
};
struct LessOp {
  template <typename T>
  uint8_t operator()(T a, T b) const { return a < b; }
};
struct GreaterOp {
  template <typename T>
  uint8_t operator()(T a, T b) const { return a > b; }
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
  switch (dtype) {
    case DType::kFloat32: return make(Tag<float>{});
    case DType::kInt64: return make(Tag<int64_t>{});
    case DType::kInt32: return make(Tag<int32_t>{});
    case DType::kBool:
      if (std::is_same_v<Op, EqualOp>) return make(Tag<uint8_t>{});
      [[fallthrough]];
    default:
      return prepare_error(node, std::string("supports float32, int64, int32") +
                                     (std::is_same_v<Op, EqualOp> ? " and bool" : "") + ", not " + name_of(dtype));
  }
}

template <typename Op>
Prepared prepare_arithmetic(const NodeContext& node) { return prepare_binary<Op, false>(node); }
template <typename Op>
Prepared prepare_comparison(const NodeContext& node) { return prepare_binary<Op, true>(node); }

/// Pow: a float32 base; the exponent float32, or int64 / int32 from opset 12.
Prepared prepare_pow(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_dtype("input", 0, node.input(0), DType::kFloat32); !why.empty()) {
    return prepare_error(node, why + " (only a float32 base is supported)");
  }
  Shape out;
  if (std::string why = broadcast_inputs(node, 2, &out); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_output(node, 0, out, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  const std::array<Shape, 2> shapes{node.input(0)->shape, node.input(1)->shape};
  const DType exponent = node.input(1)->dtype;
  const bool integer_exponents = node.opset() >= 12;
  if (exponent == DType::kFloat32) return make_broadcast<float, float, float>(shapes, out, PowOp{});
  if (integer_exponents && exponent == DType::kInt64) {
    return make_broadcast<float, float, int64_t>(shapes, out, PowOp{});
  }
  if (integer_exponents && exponent == DType::kInt32) {
    return make_broadcast<float, float, int32_t>(shapes, out, PowOp{});
  }
  return prepare_error(node, "the exponent is " + name_of(exponent) + "; opset " + std::to_string(node.opset()) +
                                 " allows float32" + (integer_exponents ? ", int64 or int32" : ""));
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
  return visit_bits(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return make_broadcast<T, uint8_t, T, T>(shapes, out, [](uint8_t c, T x, T y) { return c != 0 ? x : y; });
  });
}

// ---- Unary ops ------------------------------------------------------------------------

/// A float32 input and output of the same shape; `max_inputs` > 1 for ops whose extra
/// inputs the caller has read (Clip).
template <typename Op>
Prepared prepare_unary_float(const NodeContext& node, Op op, size_t max_inputs = 1) {
  if (std::string why = check_arity(node, 1, max_inputs, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  if (std::string why = check_dtype("input", 0, &in, DType::kFloat32); !why.empty()) {
    return prepare_error(node, why);
  }
  if (std::string why = check_output(node, 0, in.shape, DType::kFloat32); !why.empty()) {
    return prepare_error(node, why);
  }
  return make_broadcast<float, float>({in.shape}, in.shape, op);
}

/// A float function of one float argument, as a prepare function.
template <float (*kFunction)(float)>
Prepared prepare_math(const NodeContext& node) {
  return prepare_unary_float(node, [](float x) { return kFunction(x); });
}

float relu(float x) { return std::max(x, 0.0f); }
float sigmoid(float x) {  // never overflows exp
  if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
}
float hard_swish(float x) { return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f)); }
float tanh_(float x) { return std::tanh(x); }
float erf_(float x) { return std::erf(x); }
float sqrt_(float x) { return std::sqrt(x); }
float exp_(float x) { return std::exp(x); }
float log_(float x) { return std::log(x); }
float reciprocal(float x) { return 1.0f / x; }

Prepared prepare_leaky_relu(const NodeContext& node) {
  const float alpha = node.attr_float("alpha", 0.01f);
  return prepare_unary_float(node, [alpha](float x) { return x >= 0 ? x : alpha * x; });
}

Prepared prepare_hard_sigmoid(const NodeContext& node) {
  const float alpha = node.attr_float("alpha", 0.2f);
  const float beta = node.attr_float("beta", 0.5f);
  return prepare_unary_float(node, [alpha, beta](float x) { return std::max(0.0f, std::min(1.0f, alpha * x + beta)); });
}

/// Clip: min/max attributes before opset 11, optional constant scalar inputs from 11.
/// An absent bound does not clip; min > max gives max everywhere, as ONNX says.
Prepared prepare_clip(const NodeContext& node) {
  float bounds[2] = {-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
  const bool bound_inputs = node.opset() >= 11;
  if (!bound_inputs) {
    bounds[0] = node.attr_float("min", bounds[0]);
    bounds[1] = node.attr_float("max", bounds[1]);
  }
  for (size_t i = 1; bound_inputs && i <= 2; ++i) {
    if (node.input(i) == nullptr) continue;
    const std::string what = i == 1 ? "min (input 1)" : "max (input 2)";
    std::optional<std::vector<float>> value = node.constant_floats(i);
    if (!value) return prepare_error(node, what + " must be a constant float32 scalar");
    if (value->size() != 1) {
      return prepare_error(node, what + " must hold one element, not " + std::to_string(value->size()));
    }
    bounds[i - 1] = (*value)[0];
  }
  const auto clip = [lo = bounds[0], hi = bounds[1]](float x) { return std::min(std::max(x, lo), hi); };
  return prepare_unary_float(node, clip, bound_inputs ? 3 : 1);
}

/// Neg and Abs: float32, int64 or int32; integers wrap (-INT64_MIN is INT64_MIN).
struct NegOp {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return SubOp{}(T{0}, x);
    else return -x;
  }
};
struct AbsOp {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return x < 0 ? NegOp{}(x) : x;
    else return std::fabs(x);
  }
};

template <typename Op>
Prepared prepare_signed_unary(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  if (std::string why = check_output(node, 0, in.shape, in.dtype); !why.empty()) return prepare_error(node, why);
  switch (in.dtype) {
    case DType::kFloat32: return make_broadcast<float, float>({in.shape}, in.shape, Op{});
    case DType::kInt64: return make_broadcast<int64_t, int64_t>({in.shape}, in.shape, Op{});
    case DType::kInt32: return make_broadcast<int32_t, int32_t>({in.shape}, in.shape, Op{});
    default: return prepare_error(node, "supports float32, int64 and int32, not " + name_of(in.dtype));
  }
}

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

bool castable(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: case DType::kInt64: case DType::kInt32:
    case DType::kInt8: case DType::kUInt8: case DType::kBool: return true;
    default: return false;
  }
}

/// Calls f(Tag<T>) with the C++ type of a castable dtype.
template <typename F>
Prepared visit_cast_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32: return f(Tag<float>{});
    case DType::kInt64: return f(Tag<int64_t>{});
    case DType::kInt32: return f(Tag<int32_t>{});
    case DType::kInt8: return f(Tag<int8_t>{});
    default: return f(Tag<uint8_t>{});  // uint8 and bool
  }
}

Prepared prepare_cast(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  if (!node.has_attribute("to")) return prepare_error(node, "the 'to' attribute is required");
  const TensorInfo& in = *node.input(0);
  const int64_t code = node.attr_int("to", 0);
  const DType to = static_cast<DType>(code);
  if (code < 0 || code > 16 || !castable(to)) {  // ONNX codes are small: no wrapping cast
    return prepare_error(node, "cannot cast to ONNX dtype " + std::to_string(code) +
                                   " (supported: float32, int64, int32, bool, uint8, int8)");
  }
  if (!castable(in.dtype)) return prepare_error(node, "cannot cast from " + name_of(in.dtype));
  if (std::string why = check_output(node, 0, in.shape, to); !why.empty()) return prepare_error(node, why);
  return visit_cast_type(in.dtype, [&](auto from_tag) {
    return visit_cast_type(to, [&](auto to_tag) {
      using From = typename decltype(from_tag)::type;
      using To = typename decltype(to_tag)::type;
      return make_broadcast<To, From>({in.shape}, in.shape, CastOp<To>{to == DType::kBool});
    });
  });
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
  table.push_back({"Where", prepare_where});
  table.push_back({"Relu", prepare_math<relu>});
  table.push_back({"LeakyRelu", prepare_leaky_relu});
  table.push_back({"Clip", prepare_clip});
  table.push_back({"Sigmoid", prepare_math<sigmoid>});
  table.push_back({"HardSigmoid", prepare_hard_sigmoid});
  table.push_back({"HardSwish", prepare_math<hard_swish>});
  table.push_back({"Tanh", prepare_math<tanh_>});
  table.push_back({"Erf", prepare_math<erf_>});
  table.push_back({"Sqrt", prepare_math<sqrt_>});
  table.push_back({"Exp", prepare_math<exp_>});
  table.push_back({"Log", prepare_math<log_>});
  table.push_back({"Reciprocal", prepare_math<reciprocal>});
  table.push_back({"Neg", prepare_signed_unary<NegOp>});
  table.push_back({"Abs", prepare_signed_unary<AbsOp>});
  table.push_back({"Cast", prepare_cast});
}

}  // namespace plugrt::portable
