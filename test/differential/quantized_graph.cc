// SPDX-License-Identifier: Apache-2.0
// Quantized random graphs: a float value quantized (QuantizeLinear, per tensor, uint8 or
// int8, random scales and zero points, some at the type's ends so that values saturate,
// some of a few mantissa bits so that requantized values land on ties), then one to
// three steps among QLinearConv, QLinearMatMul (per-tensor or per-channel weight
// scales) and a requantization through float ops (DequantizeLinear, an op, QuantizeLinear),
// to an 8-bit output, or through DequantizeLinear and a few float ops to a float one.
//
// Each value carries a bound, in quanta, on how far a fast backend's may be from
// portable's, computed as the value is made (README.md, "Quantized graphs"): what the
// spec lets differ is the rounding of a float value to an integer, where a float32
// product or sum that two correct programs compute differently (an FMA, another order,
// float32 against double) falls on the other side of a half. Two values less than one
// quantum apart round at most one quantum apart; values d apart, at most floor(d) + 1.
#include <cmath>
#include <cstdio>

#include "differential.h"
#include "random_graph_internal.h"

namespace plugrt::differential::internal {

namespace {

/// The most |round(a) - round(b)| can be for |a - b| <= delta: 0 for 0, else floor(delta)
/// + 1 (values less than one apart may round to neighbours; ties to even round two
/// values exactly one apart, 0.5 and 1.5, two apart).
int64_t quanta_for(double delta) { return delta <= 0 ? 0 : static_cast<int64_t>(std::floor(delta)) + 1; }

int32_t lowest(ElementType type) { return type == ElementType::kUInt8 ? 0 : -128; }
int32_t highest(ElementType type) { return type == ElementType::kUInt8 ? 255 : 127; }

/// Float32 ops that two correct programs may round differently (an FMA, another order)
/// differ by a few units in the last place: a bound on that, relative to max(1, |x|).
constexpr double kFloatOpRounding = 1e-6;

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

}  // namespace

RandomGraph Generator::run_quantized() {
  bool exact = false;
  const Value source = float_source(&exact);
  // A graph input reaches both programs as the same bits; a computed value may differ
  // by the float tolerance of the graph so far.
  const double relative = exact ? 0.0 : tolerance_for(graph_.reduction_length);
  Quantized x = quantize(source, draw_scale(exact ? 2.0f : 4.0f), 0.0, relative);
  // Half the chains from a graph input only requantize: through exact ops they must agree
  // to the bit, which checks QuantizeLinear and DequantizeLinear exactly.
  const bool requantize_only = exact && random_.chance(0.5);
  const int64_t steps = random_.between(1, 3);
  for (int64_t i = 0; i < steps; ++i) {
    x = requantize_only ? requantize(x) : quantized_step(x);
    if (random_.chance(0.15)) output(x.value, "q" + std::to_string(x.error));  // a second reader
  }
  quantized_output(x);
  std::string bounds;
  for (const std::string& bound : bounds_) bounds += (bounds.empty() ? "" : " ") + bound;
  model_.metadata(kOutputBoundsKey, bounds);
  graph_.onnx = model_.serialise();
  return graph_;
}

/// A graph input (the same bits on both sides: exact), or a float head and chain.
Value Generator::float_source(bool* exact) {
  *exact = random_.chance(0.4);
  if (*exact) {
    return random_.chance(0.6) ? image_input() : model_.input({random_.between(1, 9), random_.between(1, 64)});
  }
  Value x = head(nullptr);
  for (int64_t i = random_.between(0, 2); i > 0; --i) x = chain_op(x);
  return x;
}

/// QuantizeLinear of `x`, a float value that a fast backend computes within `absolute` +
/// `relative` * max(1, |x|) of portable's. Only values within a quantum of the type's
/// range can round differently (beyond, both saturate), so |x| <= (span + 1) * scale.
Generator::Quantized Generator::quantize(const Value& x, float scale, double absolute, double relative) {
  const ElementType type = random_.chance(0.5) ? ElementType::kUInt8 : ElementType::kInt8;
  Quantized q;
  q.scale = scale;
  q.zero_point = draw_zero_point(type);
  const double span = std::max(q.zero_point - lowest(type), highest(type) - q.zero_point) + 1.0;
  q.error = quanta_for((absolute + relative * std::max(1.0, span * scale)) / scale);
  q.value =
      node("QuantizeLinear", {x, model_.constant({}, {scale}), zero_point(q.zero_point, type)}, x.shape, {}, type);
  return q;
}

/// DequantizeLinear: exact on both sides, so values `error` quanta apart come out
/// error * scale apart.
Value Generator::dequantize(const Quantized& x) {
  return node("DequantizeLinear", {x.value, model_.constant({}, {x.scale}), zero_point(x.zero_point, x.value.type)},
              x.value.shape);
}

Generator::Quantized Generator::quantized_step(const Quantized& x) {
  const size_t rank = x.value.shape.size();
  switch (random_.between(0, 2)) {
    case 0:
      if (rank == 3 || rank == 4) return qlinear_conv(x);
      break;
    case 1:
      if (rank >= 2) return qlinear_matmul(x);
      break;
    default: break;
  }
  return requantize(x);
}

Generator::Quantized Generator::qlinear_conv(const Quantized& x) {
  const Shape& xs = x.value.shape;
  const int64_t channels = xs[1];
  std::vector<int64_t> kernel, strides, pads_begin, pads_end;
  Shape ys = {xs[0], 0};
  for (size_t d = 2; d < xs.size(); ++d) {
    const int64_t k = std::min<int64_t>(random_.between(1, 3), xs[d]), stride = random_.between(1, 2);
    const int64_t begin = random_.between(0, k - 1), end = random_.between(0, k - 1);
    kernel.push_back(k), strides.push_back(stride), pads_begin.push_back(begin), pads_end.push_back(end);
    ys.push_back((xs[d] + begin + end - k) / stride + 1);
  }
  const int64_t groups = channels > 1 && random_.chance(0.3) ? channels : 1;  // depthwise
  const int64_t out_channels = groups > 1 ? channels : random_.between(1, 16);
  ys[1] = out_channels;
  if (element_count(ys) > kMaxElements) return requantize(x);
  Shape ws = {out_channels, channels / groups};
  ws.insert(ws.end(), kernel.begin(), kernel.end());
  const QuantizedWeights w = int8_weights(ws, out_channels, true);
  std::vector<Value> bias;
  if (random_.chance(0.5)) {
    std::vector<int32_t> values(static_cast<size_t>(out_channels));
    for (int32_t& value : values) value = static_cast<int32_t>(random_.between(-20000, 20000));
    bias.push_back(model_.integers({out_channels}, ElementType::kInt32, values));
  }
  std::vector<int64_t> pads = pads_begin;
  pads.insert(pads.end(), pads_end.begin(), pads_end.end());
  return requantized("QLinearConv", x, w, element_count(ws) / out_channels, ys, bias,
                     {Attr::is("kernel_shape", kernel), Attr::is("strides", strides), Attr::is("pads", pads),
                      Attr::i("group", groups)});
}

Generator::Quantized Generator::qlinear_matmul(const Quantized& x) {
  const int64_t k = x.value.shape.back(), n = random_.between(1, 40);
  Shape ys = x.value.shape;
  ys.back() = n;
  if (element_count(ys) > kMaxElements) return requantize(x);
  return requantized("QLinearMatMul", x, int8_weights({k, n}, n, false), k, ys, {}, {});
}

/// Weights of `shape` whose output channels (`channels` of them) are its first axis
/// (a convolution's) or its last (MatMul's B): mostly int8 with zero point 0, as oneDNN
/// takes them; now and then uint8, or int8 with a zero point, which it declines.
Generator::QuantizedWeights Generator::int8_weights(const Shape& shape, int64_t channels, bool channel_first) {
  QuantizedWeights w;
  const int64_t kind = random_.between(0, 19);
  const ElementType type = kind == 0 ? ElementType::kUInt8 : ElementType::kInt8;
  const int32_t zero = kind == 0 ? 128 : kind == 1 ? static_cast<int32_t>(random_.between(-5, 5)) : 0;
  const int64_t count = element_count(shape);
  std::vector<int32_t> values(static_cast<size_t>(count));
  w.abs_sums.assign(static_cast<size_t>(channels), 0.0);
  for (int64_t i = 0; i < count; ++i) {
    int32_t& value = values[size_t(i)];
    value = static_cast<int32_t>(random_.between(lowest(type), highest(type)));
    const int64_t channel = channel_first ? i / (count / channels) : i % channels;
    w.abs_sums[size_t(channel)] += std::abs(value - zero);
  }
  w.typical_scale = random_.real(0.002f, 0.02f);
  const bool per_channel = channels > 1 && random_.chance(0.5);
  w.scales.assign(per_channel ? size_t(channels) : 1, w.typical_scale);
  if (per_channel) {
    for (float& scale : w.scales) scale *= random_.real(0.5f, 2.0f);
  }
  const Shape scale_shape = per_channel ? Shape{channels} : Shape{};
  w.values = model_.integers(shape, type, values);
  w.scale = model_.constant(scale_shape, w.scales);
  w.zero_point = model_.integers(scale_shape, type, std::vector<int32_t>(w.scales.size(), zero));
  return w;
}

/// QLinearConv or QLinearMatMul of `x` with weights `w`: y = saturate(round(acc * x_scale *
/// w_scale / y_scale) + y_zero_point). Inputs `x.error` quanta apart move acc by up to
/// x.error * sum |w| in a channel; and the product, float32 on one side and double on
/// another, may round across a half: one quantum more.
Generator::Quantized Generator::requantized(const std::string& op, const Quantized& x, const QuantizedWeights& w,
                                            int64_t fan_in, Shape ys, std::vector<Value> extra,
                                            const std::vector<Attr>& attrs) {
  const float range = 2.0f * x.scale * w.typical_scale * std::sqrt(static_cast<float>(fan_in)) * 64.0f * 73.0f;
  const ElementType type = random_.chance(0.5) ? ElementType::kUInt8 : ElementType::kInt8;
  Quantized y;
  y.scale = draw_scale(range);
  y.zero_point = draw_zero_point(type);
  double worst = 0;
  for (size_t c = 0; c < w.abs_sums.size(); ++c) {
    const double multiplier = double(x.scale) * w.scales[w.scales.size() == 1 ? 0 : c] / y.scale;
    worst = std::max(worst, multiplier * double(x.error) * w.abs_sums[c]);
  }
  y.error = quanta_for(worst + kFloatOpRounding);
  std::vector<Value> inputs = {
      x.value,      model_.constant({}, {x.scale}), zero_point(x.zero_point, x.value.type), w.values, w.scale,
      w.zero_point, model_.constant({}, {y.scale}), zero_point(y.zero_point, type)};
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  y.value = node(op, inputs, std::move(ys), attrs, type);
  return y;
}

/// DequantizeLinear, a float op, QuantizeLinear: with a scale drawn afresh, or 2 or 4
/// times the last (values of a scale of few mantissa bits then land on ties), or the same.
Generator::Quantized Generator::requantize(const Quantized& x) {
  double absolute = double(x.error) * x.scale, relative = 0;
  bool exact = true;
  const Value y = float_step(dequantize(x), &absolute, &relative, &exact);
  const std::vector<float> ratios = {2.0f, 4.0f, 0.5f, 1.0f};
  const float scale = random_.chance(0.5) ? x.scale * random_.pick(ratios) : draw_scale(128.0f * x.scale);
  return quantize(y, scale, absolute, exact ? 0.0 : relative);
}

/// One float op between a DequantizeLinear and a QuantizeLinear, as a quantized model has
/// them (oneDNN keeps them in float32): none, Relu or MaxPool (exact), an Add or Mul of a
/// constant, or an Add of a second quantized input (both may round), or a per-axis
/// QuantizeLinear and DequantizeLinear (exact).
Value Generator::float_step(const Value& x, double* absolute, double* relative, bool* exact) {
  const Shape& xs = x.shape;
  switch (random_.between(0, 6)) {
    case 6: return per_axis_round_trip(x, absolute);
    case 0: return x;
    case 1: return node("Relu", {x}, xs);
    case 2: {
      if (xs.size() != 4) return x;
      const int64_t k = std::min<int64_t>({2, xs[2], xs[3]});
      const Shape ys = {xs[0], xs[1], xs[2] - k + 1, xs[3] - k + 1};
      return node("MaxPool", {x}, ys, {Attr::is("kernel_shape", {k, k})});
    }
    case 3:
      *exact = false, *relative = kFloatOpRounding;
      return node("Add", {x, model_.constant({}, {random_.real(-1.0f, 1.0f)})}, xs);
    case 4: {
      const float c = random_.signed_real(0.25f, 3.0f);
      *absolute *= std::fabs(c);
      *exact = false, *relative = kFloatOpRounding;
      return node("Mul", {x, model_.constant({}, {c})}, xs);
    }
    default: {
      const Quantized other = quantize(model_.input(xs), draw_scale(2.0f), 0.0, 0.0);
      *exact = false, *relative = kFloatOpRounding;
      return node("Add", {x, dequantize(other)}, xs);
    }
  }
}

/// QuantizeLinear and DequantizeLinear along a random axis, a scale and zero point per
/// index: both exact, so values `absolute` apart come out at most quanta_for(absolute /
/// the smallest scale) of the largest scale apart.
Value Generator::per_axis_round_trip(const Value& x, double* absolute) {
  const auto rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis = random_.between(0, rank - 1), channels = x.shape[size_t(axis)];
  const ElementType type = random_.chance(0.5) ? ElementType::kUInt8 : ElementType::kInt8;
  const float base = draw_scale(2.0f);
  std::vector<float> scales(static_cast<size_t>(channels), base);
  std::vector<int32_t> zero_points(static_cast<size_t>(channels));
  for (size_t c = 0; c < scales.size(); ++c) {
    if (random_.chance(0.7)) scales[c] *= random_.pick(std::vector<float>{0.5f, 2.0f, 0.75f, 1.5f});
    zero_points[c] = draw_zero_point(type);
  }
  const float smallest = *std::min_element(scales.begin(), scales.end());
  const float largest = *std::max_element(scales.begin(), scales.end());
  *absolute = double(quanta_for(*absolute / smallest)) * largest;
  const Value scale = model_.constant({channels}, scales);
  const Value zero = model_.integers({channels}, type, zero_points);
  const std::vector<Attr> attrs = {Attr::i("axis", random_.chance(0.3) ? axis - rank : axis)};
  const Value q = node("QuantizeLinear", {x, scale, zero}, x.shape, attrs, type);
  return node("DequantizeLinear", {q, scale, zero}, x.shape, attrs);
}

/// The last value as it is (uint8 or int8), or dequantized and through up to two float
/// ops of slope at most 1 (or a Mul, whose factor scales the bound).
void Generator::quantized_output(const Quantized& x) {
  if (random_.chance(0.35)) return output(x.value, "q" + std::to_string(x.error));
  Value y = dequantize(x);
  double absolute = double(x.error) * x.scale;
  for (int64_t i = random_.between(0, 2); i > 0; --i) y = lipschitz_op(y, &absolute);
  output(y, "a" + number(absolute));
}

Value Generator::lipschitz_op(const Value& x, double* absolute) {
  const std::vector<std::string> plain = {"Relu", "Abs", "Neg", "Sigmoid", "Tanh"};
  switch (random_.between(0, 4)) {
    case 0: return node("LeakyRelu", {x}, x.shape, {Attr::f("alpha", random_.real(0.01f, 0.3f))});
    case 1: return node("Add", {x, model_.constant({}, {random_.real(-2.0f, 2.0f)})}, x.shape);
    case 2: {
      const float c = random_.signed_real(0.25f, 3.0f);
      *absolute *= std::fabs(c);
      return node("Mul", {x, model_.constant({}, {c})}, x.shape);
    }
    case 3: return reshape(x);
    default: return node(random_.pick(plain), {x}, x.shape);
  }
}

/// About the scale that maps [-range, range] onto 255 steps, times 0.25 to 2 (below 1,
/// the ends saturate); or, four times in ten, one of at most four mantissa bits
/// (m * 2^-e, m < 16), whose multiples by small integers are exact in float32.
float Generator::draw_scale(float range) {
  const float target = 2.0f * range / 255.0f * random_.real(0.25f, 2.0f);
  if (!random_.chance(0.4)) return target;
  const int m = static_cast<int>(random_.between(1, 15));
  const int e = static_cast<int>(std::floor(std::log2(static_cast<float>(m) / target)));
  return std::ldexp(static_cast<float>(m), -e);
}

/// The type's ends and middle (values then saturate on one side) or any value of it.
int32_t Generator::draw_zero_point(ElementType type) {
  switch (random_.between(0, 4)) {
    case 0: return lowest(type);
    case 1: return highest(type);
    case 2: return type == ElementType::kUInt8 ? 128 : 0;
    default: return static_cast<int32_t>(random_.between(lowest(type), highest(type)));
  }
}

void Generator::output(const Value& value, const std::string& bound) {
  model_.output(value);
  bounds_.push_back(bound);
}

}  // namespace plugrt::differential::internal
