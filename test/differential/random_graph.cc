// SPDX-License-Identifier: Apache-2.0
#include "random_graph.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "onnx_writer.h"
#include "random_graph_internal.h"

namespace plugrt::differential {

namespace internal {

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

RandomGraph Generator::generate() {
  Random choice(graph_.seed ^ 0x51a7e5c0de5eedULL);
  if (choice.chance(0.25)) return run_quantized();
  if (choice.chance(0.1)) return run_einsum();
  if (choice.chance(0.05)) return run_padded();
  return choice.chance(0.04) ? run_recurrent() : run();
}

RandomGraph Generator::run() {
  Value x = head(nullptr);
  const int64_t first_length = random_.between(1, 4);
  for (int64_t i = 0; i < first_length; ++i) {
    x = chain_op(x);
    if (random_.chance(0.1)) model_.output(x);  // a second reader of a fused value
  }
  if (random_.chance(0.3)) {  // a second stage on the first one's result
    x = head(&x);
    const int64_t second_length = random_.between(1, 3);
    for (int64_t i = 0; i < second_length; ++i) x = chain_op(x);
  }
  model_.output(x);
  graph_.onnx = model_.serialise();
  return graph_;
}

Value Generator::node(const std::string& op, const std::vector<Value>& inputs, Shape shape,
                      const std::vector<Attr>& attrs, ElementType type) {
  graph_.description += (graph_.description.empty() ? "" : " ") + op + shape_text(shape);
  return model_.node(op, inputs, std::move(shape), attrs, type);
}

Value Generator::head(const Value* x) {
  if (x == nullptr) {
    switch (random_.between(0, 9)) {
      case 0:
      case 1: return matmul(nullptr);
      case 2: return gemm(nullptr);
      case 3:
      case 4: return conv(nullptr);
      case 5: return conv_transpose(nullptr);
      case 6: return pool(nullptr);
      case 7: return normalization();
      case 8:
        return softmax(random_.chance(0.5) ? image_input()
                                           : model_.input({random_.between(1, 6), random_.between(2, 40)}));
      default: return binary_of_inputs();
    }
  }
  // A second stage takes only well-conditioned ops (no normalisation of a value that a
  // clip may have made constant).
  if (x->shape.size() == 4) {
    switch (random_.between(0, 3)) {
      case 0: return conv(x);
      case 1: return pool(x);
      case 2: return global_pool(*x);
      default: return conv_transpose(x);
    }
  }
  if (x->shape.size() == 3 && random_.chance(0.3)) return conv_transpose(x);  // a 1-D one
  if (x->shape.size() == 2 && random_.chance(0.5)) return gemm(x);
  if (x->shape.size() >= 2) return matmul(x);
  return softmax(*x);
}

// ---- Heads ------------------------------------------------------------------------------

Value Generator::matmul(const Value* given) {
  Value x;
  if (given != nullptr) {
    x = *given;
  } else {
    Shape shape;
    const int64_t rank = random_.between(2, 4);
    for (int64_t d = 0; d + 2 < rank; ++d) shape.push_back(random_.between(1, 3));
    shape.push_back(random_.between(1, 9));
    shape.push_back(random_.between(1, 70));
    x = model_.input(shape);
  }
  const Shape& xs = x.shape;
  const int64_t k = xs.back(), n = random_.between(1, 40);
  Shape ws = {k, n}, ys = xs;
  ys.back() = n;
  Value w;
  if (xs.size() > 2 && random_.chance(0.25)) {  // batched weights, as attention's
    ws = xs;
    ws[ws.size() - 2] = k;
    ws.back() = n;
    w = random_.chance(0.5) ? weights(ws, k) : model_.input(ws);
  } else {
    w = random_.chance(0.15) ? model_.input(ws) : weights(ws, k);
  }
  reduces(k);
  return node("MatMul", {x, w}, ys);
}

Value Generator::gemm(const Value* given) {
  const bool trans_a = given == nullptr && random_.chance(0.2), trans_b = random_.chance(0.5);
  const int64_t m = given ? given->shape[0] : random_.between(1, 9);
  const int64_t k = given ? given->shape[1] : random_.between(1, 70);
  const int64_t n = random_.between(1, 40);
  Value a = given ? *given : model_.input(trans_a ? Shape{k, m} : Shape{m, k});
  Value b = weights(trans_b ? Shape{n, k} : Shape{k, n}, k);
  std::vector<Value> inputs = {a, b};
  const std::vector<Shape> biases = {{n}, {1}, {m, n}, {m, 1}, {1, n}, {}};
  if (random_.chance(0.7)) inputs.push_back(random_constant(random_.pick(biases), -1.0f, 1.0f));
  const std::vector<float> factors = {1.0f, 1.0f, 0.5f, 1.7f, -1.0f};
  reduces(k);
  return node("Gemm", inputs, {m, n},
              {Attr::i("transA", trans_a), Attr::i("transB", trans_b), Attr::f("alpha", random_.pick(factors)),
               Attr::f("beta", random_.pick(factors))});
}

Value Generator::image_input() {
  const bool one_d = random_.chance(0.2);
  Shape shape = {random_.between(1, 2), random_.between(1, 16), random_.between(1, 12)};
  if (!one_d) shape.push_back(random_.between(1, 12));
  return model_.input(shape);
}

Value Generator::conv(const Value* given) {
  const Value x = given ? *given : image_input();
  const Shape& xs = x.shape;
  const int64_t channels = xs[1];
  std::vector<int64_t> kernel, strides, dilations, begin, end;
  Shape ys = {xs[0], 0};
  for (size_t d = 2; d < xs.size(); ++d) {
    const int64_t k = random_.between(1, 3), dilation = random_.chance(0.2) ? 2 : 1, stride = random_.between(1, 2);
    const int64_t pad_begin = random_.between(0, k - 1), pad_end = random_.between(0, k - 1);
    const int64_t span = dilation * (k - 1) + 1, padded = xs[d] + pad_begin + pad_end;
    if (padded < span) return node("Relu", {x}, xs);  // no window fits: keep the chain going
    kernel.push_back(k), strides.push_back(stride), dilations.push_back(dilation);
    begin.push_back(pad_begin), end.push_back(pad_end);
    ys.push_back((padded - span) / stride + 1);
  }
  int64_t groups = 1;
  if (channels > 1 && random_.chance(0.3))
    groups = channels;  // depthwise
  else if (channels % 2 == 0 && random_.chance(0.2))
    groups = channels / 2;  // grouped
  const int64_t out_channels = groups * random_.between(1, groups > 1 ? 2 : 16);
  ys[1] = out_channels;
  if (element_count(ys) > kMaxElements) return node("Relu", {x}, xs);
  Shape ws = {out_channels, channels / groups};
  ws.insert(ws.end(), kernel.begin(), kernel.end());
  const int64_t fan_in = element_count(ws) / out_channels;
  std::vector<Value> inputs = {x, weights(ws, fan_in)};
  if (random_.chance(0.5)) inputs.push_back(random_constant({out_channels}, -1.0f, 1.0f));
  std::vector<int64_t> pads = begin;
  pads.insert(pads.end(), end.begin(), end.end());
  reduces(fan_in);
  return node("Conv", inputs, ys,
              {Attr::is("kernel_shape", kernel), Attr::is("strides", strides), Attr::is("dilations", dilations),
               Attr::is("pads", pads), Attr::i("group", groups)});
}

Value Generator::conv_transpose(const Value* given) {
  Value x;
  if (given != nullptr) {
    x = *given;
  } else {
    Shape shape = {random_.between(1, 2), random_.between(1, 8), random_.between(1, 8)};
    if (!random_.chance(0.25)) shape.push_back(random_.between(1, 8));  // otherwise 1-D
    x = model_.input(shape);
  }
  const Shape& xs = x.shape;
  const int64_t channels = xs[1];
  int64_t groups = 1;
  if (channels > 1 && random_.chance(0.2))
    groups = channels;  // depthwise
  else if (channels % 2 == 0 && random_.chance(0.2))
    groups = 2;
  const int64_t out_channels = groups * random_.between(1, groups > 1 ? 3 : 8);
  // How the output size is given: pads, auto_pad or output_shape (ONNX's formulas).
  const int64_t mode = random_.between(0, 9);  // 0-6 pads, 7 SAME_*, 8 VALID, 9 output_shape
  const bool upper = random_.chance(0.5);
  std::vector<int64_t> kernel, strides, dilations, begin, end, output_padding, output_shape;
  Shape ys = {xs[0], out_channels};
  for (size_t d = 2; d < xs.size(); ++d) {
    const int64_t k = random_.between(1, 3), dilation = random_.chance(0.2) ? 2 : 1;
    const int64_t extent = dilation * (k - 1) + 1;
    int64_t stride = random_.between(1, 3);
    // ONNX's shape inference (1.12) sizes SAME_* outputs without output_padding and
    // without the end that holds only the bias: keep to the graphs where it agrees.
    if (mode == 7) stride = std::min(stride, extent);
    const int64_t pad_begin = random_.between(0, extent - 1), pad_end = random_.between(0, extent - 1);
    const int64_t room = mode == 7 ? 0 : std::max(stride, dilation) - 1;  // output_padding stays below both
    const int64_t extra = room > 0 && random_.chance(0.4) ? random_.between(1, room) : 0;
    const int64_t natural = (xs[d] - 1) * stride + extent + extra;
    int64_t length = natural - pad_begin - pad_end;
    if (mode == 7) length = xs[d] * stride;
    if (mode == 8) length = natural;
    // Shorter by less than the extent (ONNX's inference gives up beyond), or longer.
    if (mode == 9) length = natural + random_.between(1 - extent, std::max<int64_t>(stride - 1, 1));
    if (length < 1) return node("Relu", {x}, xs);
    kernel.push_back(k), strides.push_back(stride), dilations.push_back(dilation), output_padding.push_back(extra);
    begin.push_back(pad_begin), end.push_back(pad_end), output_shape.push_back(length);
    ys.push_back(length);
  }
  if (element_count(ys) > kMaxElements) return node("Relu", {x}, xs);
  Shape ws = {channels, out_channels / groups};
  ws.insert(ws.end(), kernel.begin(), kernel.end());
  const int64_t fan_in = element_count(ws) / out_channels;
  std::vector<Value> inputs = {x, weights(ws, fan_in)};
  if (random_.chance(0.5)) inputs.push_back(random_constant({out_channels}, -1.0f, 1.0f));
  std::vector<int64_t> pads = begin;
  pads.insert(pads.end(), end.begin(), end.end());
  std::vector<Attr> attrs = {Attr::is("kernel_shape", kernel), Attr::is("strides", strides),
                             Attr::is("dilations", dilations), Attr::is("output_padding", output_padding),
                             Attr::i("group", groups)};
  if (mode <= 6) attrs.push_back(Attr::is("pads", pads));
  if (mode == 7) attrs.push_back(Attr::s("auto_pad", upper ? "SAME_UPPER" : "SAME_LOWER"));
  if (mode == 8) attrs.push_back(Attr::s("auto_pad", "VALID"));
  if (mode == 9) attrs.push_back(Attr::is("output_shape", output_shape));
  reduces(fan_in);
  return node("ConvTranspose", inputs, ys, attrs);
}

Value Generator::pool(const Value* given) {
  const Value x = given ? *given : image_input();
  const Shape& xs = x.shape;
  const bool max = random_.chance(0.5);
  std::vector<int64_t> kernel, strides, pads_begin, pads_end;
  Shape ys = {xs[0], xs[1]};
  for (size_t d = 2; d < xs.size(); ++d) {
    const int64_t k = std::min<int64_t>(random_.between(1, 3), xs[d]), stride = random_.between(1, 2);
    const int64_t pad_begin = random_.between(0, k - 1), pad_end = random_.between(0, k - 1);
    kernel.push_back(k), strides.push_back(stride), pads_begin.push_back(pad_begin), pads_end.push_back(pad_end);
    ys.push_back((xs[d] + pad_begin + pad_end - k) / stride + 1);
  }
  std::vector<int64_t> pads = pads_begin;
  pads.insert(pads.end(), pads_end.begin(), pads_end.end());
  std::vector<Attr> attrs = {Attr::is("kernel_shape", kernel), Attr::is("strides", strides), Attr::is("pads", pads)};
  if (!max) attrs.push_back(Attr::i("count_include_pad", random_.chance(0.5)));
  reduces(element_count(kernel));
  return node(max ? "MaxPool" : "AveragePool", {x}, ys, attrs);
}

Value Generator::global_pool(const Value& x) {
  Shape ys = {x.shape[0], x.shape[1], 1, 1};
  reduces(x.shape[2] * x.shape[3]);
  return node(random_.chance(0.7) ? "GlobalAveragePool" : "GlobalMaxPool", {x}, ys);
}

Value Generator::normalization() {
  const Value x = image_input();
  const int64_t channels = x.shape[1];
  switch (random_.between(0, 2)) {
    case 0: {
      const std::vector<Value> inputs = {
          x, random_constant({channels}, 0.5f, 1.5f), random_constant({channels}, -1.0f, 1.0f),
          random_constant({channels}, -0.5f, 0.5f), random_constant({channels}, 0.5f, 2.0f)};
      return node("BatchNormalization", inputs, x.shape, {Attr::f("epsilon", 1e-5f)});
    }
    case 1: {
      if (element_count(x.shape) / (x.shape[0] * channels) < 2) return node("Tanh", {x}, x.shape);
      reduces(element_count(x.shape) / (x.shape[0] * channels));
      return node("InstanceNormalization",
                  {x, random_constant({channels}, 0.5f, 1.5f), random_constant({channels}, -1.0f, 1.0f)}, x.shape,
                  {Attr::f("epsilon", 1e-5f)});
    }
    default: {
      const int64_t last = x.shape.back();
      if (last < 2) return node("Sigmoid", {x}, x.shape);
      reduces(last);
      return node("LayerNormalization", {x, random_constant({last}, 0.5f, 1.5f), random_constant({last}, -1.0f, 1.0f)},
                  x.shape, {Attr::i("axis", -1), Attr::f("epsilon", 1e-5f)});
    }
  }
}

Value Generator::softmax(const Value& x) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis = random_.chance(0.7) ? -1 : random_.between(0, rank - 1);
  reduces(x.shape[static_cast<size_t>(axis < 0 ? rank - 1 : axis)]);
  return node("Softmax", {x}, x.shape, {Attr::i("axis", axis)});
}

Value Generator::binary_of_inputs() {
  const Value x = random_.chance(0.5) ? image_input() : model_.input({random_.between(1, 6), random_.between(1, 40)});
  const std::vector<Operand> kinds = {Operand::kFull, Operand::kPerChannel, Operand::kLastAxis, Operand::kBroadcast};
  Value other = model_.input(operand_shape(x.shape, random_.pick(kinds)));
  const std::vector<std::string> ops = {"Add", "Mul", "Sub", "Max"};
  const bool swap = random_.chance(0.3);
  return node(random_.pick(ops), swap ? std::vector<Value>{other, x} : std::vector<Value>{x, other}, x.shape);
}

// ---- The chain ----------------------------------------------------------------------------

Value Generator::chain_op(const Value& x) {
  switch (random_.between(0, 9)) {
    case 0:
    case 1:
    case 2: return unary(x);
    case 3:
    case 4:
    case 5:
    case 6: return binary_with_constant(x);
    case 7: return binary_with_input(x);
    case 8: return reshape(x);
    default: {  // functions defined on part of the line, on a value made to fit
      const int64_t which = random_.between(0, 4);
      if (which == 0) {
        const Value bounded = node("Clip", {x, model_.constant({}, {-3.0f}), model_.constant({}, {3.0f})}, x.shape);
        return node("Exp", {bounded}, x.shape);
      }
      if (which == 4) return node("Pow", {x, model_.constant({}, {random_.chance(0.5) ? 2.0f : 3.0f})}, x.shape);
      const std::vector<std::string> ops = {"Sqrt", "Log", "Reciprocal"};
      return node(ops[static_cast<size_t>(which - 1)], {positive(x)}, x.shape);
    }
  }
}

/// |x| + c, c in [0.5, 1.5): a value away from zero, for a divisor, a logarithm...
Value Generator::positive(const Value& x) {
  const Value magnitude = node("Abs", {x}, x.shape);
  return node("Add", {magnitude, model_.constant({}, {random_.real(0.5f, 1.5f)})}, x.shape);
}

Value Generator::unary(const Value& x) {
  const std::vector<std::string> plain = {"Relu", "Sigmoid", "Tanh", "Abs", "Neg", "HardSwish", "Erf", "Identity"};
  switch (random_.between(0, 5)) {
    case 0: return node("LeakyRelu", {x}, x.shape, {Attr::f("alpha", random_.real(0.01f, 0.3f))});
    case 1:
      return node("HardSigmoid", {x}, x.shape,
                  {Attr::f("alpha", random_.real(0.1f, 0.5f)), Attr::f("beta", random_.real(0.2f, 0.8f))});
    case 2: {
      const float lo = random_.real(-2.0f, 0.5f), hi = lo + random_.real(0.1f, 3.0f);
      const Value none{"", {}};
      switch (random_.between(0, 2)) {
        case 0: return node("Clip", {x, model_.constant({}, {lo}), model_.constant({}, {hi})}, x.shape);
        case 1: return node("Clip", {x, model_.constant({}, {lo})}, x.shape);
        default: return node("Clip", {x, none, model_.constant({}, {hi})}, x.shape);
      }
    }
    default: return node(random_.pick(plain), {x}, x.shape);
  }
}

Value Generator::binary_with_constant(const Value& x) {
  const std::vector<std::string> ops = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  const std::string& op = random_.pick(ops);
  const std::vector<Operand> kinds = {Operand::kScalar,     Operand::kScalar,   Operand::kOneElement,
                                      Operand::kPerChannel, Operand::kLastAxis, Operand::kBroadcast,
                                      Operand::kFull};
  const Shape shape = operand_shape(x.shape, random_.pick(kinds));
  const bool constant_first = random_.chance(0.4);
  if (op == "Div") {
    if (constant_first) {  // c / x, on a divisor away from zero
      return node(op, {random_constant(shape, -3.0f, 3.0f), positive(x)}, x.shape);
    }
    std::vector<float> values(static_cast<size_t>(element_count(shape)));
    for (float& value : values) value = random_.signed_real(0.4f, 3.0f);
    if (shape.empty() && random_.chance(0.3)) values = {2.3025851f};
    return node(op, {x, model_.constant(shape, values)}, x.shape);
  }
  Value c = random_constant(shape, -3.0f, 3.0f);
  if (shape.empty() && random_.chance(0.3)) {
    const std::vector<float> notable = {0.0f, 1.0f, -1.0f, 10.0f, 0.5f};
    c = model_.constant(shape, {random_.pick(notable)});
  }
  return node(op, constant_first ? std::vector<Value>{c, x} : std::vector<Value>{x, c}, x.shape);
}

Value Generator::binary_with_input(const Value& x) {
  const std::vector<Operand> kinds = {Operand::kFull, Operand::kFull, Operand::kPerChannel, Operand::kBroadcast};
  const Value other = model_.input(operand_shape(x.shape, random_.pick(kinds)));
  const std::vector<std::string> ops = {"Add", "Sub", "Mul"};
  const bool other_first = random_.chance(0.4);
  return node(random_.pick(ops), other_first ? std::vector<Value>{other, x} : std::vector<Value>{x, other}, x.shape);
}

Value Generator::reshape(const Value& x) {
  const Shape& xs = x.shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t which = random_.between(0, 4);
  if (which == 3 && rank >= 3) return channel_shuffle(x);
  if (which == 4 && rank >= 3 && rank <= 5) return resize_nearest(x);
  if (which == 0 && rank >= 2) {  // a random permutation
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    for (int64_t i = rank - 1; i > 0; --i) std::swap(perm[size_t(i)], perm[size_t(random_.between(0, i))]);
    Shape ys;
    for (int64_t p : perm) ys.push_back(xs[size_t(p)]);
    return node("Transpose", {x}, ys, {Attr::is("perm", perm)});
  }
  if (which == 1 && rank >= 3) {  // the last two axes merged
    Shape ys(xs.begin(), xs.end() - 2);
    ys.push_back(xs[size_t(rank - 2)] * xs[size_t(rank - 1)]);
    return node("Reshape", {x, model_.ints(ys)}, ys);
  }
  if (rank >= 2) return node("Flatten", {x}, {xs[0], element_count(xs) / xs[0]}, {Attr::i("axis", 1)});
  return node("Identity", {x}, xs);
}

/// ShuffleNet's channel shuffle (Reshape [N, C, ...] to [N, g, C / g, ...], Transpose of
/// those two axes, Reshape back), or sometimes one that is not (the Transpose also swaps
/// two trailing axes of equal size), along axis 1 when it has a divisor.
Value Generator::channel_shuffle(const Value& x) {
  const Shape& xs = x.shape;
  std::vector<int64_t> divisors;
  for (int64_t g = 2; g < xs[1]; ++g) {
    if (xs[1] % g == 0) divisors.push_back(g);
  }
  if (divisors.empty()) return node("Identity", {x}, xs);
  const int64_t groups = random_.pick(divisors);
  Shape grouped = xs;
  grouped[1] = xs[1] / groups;
  grouped.insert(grouped.begin() + 1, groups);
  std::vector<int64_t> perm(grouped.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[1], perm[2]);
  const size_t last = grouped.size() - 1;
  if (grouped[last] == grouped[last - 1] && last - 1 > 2 && random_.chance(0.2)) std::swap(perm[last], perm[last - 1]);
  Shape swapped;
  for (int64_t p : perm) swapped.push_back(grouped[size_t(p)]);
  const Value split = node("Reshape", {x, model_.ints(grouped)}, grouped);
  const Value transposed = node("Transpose", {split}, swapped, {Attr::is("perm", perm)});
  return node("Reshape", {transposed, model_.ints(xs)}, xs);
}

/// A nearest Resize of the spatial axes: every coordinate mode and rounding, by whole
/// scales of 1 to 3, halving, or sizes that are not a whole multiple, given as scales or
/// sizes. oneDNN takes the combinations whose indices agree with ONNX's.
Value Generator::resize_nearest(const Value& x) {
  const Shape& xs = x.shape;
  Shape ys = xs;
  std::vector<float> scales(xs.size(), 1.0f);
  const bool by_sizes = random_.chance(0.4);
  for (size_t d = 2; d < xs.size(); ++d) {
    const int64_t kind = random_.between(0, 5);
    if (kind <= 3) {
      ys[d] = xs[d] * random_.between(1, 3);
    } else if (kind == 4 && xs[d] % 2 == 0) {
      ys[d] = xs[d] / 2;
    } else {
      ys[d] = random_.between(1, 2 * xs[d] + 1);
    }
    scales[d] = static_cast<float>(ys[d]) / static_cast<float>(xs[d]);
    if (!by_sizes) ys[d] = static_cast<int64_t>(std::floor(static_cast<float>(xs[d]) * scales[d]));
  }
  if (element_count(ys) == 0 || element_count(ys) > 4 * 65536) return node("Identity", {x}, xs);
  const std::vector<std::string> transforms = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                               "tf_half_pixel_for_nn"};
  const std::vector<std::string> roundings = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  // Scales with a trailing empty sizes input defeat ONNX's shape inference: leave it out.
  const Value none{"", {}};
  std::vector<Value> inputs = {x, none, by_sizes ? none : model_.constant({int64_t(xs.size())}, scales)};
  if (by_sizes) inputs.push_back(model_.ints(ys));
  return node("Resize", inputs, ys,
              {Attr::s("mode", "nearest"), Attr::s("coordinate_transformation_mode", random_.pick(transforms)),
               Attr::s("nearest_mode", random_.pick(roundings))});
}

// ---- Helpers -----------------------------------------------------------------------------

/// Weights of the scale that trained layers have: uniform with variance 1 / fan_in.
Value Generator::weights(Shape shape, int64_t fan_in) {
  const float bound = std::sqrt(3.0f / static_cast<float>(std::max<int64_t>(fan_in, 1)));
  return random_constant(std::move(shape), -bound, bound);
}

Value Generator::random_constant(Shape shape, float lo, float hi) {
  std::vector<float> values(static_cast<size_t>(element_count(shape)));
  for (float& value : values) value = random_.real(lo, hi);
  if (!values.empty() && random_.chance(0.2)) values[0] = 0.0f;  // zeros happen in weights
  return model_.constant(std::move(shape), std::move(values));
}

Shape Generator::operand_shape(const Shape& of, Operand kind) {
  const size_t rank = of.size();
  switch (kind) {
    case Operand::kScalar: return {};
    case Operand::kOneElement: return Shape(random_.between(1, int64_t(rank)), 1);
    case Operand::kPerChannel: {
      if (rank < 2) return {of.back()};
      Shape shape(rank - 1, 1);  // [C, 1, ...]: axis 1 of an NC... value
      shape[0] = of[1];
      return shape;
    }
    case Operand::kLastAxis: return {of.back()};
    case Operand::kBroadcast: {
      Shape shape = of;
      for (int64_t& dim : shape) {
        if (random_.chance(0.5)) dim = 1;
      }
      while (!shape.empty() && shape.front() == 1 && random_.chance(0.5)) shape.erase(shape.begin());
      return shape;
    }
    case Operand::kFull: return of;
  }
  return of;
}

}  // namespace internal

RandomGraph generate_graph(uint64_t seed) { return internal::Generator(seed).generate(); }

}  // namespace plugrt::differential
