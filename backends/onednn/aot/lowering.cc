// SPDX-License-Identifier: Apache-2.0
#include "aot/lowering.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace plugrt::onednn {

namespace {

using blob::Algorithm;
using blob::OpKind;

/// oneDNN's limit on dims (DNNL_MAX_NDIMS in 2.x).
constexpr size_t kMaxRank = 12;
constexpr float kFloatMax = std::numeric_limits<float>::max();

std::vector<int64_t> minus_one(const std::vector<int64_t>& values) {
  std::vector<int64_t> out;
  for (int64_t v : values) out.push_back(v - 1);
  return out;
}

/// ConvTranspose's geometry in oneDNN's terms: the pads before each spatial dim and
/// `end`, oneDNN's padding_r, chosen so that the dst has `output`'s dims. It is the end
/// pad less output_padding, negative where the output reaches past the pads (by less
/// than a stride: oneDNN refuses more).
struct TransposedWindow {
  std::vector<int64_t> strides, dilations, begin, end, output;
};

/// ONNX's rules for ConvTranspose (as the portable kernel applies them): `pads`, or the
/// padding `auto_pad` or `output_shape` implies (the odd one at the end for SAME_UPPER,
/// at the beginning otherwise; none where the output is longer than the natural size).
std::string resolve_transposed_window(const ir::Node& node, const std::vector<int64_t>& input,
                                      const std::vector<int64_t>& kernel, TransposedWindow* w) {
  const size_t spatial = input.size() - 2;
  const std::vector<int64_t> ones(spatial, 1), zeros(spatial, 0);
  w->strides = GraphView::ints_attribute(node, "strides", ones);
  w->dilations = GraphView::ints_attribute(node, "dilations", ones);
  const std::vector<int64_t> pads = GraphView::ints_attribute(node, "pads", std::vector<int64_t>(2 * spatial, 0));
  const std::vector<int64_t> extra = GraphView::ints_attribute(node, "output_padding", zeros);
  std::vector<int64_t> shape = GraphView::ints_attribute(node, "output_shape", {});
  if (shape.size() == spatial + 2) shape.erase(shape.begin(), shape.begin() + 2);  // N and C given too
  if (w->strides.size() != spatial || w->dilations.size() != spatial || pads.size() != 2 * spatial ||
      extra.size() != spatial || (!shape.empty() && shape.size() != spatial)) {
    return "strides, dilations, pads, output_padding or output_shape do not match the " + std::to_string(spatial) +
           " spatial dims";
  }
  const std::string auto_pad = GraphView::string_attribute(node, "auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID") return "auto_pad '" + auto_pad + "' is unknown";
  constexpr int64_t kMax = int64_t{1} << 31;
  auto outside = [](int64_t v, int64_t lo) { return v < lo || v > kMax; };
  for (size_t i = 0; i < spatial; ++i) {
    if (outside(kernel[i], 1) || outside(w->strides[i], 1) || outside(w->dilations[i], 1) || outside(pads[i], 0) ||
        outside(pads[i + spatial], 0) || outside(extra[i], 0) || (!shape.empty() && outside(shape[i], 1))) {
      return "a kernel, stride, dilation, pad, output_padding or output_shape value is out of range";
    }
    const int64_t span = w->strides[i] * (input[2 + i] - 1), extent = (kernel[i] - 1) * w->dilations[i] + 1;
    if (span > kMax * 512 || extent > kMax * 512) return "the output is too large";
    const int64_t base = span + extent, natural = base + extra[i];
    int64_t begin = 0, out = natural;
    if (!shape.empty() || same) {
      out = shape.empty() ? input[2 + i] * w->strides[i] : shape[i];
      const int64_t total = std::max<int64_t>(0, natural - out);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (auto_pad == "NOTSET") {
      begin = pads[i];
      out = natural - pads[i] - pads[i + spatial];
    }
    if (out < 1) return "the pads leave no output along spatial axis " + std::to_string(i);
    // oneDNN's deconvolution takes an end padding above -stride only.
    if (base - begin - out <= -w->strides[i]) {
      return "output_padding or output_shape lengthens the output by a stride or more past the pads (oneDNN "
             "cannot)";
    }
    w->begin.push_back(begin);
    w->end.push_back(base - begin - out);
    w->output.push_back(out);
  }
  return "";
}

}  // namespace

std::vector<int64_t> dnnl_dims(const std::vector<int64_t>& shape) {
  return shape.empty() ? std::vector<int64_t>{1} : shape;
}

std::string Lowering::add_node(size_t index) {
  const size_t tensors_before = list_.tensors.size();
  const size_t ops_before = list_.ops.size();
  values_added_.clear();
  std::string why = lower(graph_.node(index));
  if (!why.empty()) {  // leave nothing of a refused node behind
    list_.tensors.resize(tensors_before);
    list_.ops.resize(ops_before);
    for (int32_t value : values_added_) value_tensor_.erase(value);
  }
  return why;
}

std::string Lowering::check_activation(int32_t value, const char* role) const {
  if (!graph_.valid(value)) return std::string("the ") + role + " is missing";
  if (graph_.is_constant(value)) return std::string("the ") + role + " is a constant";
  if (!graph_.is_float(value)) return std::string("the ") + role + " is not float32";
  const std::vector<int64_t> shape = graph_.shape(value);
  if (shape.size() > kMaxRank)
    return std::string("the ") + role + " has rank " + std::to_string(shape.size()) + " (oneDNN takes up to 12)";
  for (int64_t dim : shape) {
    if (dim < 1 || dim > (std::numeric_limits<int32_t>::max)())
      return std::string("the ") + role + " has an empty dimension";
  }
  if (num_elements(shape) > (int64_t{1} << 40)) return std::string("the ") + role + " is too large";
  return "";
}

int32_t Lowering::activation(int32_t value) {
  auto found = value_tensor_.find(value);
  if (found != value_tensor_.end()) return found->second;
  Tensor tensor;
  tensor.dims = dnnl_dims(graph_.shape(value));
  if (graph_.valid(value)) {
    const ir::DType dtype = graph_.value(value).dtype();
    if (dtype == ir::DType::UInt8) tensor.dtype = blob::DataType::U8;
    if (dtype == ir::DType::Int8) tensor.dtype = blob::DataType::S8;
    if (dtype == ir::DType::Int64) tensor.dtype = blob::DataType::S64;
  }
  list_.tensors.push_back(std::move(tensor));
  const int32_t index = static_cast<int32_t>(list_.tensors.size() - 1);
  value_tensor_[value] = index;
  values_added_.push_back(value);
  return index;
}

int32_t Lowering::add_constant(std::vector<int64_t> dims, std::vector<float> data, int32_t source) {
  Tensor tensor;
  tensor.dims = dnnl_dims(dims);
  tensor.data = std::move(data);
  tensor.constant = true;
  tensor.source = source;
  list_.tensors.push_back(std::move(tensor));
  return static_cast<int32_t>(list_.tensors.size() - 1);
}

int32_t Lowering::add_internal(std::vector<int64_t> dims) {
  Tensor tensor;
  tensor.dims = dnnl_dims(dims);
  list_.tensors.push_back(std::move(tensor));
  return static_cast<int32_t>(list_.tensors.size() - 1);
}

int32_t Lowering::with_rank(int32_t tensor, size_t rank, const ir::Node& from) {
  std::vector<int64_t> dims = list_.tensors[static_cast<size_t>(tensor)].dims;
  if (dims.size() >= rank) return tensor;
  dims.insert(dims.begin(), rank - dims.size(), 1);
  if (list_.tensors[static_cast<size_t>(tensor)].constant) {
    return add_constant(dims, list_.tensors[static_cast<size_t>(tensor)].data,
                        list_.tensors[static_cast<size_t>(tensor)].source);
  }
  const int32_t reshaped = add_internal(dims);
  add(OpKind::Reshape, from, {tensor}, {reshaped});
  return reshaped;
}

Op& Lowering::add(OpKind kind, const ir::Node& from, std::vector<int32_t> inputs, std::vector<int32_t> outputs) {
  Op op;
  op.kind = kind;
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  op.name = from.name() != nullptr ? from.name()->str() : from.op_type()->str();
  list_.ops.push_back(std::move(op));
  return list_.ops.back();
}

std::string Lowering::lower(const ir::Node& node) {
  const std::string op = node.op_type()->str();
  if (op == "LSTM" || op == "GRU") return lower_recurrent(node, op == "LSTM");
  if (op == "QLinearConv" || op == "QLinearMatMul") {
    if (GraphView::num_outputs(node) != 1 || GraphView::output(node, 0) == -1) return "only one output is taken";
    return op == "QLinearConv" ? lower_qlinear_conv(node) : lower_qlinear_matmul(node);
  }
  if (op == "QuantizeLinear" || op == "DequantizeLinear") {
    if (GraphView::num_outputs(node) != 1 || GraphView::output(node, 0) == -1) return "only one output is taken";
    return lower_quantize_linear(node, op == "QuantizeLinear");
  }
  // Every output but the first must be absent (MaxPool's Indices, BatchNormalization's
  // training outputs, LayerNormalization's statistics...).
  if (GraphView::num_outputs(node) != 1 || GraphView::output(node, 0) == -1) {
    return "only nodes with exactly one output are taken";
  }
  if (std::string why = check_activation(GraphView::output(node, 0), "output"); !why.empty()) return why;
  if (op == "Conv") return lower_conv(node);
  if (op == "ConvTranspose") return lower_conv_transpose(node);
  if (op == "Gemm") return lower_gemm(node);
  if (op == "MatMul") return lower_matmul(node);
  if (op == "Einsum") return lower_einsum(node);
  if (op == "Add") return lower_binary(node, Algorithm::Add);
  if (op == "Sub") return lower_binary(node, Algorithm::Sub);
  if (op == "Mul") return lower_binary(node, Algorithm::Mul);
  if (op == "Div") return lower_binary(node, Algorithm::Div);
  if (op == "Max") return lower_binary(node, Algorithm::Max);
  if (op == "Min") return lower_binary(node, Algorithm::Min);
  if (op == "Clip") return lower_clip(node);
  if (op == "Pow") return lower_pow(node);
  if (op == "Relu" || op == "LeakyRelu" || op == "Sigmoid" || op == "Tanh" || op == "Exp" || op == "Log" ||
      op == "Sqrt" || op == "Abs" || op == "Neg" || op == "Reciprocal" || op == "Erf" || op == "Gelu" ||
      op == "HardSwish" || op == "HardSigmoid" || op == "Identity") {
    return lower_unary(node, op);
  }
  if (op == "Softmax") return lower_softmax(node, false);
  if (op == "LogSoftmax") return lower_softmax(node, true);
  if (op == "MaxPool") return lower_pool(node, true, false);
  if (op == "AveragePool") return lower_pool(node, false, false);
  if (op == "GlobalMaxPool") return lower_pool(node, true, true);
  if (op == "GlobalAveragePool") return lower_pool(node, false, true);
  if (op == "BatchNormalization") return lower_batch_norm(node);
  if (op == "LayerNormalization") return lower_layer_norm(node);
  if (op == "InstanceNormalization") return lower_instance_norm(node);
  if (op == "Concat") return lower_concat(node);
  if (op == "Transpose") return lower_transpose(node);
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") return lower_reshape(node);
  if (op == "Slice") return lower_slice(node);
  if (op == "Resize") return lower_resize(node);
  if (op == "Pad") return lower_pad(node);
  if (op == "Gather") return lower_gather(node);
  if (op == "ReduceMean") return lower_reduce(node, Algorithm::ReduceMean);
  if (op == "ReduceSum") return lower_reduce(node, Algorithm::ReduceSum);
  if (op == "ReduceMax") return lower_reduce(node, Algorithm::ReduceMax);
  if (op == "ReduceMin") return lower_reduce(node, Algorithm::ReduceMin);
  return "oneDNN has no lowering of " + op + " in this build";
}

// ---- Convolution ---------------------------------------------------------------------

std::string Lowering::lower_conv(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), w = GraphView::input(node, 1), b = GraphView::input(node, 2);
  const int32_t y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.size() < 3 || xs.size() > 5) return "only 1-D, 2-D and 3-D convolutions are taken";
  if (!graph_.is_constant(w) || !graph_.is_float(w)) return "the weights are not a float32 constant";
  ConvGeometry geometry;
  if (std::string why = read_conv_geometry(node, xs, w, y, &geometry); !why.empty()) return why;
  const std::vector<int64_t> ws = graph_.shape(w);
  const int64_t out_channels = geometry.out_channels;
  std::vector<float> weights = graph_.floats(w);
  if (weights.empty()) return "the weights' data does not match their shape";
  std::vector<int32_t> inputs = {activation(x), add_constant(ws, std::move(weights), w)};
  if (b != -1) {
    if (!graph_.is_constant(b) || !graph_.is_float(b) || graph_.shape(b) != std::vector<int64_t>{out_channels}) {
      return "the bias is not a float32 constant of " + std::to_string(out_channels) + " elements";
    }
    inputs.push_back(add_constant({out_channels}, graph_.floats(b), b));
  }
  Op& op = add(OpKind::Convolution, node, std::move(inputs), {activation(y)});
  set_conv_geometry(geometry, &op);
  return "";
}

std::string Lowering::read_conv_geometry(const ir::Node& node, const std::vector<int64_t>& xs, int32_t w, int32_t y,
                                         ConvGeometry* geometry) const {
  const std::vector<int64_t> ws = graph_.shape(w);
  if (ws.size() != xs.size()) return "the weights' rank differs from the input's";
  const int64_t group = GraphView::int_attribute(node, "group", 1);
  const int64_t channels = xs[1], out_channels = ws[0];
  if (group < 1 || channels % group != 0 || out_channels % group != 0 || ws[1] != channels / group) {
    return "group, input channels and weights do not agree";
  }
  const std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (GraphView::ints_attribute(node, "kernel_shape", kernel) != kernel)
    return "kernel_shape does not match the weights";
  Window window;
  if (std::string why = resolve_window(node, xs, kernel, &window); !why.empty()) return why;
  std::vector<int64_t> expected = {xs[0], out_channels};
  for (int64_t d : window_output(xs, window, false)) expected.push_back(d);
  if (std::find(expected.begin(), expected.end(), -1) != expected.end() || graph_.shape(y) != expected) {
    return "the output shape is not " + shape_text(expected);
  }
  *geometry = ConvGeometry{group, out_channels, kernel, std::move(window)};
  return "";
}

void Lowering::set_conv_geometry(const ConvGeometry& geometry, Op* op) {
  op->strides = geometry.window.strides;
  op->dilations = minus_one(geometry.window.dilations);
  op->padding_begin = geometry.window.begin;
  op->padding_end = geometry.window.end;
  op->kernel = geometry.kernel;
  op->groups = geometry.group;
}

std::string Lowering::lower_conv_transpose(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), w = GraphView::input(node, 1), b = GraphView::input(node, 2);
  const int32_t y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.size() < 3 || xs.size() > 5) return "only 1-D, 2-D and 3-D transposed convolutions are taken";
  if (!graph_.is_constant(w) || !graph_.is_float(w)) return "the weights are not a float32 constant";
  const std::vector<int64_t> ws = graph_.shape(w);
  if (ws.size() != xs.size()) return "the weights' rank differs from the input's";
  const int64_t group = GraphView::int_attribute(node, "group", 1);
  // ONNX's weights are [C, M / group, k...]: input channels first.
  if (group < 1 || ws[0] != xs[1] || xs[1] % group != 0 || ws[1] < 1 || ws[1] > (int64_t{1} << 31) / group) {
    return "group, input channels and weights do not agree";
  }
  const int64_t out_channels = ws[1] * group;
  const std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (GraphView::ints_attribute(node, "kernel_shape", kernel) != kernel)
    return "kernel_shape does not match the weights";
  TransposedWindow window;
  if (std::string why = resolve_transposed_window(node, xs, kernel, &window); !why.empty()) return why;
  std::vector<int64_t> expected = {xs[0], out_channels};
  expected.insert(expected.end(), window.output.begin(), window.output.end());
  if (graph_.shape(y) != expected) return "the output shape is not " + shape_text(expected);
  std::vector<float> weights = graph_.floats(w);
  if (weights.empty()) return "the weights' data does not match their shape";
  std::vector<int32_t> inputs = {activation(x), add_constant(ws, std::move(weights), w)};
  if (b != -1) {
    if (!graph_.is_constant(b) || !graph_.is_float(b) || graph_.shape(b) != std::vector<int64_t>{out_channels}) {
      return "the bias is not a float32 constant of " + std::to_string(out_channels) + " elements";
    }
    inputs.push_back(add_constant({out_channels}, graph_.floats(b), b));
  }
  Op& op = add(OpKind::Deconvolution, node, std::move(inputs), {activation(y)});
  op.strides = window.strides;
  op.dilations = minus_one(window.dilations);
  op.padding_begin = window.begin;
  op.padding_end = window.end;
  op.kernel = kernel;
  op.groups = group;
  return "";
}

// ---- Matrix products --------------------------------------------------------------------

std::string Lowering::lower_gemm(const ir::Node& node) {
  const int32_t a = GraphView::input(node, 0), c = GraphView::input(node, 2);
  const int32_t y = GraphView::output(node, 0);
  if (std::string why = check_activation(a, "input A"); !why.empty()) return why;
  sdk::DenseGemm gemm;
  if (std::string why = sdk::resolve_dense_gemm(graph_, node, &gemm); !why.empty()) return why;
  const int64_t m = gemm.m, n = gemm.n, k = gemm.k;
  const float beta = gemm.beta;
  // Inner product weights are [N, K], as the dense Gemm has them.
  std::vector<float> weights = std::move(gemm.weights);
  std::vector<int32_t> inputs = {activation(a), add_constant({n, k}, std::move(weights), GraphView::input(node, 1))};
  std::vector<float> bias;
  std::vector<int64_t> full_bias_dims;
  if (c != -1 && beta != 0.0f) {
    if (!graph_.is_constant(c) || !graph_.is_float(c)) return "C is not a float32 constant";
    std::vector<int64_t> cs = graph_.shape(c);
    std::vector<float> cd = graph_.floats(c);
    if (cd.empty() || !broadcasts_to(cs, {m, n})) return "C does not broadcast to [M, N]";
    for (float& v : cd) v *= beta;
    while (cs.size() < 2) cs.insert(cs.begin(), 1);
    if (cs[0] == 1) {  // a row: the bias, expanded to N
      bias.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) bias[static_cast<size_t>(i)] = cd[static_cast<size_t>(cs[1] == 1 ? 0 : i)];
    } else {
      full_bias_dims = cs;
      bias = std::move(cd);
    }
  }
  if (!bias.empty() && full_bias_dims.empty()) inputs.push_back(add_constant({n}, std::move(bias), c));
  int32_t operand = -1;
  if (!full_bias_dims.empty()) operand = add_constant(full_bias_dims, std::move(bias), c);
  Op& op = add(OpKind::InnerProduct, node, std::move(inputs), {activation(y)});
  if (operand != -1) op.post_ops.push_back(PostOp{blob::PostOpKind::Binary, Algorithm::Add, 0, 0, operand});
  return "";
}

std::string Lowering::lower_matmul(const ir::Node& node) {
  const int32_t a = GraphView::input(node, 0), b = GraphView::input(node, 1), y = GraphView::output(node, 0);
  if (std::string why = check_activation(a, "input A"); !why.empty()) return why;
  const bool b_constant = graph_.is_constant(b);
  if (b_constant) {
    if (!graph_.is_float(b)) return "B is not float32";
  } else if (std::string why = check_activation(b, "input B"); !why.empty()) {
    return why;
  }
  const std::vector<int64_t> as = graph_.shape(a), bs = graph_.shape(b), ys = graph_.shape(y);
  if (as.size() < 2 || bs.size() < 2) return "1-D operands are not supported";
  const size_t rank = std::max(as.size(), bs.size());
  if (rank > 6) return "operands of rank above 6 are not supported";
  std::vector<int64_t> pa = as, pb = bs;
  pa.insert(pa.begin(), rank - as.size(), 1);
  pb.insert(pb.begin(), rank - bs.size(), 1);
  if (pa[rank - 1] != pb[rank - 2]) return "A and B do not agree on K";
  std::vector<int64_t> expected(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (pa[i] != pb[i] && pa[i] != 1 && pb[i] != 1) return "the batch dims do not broadcast";
    expected[i] = std::max(pa[i], pb[i]);
  }
  expected[rank - 2] = pa[rank - 2];
  expected[rank - 1] = pb[rank - 1];
  if (ys != expected) return "the output shape is not " + shape_text(expected);
  int32_t ta = with_rank(activation(a), rank, node);
  int32_t tb;
  if (b_constant) {
    std::vector<float> data = graph_.floats(b);
    if (data.empty()) return "B's data does not match its shape";
    tb = add_constant(pb, std::move(data), b);
  } else {
    tb = with_rank(activation(b), rank, node);
  }
  add(OpKind::MatMul, node, {ta, tb}, {activation(y)}).alpha = 1.0f;
  return "";
}

// ---- Element-wise ---------------------------------------------------------------------------

std::string Lowering::lower_binary(const ir::Node& node, Algorithm algorithm) {
  // Max and Min are variadic in ONNX: only their two-input form is one binary primitive.
  if (GraphView::num_inputs(node) != 2) return "only two inputs are taken";
  const int32_t a = GraphView::input(node, 0), b = GraphView::input(node, 1), y = GraphView::output(node, 0);
  if (!graph_.is_float(a) || !graph_.is_float(b)) return "the inputs are not float32";
  const std::vector<int64_t> ys = graph_.shape(y);
  const std::optional<float> sa = graph_.scalar(a), sb = graph_.scalar(b);
  if (graph_.is_constant(a) && graph_.is_constant(b)) return "both inputs are constants";
  // A scalar constant and a value of the output's shape: one element-wise op.
  if (sa || sb) {
    const int32_t x = sa ? b : a;
    const float c = sa ? *sa : *sb;
    if (std::string why = check_activation(x, "input"); !why.empty()) return why;
    if (dnnl_dims(graph_.shape(x)) != dnnl_dims(ys)) return "the non-constant input does not have the output's shape";
    Op& op = add(OpKind::Eltwise, node, {activation(x)}, {activation(y)});
    switch (algorithm) {
      case Algorithm::Add:
        op.algorithm = Algorithm::Linear;
        op.alpha = 1;
        op.beta = c;
        break;
      case Algorithm::Sub:
        op.algorithm = Algorithm::Linear;
        op.alpha = sa ? -1.0f : 1.0f;
        op.beta = sa ? c : -c;
        break;
      case Algorithm::Mul:
        op.algorithm = Algorithm::Linear;
        op.alpha = c;
        op.beta = 0;
        break;
      case Algorithm::Div:
        if (sa) {  // c / x
          op.algorithm = Algorithm::Pow;
          op.alpha = c;
          op.beta = -1.0f;
        } else {
          if (c == 0.0f) return "division by a constant zero";
          op.algorithm = Algorithm::Linear;
          op.alpha = 1.0f / c;
          op.beta = 0;
        }
        break;
      case Algorithm::Max:
        op.algorithm = Algorithm::Clip;
        op.alpha = c;
        op.beta = kFloatMax;
        break;
      case Algorithm::Min:
        op.algorithm = Algorithm::Clip;
        op.alpha = -kFloatMax;
        op.beta = c;
        break;
      default: return "unexpected algorithm";
    }
    return "";
  }
  for (int32_t v : {a, b}) {
    if (graph_.is_constant(v)) {
      if (graph_.floats(v).empty()) return "a constant's data does not match its shape";
    } else if (std::string why = check_activation(v, "input"); !why.empty()) {
      return why;
    }
  }
  const std::vector<int64_t> as = graph_.shape(a), bs = graph_.shape(b);
  if (!broadcasts_to(as, ys) || !broadcasts_to(bs, ys)) return "the inputs do not broadcast to the output's shape";
  const bool a_full = as == ys && !graph_.is_constant(a), b_full = bs == ys && !graph_.is_constant(b);
  const bool commutative = algorithm == Algorithm::Add || algorithm == Algorithm::Mul || algorithm == Algorithm::Max ||
                           algorithm == Algorithm::Min;
  auto operand = [&](int32_t v) {
    if (graph_.is_constant(v)) {
      std::vector<int64_t> dims = graph_.shape(v);
      dims.insert(dims.begin(), ys.size() - dims.size(), 1);
      return add_constant(dims, graph_.floats(v), v);
    }
    return with_rank(activation(v), ys.size(), node);
  };
  const int32_t out = activation(y);
  if (a_full || (b_full && commutative)) {
    const int32_t full = a_full ? a : b, other = a_full ? b : a;
    const int32_t t0 = activation(full), t1 = operand(other);
    add(OpKind::Binary, node, {t0, t1}, {out}).algorithm = algorithm;
    return "";
  }
  if (!b_full) return "neither input is a run-time value of the output's shape";
  const int32_t tb = activation(b), ta = operand(a);
  if (algorithm == Algorithm::Sub) {  // a - b = -(b - a)
    Op& op = add(OpKind::Binary, node, {tb, ta}, {out});
    op.algorithm = Algorithm::Sub;
    op.post_ops.push_back(PostOp{blob::PostOpKind::Eltwise, Algorithm::Linear, -1.0f, 0.0f, -1});
    return "";
  }
  if (algorithm == Algorithm::Div) {  // a / b = (1 / b) * a
    const int32_t inverse = add_internal(ys);
    Op& pow = add(OpKind::Eltwise, node, {tb}, {inverse});
    pow.algorithm = Algorithm::Pow;
    pow.alpha = 1.0f;
    pow.beta = -1.0f;
    add(OpKind::Binary, node, {inverse, ta}, {out}).algorithm = Algorithm::Mul;
    return "";
  }
  return "unexpected algorithm";
}

std::string Lowering::lower_unary(const ir::Node& node, const std::string& op) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  if (graph_.shape(x) != graph_.shape(y)) return "the output shape differs from the input's";
  const int32_t in = activation(x), out = activation(y);
  if (op == "Identity") {
    add(OpKind::Reshape, node, {in}, {out});
    return "";
  }
  if (op == "Erf") {
    add(OpKind::Erf, node, {in}, {out});
    return "";
  }
  if (op == "HardSigmoid") {  // clip(alpha * x + beta, 0, 1)
    const int32_t scaled = add_internal(graph_.shape(x));
    Op& linear = add(OpKind::Eltwise, node, {in}, {scaled});
    linear.algorithm = Algorithm::Linear;
    linear.alpha = GraphView::float_attribute(node, "alpha", 0.2f);
    linear.beta = GraphView::float_attribute(node, "beta", 0.5f);
    Op& clip = add(OpKind::Eltwise, node, {scaled}, {out});
    clip.algorithm = Algorithm::Clip;
    clip.alpha = 0.0f;
    clip.beta = 1.0f;
    return "";
  }
  Op& lowered = add(OpKind::Eltwise, node, {in}, {out});
  if (op == "Relu") {
    lowered.algorithm = Algorithm::Relu;
  } else if (op == "LeakyRelu") {
    lowered.algorithm = Algorithm::Relu;
    lowered.alpha = GraphView::float_attribute(node, "alpha", 0.01f);
  } else if (op == "Sigmoid") {
    lowered.algorithm = Algorithm::Logistic;
  } else if (op == "Tanh") {
    lowered.algorithm = Algorithm::Tanh;
  } else if (op == "Exp") {
    lowered.algorithm = Algorithm::Exp;
  } else if (op == "Log") {
    lowered.algorithm = Algorithm::Log;
  } else if (op == "Sqrt") {
    lowered.algorithm = Algorithm::Sqrt;
  } else if (op == "Abs") {
    lowered.algorithm = Algorithm::Abs;
  } else if (op == "Neg") {
    lowered.algorithm = Algorithm::Linear;
    lowered.alpha = -1.0f;
  } else if (op == "Reciprocal") {
    lowered.algorithm = Algorithm::Pow;
    lowered.alpha = 1.0f;
    lowered.beta = -1.0f;
  } else if (op == "Gelu") {
    const std::string approximate = GraphView::string_attribute(node, "approximate", "none");
    if (approximate != "none" && approximate != "tanh") return "approximate '" + approximate + "' is unknown";
    lowered.algorithm = approximate == "tanh" ? Algorithm::GeluTanh : Algorithm::GeluErf;
  } else if (op == "HardSwish") {
    lowered.algorithm = Algorithm::HardSwish;
  }
  return "";
}

std::string Lowering::lower_clip(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  if (graph_.shape(x) != graph_.shape(y)) return "the output shape differs from the input's";
  float lo = -kFloatMax, hi = kFloatMax;
  int32_t computed[2] = {-1, -1};  // bounds computed at run time: min, max
  if (graph_.opset() < 11) {
    lo = GraphView::float_attribute(node, "min", lo);
    hi = GraphView::float_attribute(node, "max", hi);
  } else {
    for (size_t i = 1; i <= 2; ++i) {
      const int32_t bound = GraphView::input(node, i);
      if (bound == -1) continue;
      const std::optional<float> value = graph_.scalar(bound);
      if (!value && graph_.is_constant(bound)) return "a constant min or max is not a float32 scalar";
      if (!value) {
        if (std::string why = check_activation(bound, "bound"); !why.empty()) return why;
        if (num_elements(graph_.shape(bound)) != 1) return "a min or max is not a scalar";
        computed[i - 1] = bound;
        continue;
      }
      (i == 1 ? lo : hi) = *value;
    }
  }
  if (std::isnan(lo) || std::isnan(hi)) return "a bound is NaN";
  if (computed[0] == -1 && computed[1] == -1) {
    Op& op = add(OpKind::Eltwise, node, {activation(x)}, {activation(y)});
    op.algorithm = Algorithm::Clip;
    op.alpha = lo;
    op.beta = hi;
    return "";
  }
  lower_clip_by_values(node, computed, lo, hi);
  return "";
}

// min(max(x, lo), hi) with a scalar bound computed at run time (a spectrogram clipped to
// its peak less 80 dB): the computed bound a binary Max or Min that broadcasts it, the
// constant one a clip.
void Lowering::lower_clip_by_values(const ir::Node& node, const int32_t computed[2], float lo, float hi) {
  const int32_t y = GraphView::output(node, 0);
  const std::vector<int64_t> ys = graph_.shape(y);
  int32_t value = activation(GraphView::input(node, 0));
  for (int bound = 0; bound < 2; ++bound) {
    if (bound == 0 && computed[0] == -1 && lo == -kFloatMax) continue;  // no min at all
    const bool last = bound == 1 || (computed[1] == -1 && hi == kFloatMax);
    const int32_t out = last ? activation(y) : add_internal(ys);
    if (computed[bound] != -1) {
      const int32_t operand = with_rank(activation(computed[bound]), dnnl_dims(ys).size(), node);
      add(OpKind::Binary, node, {value, operand}, {out}).algorithm = bound == 0 ? Algorithm::Max : Algorithm::Min;
    } else {
      Op& op = add(OpKind::Eltwise, node, {value}, {out});
      op.algorithm = Algorithm::Clip;
      op.alpha = bound == 0 ? lo : -kFloatMax;
      op.beta = bound == 0 ? kFloatMax : hi;
    }
    value = out;
    if (last) return;
  }
}

std::string Lowering::lower_pow(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), e = GraphView::input(node, 1), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "base"); !why.empty()) return why;
  const std::optional<float> exponent = graph_.scalar(e);
  if (!exponent) return "the exponent is not a float32 scalar constant";
  if (graph_.shape(x) != graph_.shape(y)) return "the output shape differs from the base's";
  Op& op = add(OpKind::Eltwise, node, {activation(x)}, {activation(y)});
  op.algorithm = Algorithm::Pow;
  op.alpha = 1.0f;
  op.beta = *exponent;
  return "";
}

// ---- Softmax, pooling, normalization -------------------------------------------------------

std::string Lowering::lower_softmax(const ir::Node& node, bool log) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.empty() || graph_.shape(y) != xs) return "the output shape differs from the input's";
  const bool coerced = graph_.opset() < 13;  // older opsets flatten to 2-D at axis
  const std::optional<size_t> normalized_axis =
      normalize_axis(GraphView::int_attribute(node, "axis", coerced ? 1 : -1), xs.size());
  if (!normalized_axis) return "axis is out of range";
  const int64_t axis = static_cast<int64_t>(*normalized_axis);
  const OpKind kind = log ? OpKind::LogSoftmax : OpKind::Softmax;
  if (!coerced || axis == static_cast<int64_t>(xs.size()) - 1) {
    add(kind, node, {activation(x)}, {activation(y)}).axis = static_cast<int32_t>(axis);
    return "";
  }
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < xs.size(); ++i) (static_cast<int64_t>(i) < axis ? outer : inner) *= xs[i];
  const int32_t flat_in = add_internal({outer, inner}), flat_out = add_internal({outer, inner});
  add(OpKind::Reshape, node, {activation(x)}, {flat_in});
  add(kind, node, {flat_in}, {flat_out}).axis = 1;
  add(OpKind::Reshape, node, {flat_out}, {activation(y)});
  return "";
}

std::string Lowering::lower_pool(const ir::Node& node, bool is_max, bool global) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.size() < 3 || xs.size() > 5) return "only 1-D, 2-D and 3-D pooling is taken";
  Window window;
  bool ceil = false;
  if (global) {
    window.kernel.assign(xs.begin() + 2, xs.end());
    window.strides.assign(xs.size() - 2, 1);
    window.dilations.assign(xs.size() - 2, 1);
    window.begin.assign(xs.size() - 2, 0);
    window.end.assign(xs.size() - 2, 0);
  } else {
    const std::vector<int64_t> kernel = GraphView::ints_attribute(node, "kernel_shape");
    if (is_max && GraphView::int_attribute(node, "storage_order", 0) != 0) return "storage_order 1 is not supported";
    if (std::string why = resolve_window(node, xs, kernel, &window); !why.empty()) return why;
    if (!is_max && std::any_of(window.dilations.begin(), window.dilations.end(), [](int64_t d) { return d != 1; })) {
      return "dilations are not supported here";
    }
    ceil = GraphView::int_attribute(node, "ceil_mode", 0) != 0;
  }
  const bool include_pad = !is_max && GraphView::int_attribute(node, "count_include_pad", 0) != 0;
  std::vector<int64_t> out_spatial = window_output(xs, window, ceil);
  std::vector<int64_t> expected = {xs[0], xs[1]};
  expected.insert(expected.end(), out_spatial.begin(), out_spatial.end());
  if (std::find(out_spatial.begin(), out_spatial.end(), -1) != out_spatial.end() || graph_.shape(y) != expected) {
    return "the output shape is not " + shape_text(expected);
  }
  // Ceil rounding: grow the end padding until floor rounding gives the same size. The
  // extra elements are never counted (max ignores them, exclude-pad averages skip them).
  std::vector<int64_t> end = window.end;
  for (size_t i = 0; i < out_spatial.size(); ++i) {
    const int64_t extent = (window.kernel[i] - 1) * window.dilations[i] + 1;
    const int64_t needed = (out_spatial[i] - 1) * window.strides[i] + extent - xs[2 + i] - window.begin[i];
    if (needed > end[i]) {
      if (include_pad) return "ceil_mode with count_include_pad is not supported";
      end[i] = needed;
    }
  }
  Op& op = add(OpKind::Pooling, node, {activation(x)}, {activation(y)});
  op.algorithm = is_max        ? Algorithm::MaxPool
                 : include_pad ? Algorithm::AvgPoolIncludePad
                               : Algorithm::AvgPoolExcludePad;
  op.kernel = window.kernel;
  op.strides = window.strides;
  op.dilations = minus_one(window.dilations);
  op.padding_begin = window.begin;
  op.padding_end = end;
  return "";
}

std::string Lowering::lower_batch_norm(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  if (GraphView::int_attribute(node, "training_mode", 0) != 0) return "training mode is not supported";
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.size() < 2 || xs.size() > 5) return "only inputs of rank 2 to 5 are taken";
  if (graph_.shape(y) != xs) return "the output shape differs from the input's";
  const int64_t channels = xs[1];
  std::vector<int32_t> inputs = {activation(x)};
  for (size_t i = 1; i <= 4; ++i) {
    const int32_t p = GraphView::input(node, i);
    if (!graph_.is_constant(p) || !graph_.is_float(p) || graph_.shape(p) != std::vector<int64_t>{channels}) {
      return "scale, bias, mean and variance must be float32 constants of C elements";
    }
    inputs.push_back(add_constant({channels}, graph_.floats(p), p));
  }
  add(OpKind::BatchNorm, node, std::move(inputs), {activation(y)}).epsilon =
      GraphView::float_attribute(node, "epsilon", 1e-5f);
  return "";
}

std::string Lowering::lower_layer_norm(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), scale = GraphView::input(node, 1), bias = GraphView::input(node, 2);
  const int32_t y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.empty() || graph_.shape(y) != xs) return "the output shape differs from the input's";
  if (GraphView::int_attribute(node, "stash_type", 1) != 1) return "stash_type is not float32";
  const std::optional<size_t> normalized_axis = normalize_axis(GraphView::int_attribute(node, "axis", -1), xs.size());
  if (!normalized_axis) return "axis is out of range";
  const int64_t axis = static_cast<int64_t>(*normalized_axis);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < xs.size(); ++i) (static_cast<int64_t>(i) < axis ? outer : inner) *= xs[i];
  const std::vector<int64_t> normalized(xs.begin() + axis, xs.end());
  std::vector<int32_t> inputs;
  for (int32_t p : {scale, bias}) {
    if (p == -1) {
      inputs.push_back(-1);
      continue;
    }
    if (!graph_.is_constant(p) || !graph_.is_float(p)) return "scale and bias must be float32 constants";
    std::vector<float> data = graph_.floats(p);
    std::vector<int64_t> ps = graph_.shape(p);
    if (data.empty() || !broadcasts_to(ps, normalized)) return "scale or bias does not match the normalized dims";
    if (static_cast<int64_t>(data.size()) != inner) {  // broadcast it out
      std::vector<float> full(static_cast<size_t>(inner));
      std::vector<int64_t> padded = ps;
      padded.insert(padded.begin(), normalized.size() - ps.size(), 1);
      for (int64_t i = 0; i < inner; ++i) {
        int64_t rest = i, source = 0, stride = 1;
        for (size_t d = normalized.size(); d-- > 0;) {
          const int64_t coordinate = rest % normalized[d];
          rest /= normalized[d];
          if (padded[d] != 1) source += coordinate * stride;
          stride *= padded[d];
        }
        full[static_cast<size_t>(i)] = data[static_cast<size_t>(source)];
      }
      data = std::move(full);
    }
    inputs.push_back(add_constant({inner}, std::move(data), p));
  }
  if (inputs[0] == -1) return "scale is missing";
  const float epsilon = GraphView::float_attribute(node, "epsilon", 1e-5f);
  if (axis == static_cast<int64_t>(xs.size()) - 1) {
    inputs.insert(inputs.begin(), activation(x));
    add(OpKind::LayerNorm, node, std::move(inputs), {activation(y)}).epsilon = epsilon;
    return "";
  }
  const int32_t flat_in = add_internal({outer, inner}), flat_out = add_internal({outer, inner});
  add(OpKind::Reshape, node, {activation(x)}, {flat_in});
  inputs.insert(inputs.begin(), flat_in);
  add(OpKind::LayerNorm, node, std::move(inputs), {flat_out}).epsilon = epsilon;
  add(OpKind::Reshape, node, {flat_out}, {activation(y)});
  return "";
}

// ---- Data movement --------------------------------------------------------------------------

// InstanceNormalization normalises each (n, c) plane over its spatial elements; oneDNN
// 2.x has no primitive for it. A layer normalization over [N * C, spatial] computes the
// same, then one binary step applies the per-channel scale with the bias as its post-op
// (left out when they are 1 and 0, as in GroupNorm's export).
std::string Lowering::lower_instance_norm(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), scale = GraphView::input(node, 1), bias = GraphView::input(node, 2);
  const int32_t y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.size() < 3 || graph_.shape(y) != xs) return "the input must have rank 3 or more, and the output its shape";
  const int64_t channels = xs[1];
  std::vector<float> parameters[2];
  for (int i = 0; i < 2; ++i) {
    const int32_t p = i == 0 ? scale : bias;
    if (p == -1 || !graph_.is_constant(p) || !graph_.is_float(p)) return "scale and B must be float32 constants";
    parameters[i] = graph_.floats(p);
    if (static_cast<int64_t>(parameters[i].size()) != channels) return "scale and B must have one element per channel";
  }
  const int64_t rows = xs[0] * channels, plane = num_elements(xs) / std::max<int64_t>(rows, 1);
  const int32_t flat_in = add_internal({rows, plane}), flat_out = add_internal({rows, plane});
  add(OpKind::Reshape, node, {activation(x)}, {flat_in});
  add(OpKind::LayerNorm, node, {flat_in, -1, -1}, {flat_out}).epsilon =
      GraphView::float_attribute(node, "epsilon", 1e-5f);
  const bool identity = std::all_of(parameters[0].begin(), parameters[0].end(), [](float s) { return s == 1.0f; }) &&
                        std::all_of(parameters[1].begin(), parameters[1].end(), [](float b) { return b == 0.0f; });
  if (identity) {
    add(OpKind::Reshape, node, {flat_out}, {activation(y)});
    return "";
  }
  const int32_t normalized = add_internal(xs);
  add(OpKind::Reshape, node, {flat_out}, {normalized});
  std::vector<int64_t> per_channel(xs.size(), 1);
  per_channel[1] = channels;
  Op& affine =
      add(OpKind::Binary, node, {normalized, add_constant(per_channel, std::move(parameters[0]))}, {activation(y)});
  affine.algorithm = Algorithm::Mul;
  affine.post_ops.push_back(
      PostOp{blob::PostOpKind::Binary, Algorithm::Add, 0, 0, add_constant(per_channel, std::move(parameters[1]))});
  return "";
}

std::string Lowering::lower_concat(const ir::Node& node) {
  const int32_t y = GraphView::output(node, 0);
  const std::vector<int64_t> ys = graph_.shape(y);
  if (ys.empty()) return "scalars cannot be concatenated";
  const std::optional<size_t> normalized_axis = normalize_axis(GraphView::int_attribute(node, "axis", 0), ys.size());
  if (!normalized_axis) return "axis is out of range";
  const int64_t axis = static_cast<int64_t>(*normalized_axis);
  std::vector<int32_t> inputs;
  int64_t total = 0;
  for (size_t i = 0; i < GraphView::num_inputs(node); ++i) {
    const int32_t v = GraphView::input(node, i);
    if (!graph_.is_float(v)) return "an input is not float32";
    std::vector<int64_t> vs = graph_.shape(v);
    if (vs.size() != ys.size()) return "an input's rank differs from the output's";
    for (size_t d = 0; d < vs.size(); ++d) {
      if (static_cast<int64_t>(d) != axis && vs[d] != ys[d]) return "an input's shape does not fit the output";
    }
    if (vs[static_cast<size_t>(axis)] == 0) continue;
    total += vs[static_cast<size_t>(axis)];
    if (graph_.is_constant(v)) {
      std::vector<float> data = graph_.floats(v);
      if (data.empty()) return "a constant's data does not match its shape";
      inputs.push_back(add_constant(vs, std::move(data), v));
    } else {
      if (std::string why = check_activation(v, "input"); !why.empty()) return why;
      inputs.push_back(activation(v));
    }
  }
  if (inputs.empty() || total != ys[static_cast<size_t>(axis)]) return "the inputs do not add up to the output";
  add(OpKind::Concat, node, std::move(inputs), {activation(y)}).axis = static_cast<int32_t>(axis);
  return "";
}

std::string Lowering::lower_transpose(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  std::vector<int64_t> reversed;
  for (size_t i = xs.size(); i-- > 0;) reversed.push_back(static_cast<int64_t>(i));
  const std::vector<int64_t> perm = GraphView::ints_attribute(node, "perm", reversed);
  if (perm.size() != xs.size()) return "perm does not have one entry per dim";
  std::vector<bool> seen(xs.size(), false);
  std::vector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(xs.size()) || seen[static_cast<size_t>(p)])
      return "perm is not a permutation";
    seen[static_cast<size_t>(p)] = true;
    expected.push_back(xs[static_cast<size_t>(p)]);
  }
  if (graph_.shape(y) != expected) return "the output shape is not " + shape_text(expected);
  Op& op = add(OpKind::Reorder, node, {activation(x)}, {activation(y)});
  op.alpha = 1.0f;
  op.perm = perm;
  return "";
}

std::string Lowering::lower_reshape(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  for (size_t i = 1; i < GraphView::num_inputs(node); ++i) {
    const int32_t extra = GraphView::input(node, i);
    if (extra != -1 && !graph_.is_constant(extra)) return "the shape or axes input is not a constant";
  }
  if (num_elements(graph_.shape(x)) != num_elements(graph_.shape(y))) return "the element counts differ";
  add(OpKind::Reshape, node, {activation(x)}, {activation(y)});
  return "";
}

std::string Lowering::lower_slice(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x), ys = graph_.shape(y);
  if (xs.empty() || ys.size() != xs.size()) return "the output's rank differs from the input's";
  std::vector<int64_t> starts, ends, axes, steps;
  if (graph_.opset() < 10) {
    starts = GraphView::ints_attribute(node, "starts");
    ends = GraphView::ints_attribute(node, "ends");
    axes = GraphView::ints_attribute(node, "axes");
  } else {
    std::optional<std::vector<int64_t>> read[4];
    for (size_t i = 1; i <= 4; ++i) {
      const int32_t v = GraphView::input(node, i);
      if (v == -1) continue;
      if (!graph_.is_constant(v)) return "starts, ends, axes and steps must be constants";
      read[i - 1] = graph_.ints(v);
      if (!read[i - 1]) return "starts, ends, axes or steps is not an integer constant";
    }
    if (!read[0] || !read[1]) return "starts or ends is missing";
    starts = *read[0];
    ends = *read[1];
    if (read[2]) axes = *read[2];
    if (read[3]) steps = *read[3];
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (starts.size() != ends.size() || axes.size() != starts.size() ||
      (!steps.empty() && steps.size() != starts.size())) {
    return "starts, ends, axes and steps differ in length";
  }
  std::vector<int64_t> offsets(xs.size(), 0), strides(xs.size(), 1), expected = xs;
  std::vector<bool> seen(xs.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const std::optional<size_t> normalized_axis = normalize_axis(axes[i], xs.size());
    if (!normalized_axis || seen[*normalized_axis]) return "an axis is out of range or repeated";
    const int64_t axis = static_cast<int64_t>(*normalized_axis);
    seen[static_cast<size_t>(axis)] = true;
    const int64_t step = steps.empty() ? 1 : steps[i];
    if (step == 0) return "a step is 0";
    const int64_t dim = xs[static_cast<size_t>(axis)];
    if (step < -dim) return "a negative step is longer than its axis";
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    // ONNX's clamps: [0, dim] going forwards, [0, dim - 1] and [-1, dim - 1] backwards.
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
    end = step > 0 ? std::clamp<int64_t>(end, 0, dim) : std::clamp<int64_t>(end, -1, dim - 1);
    offsets[static_cast<size_t>(axis)] = start;
    strides[static_cast<size_t>(axis)] = step;
    expected[static_cast<size_t>(axis)] = step > 0 ? std::max<int64_t>(0, (end - start + step - 1) / step)
                                                   : std::max<int64_t>(0, (start - end - step - 1) / -step);
  }
  if (ys != expected) return "the output shape is not " + shape_text(expected);
  Op& op = add(OpKind::Reorder, node, {activation(x)}, {activation(y)});
  op.alpha = 1.0f;
  op.starts = offsets;
  if (std::any_of(strides.begin(), strides.end(), [](int64_t step) { return step != 1; })) op.steps = strides;
  return "";
}

// ---- Resize ---------------------------------------------------------------------------

namespace {

/// The input index ONNX's nearest Resize reads for output index `x` along an axis of
/// `in` elements, computed as the portable backend does (core/portable/kernels/resize.cc).
int64_t onnx_nearest(const std::string& transform, const std::string& rounding, float scale, int64_t x, int64_t in,
                     int64_t out) {
  const float xf = static_cast<float>(x);
  float position = 0.0f;
  if (transform == "half_pixel" || (transform == "pytorch_half_pixel" && out > 1)) {
    position = (xf + 0.5f) / scale - 0.5f;
  } else if (transform == "align_corners") {
    const float resized = static_cast<float>(in) * scale;
    position = resized <= 1.0f ? 0.0f : xf * static_cast<float>(in - 1) / (resized - 1.0f);
  } else if (transform == "asymmetric") {
    position = xf / scale;
  } else if (transform == "tf_half_pixel_for_nn") {
    position = (xf + 0.5f) / scale;
  }
  if (!(position >= 0.0f)) position = 0.0f;
  position = std::min(position, static_cast<float>(in));
  const float below = std::floor(position);
  const bool half = position - below == 0.5f;
  float index = below;
  if (rounding == "round_prefer_floor") index = half ? below : std::round(position);
  if (rounding == "round_prefer_ceil") index = half ? std::ceil(position) : std::round(position);
  if (rounding == "ceil") index = std::ceil(position);
  return std::clamp<int64_t>(static_cast<int64_t>(index), 0, in - 1);
}

/// The input index oneDNN's nearest resampling reads: round((y + 0.5) * in / out - 0.5)
/// in float, halves away from zero (resampling_utils::nearest_idx in oneDNN 2.x).
int64_t onednn_nearest(int64_t y, int64_t in, int64_t out) {
  return static_cast<int64_t>(
      std::roundf((static_cast<float>(y) + 0.5f) * static_cast<float>(in) / static_cast<float>(out) - 0.5f));
}

/// "" when ONNX's nearest Resize of `xs` to `ys` by `scales` (one per dim) reads the
/// same element as oneDNN's nearest resampling for every output index, else why not.
/// Whether they agree depends on the modes and the sizes: for an integer upscale,
/// asymmetric or tf_half_pixel_for_nn coordinates with `floor`, and half-pixel ones with
/// either `round_prefer` mode, do; asymmetric with rounding does not.
std::string nearest_mismatch(const std::string& transform, const std::string& rounding,
                             const std::vector<float>& scales, const std::vector<int64_t>& xs,
                             const std::vector<int64_t>& ys) {
  for (size_t d = 0; d < xs.size(); ++d) {
    for (int64_t y = 0; y < ys[d]; ++y) {
      const int64_t expected = d < 2 ? y : onednn_nearest(y, xs[d], ys[d]);
      if (onnx_nearest(transform, rounding, scales[d], y, xs[d], ys[d]) != expected) {
        return "coordinate_transformation_mode '" + transform + "' with nearest_mode '" + rounding + "' from " +
               shape_text(xs) + " to " + shape_text(ys) + " picks other elements than oneDNN's nearest";
      }
    }
  }
  return "";
}

}  // namespace

// Resize of the spatial dims: linear with half-pixel centres, what
// F.interpolate(mode="bilinear", align_corners=False) exports, which oneDNN's linear
// resampling computes exactly; nearest where oneDNN's rounding reads the same elements.
std::string Lowering::lower_resize(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x), ys = graph_.shape(y);
  if (xs.size() < 3 || xs.size() > 5 || ys.size() != xs.size()) return "only 1-D to 3-D spatial resizes are taken";
  if (ys[0] != xs[0] || ys[1] != xs[1]) return "the batch and channel dims must keep their size";
  if (GraphView::int_attribute(node, "antialias", 0) != 0) return "antialiasing is not taken";
  if (!GraphView::ints_attribute(node, "axes", {}).empty() || GraphView::attribute(node, "keep_aspect_ratio_policy")) {
    return "axes and keep_aspect_ratio_policy are not taken";
  }
  // The roi (input 1) matters only for tf_crop_and_resize; sizes or scales only fix the
  // output's shape, which the graph states. Computed ones would be inputs left unread.
  for (size_t i = 1; i < GraphView::num_inputs(node); ++i) {
    const int32_t v = GraphView::input(node, i);
    if (v != -1 && !graph_.is_constant(v)) return "roi, scales and sizes must be constants";
  }
  const std::string mode = GraphView::string_attribute(node, "mode", "nearest");
  if (mode == "nearest") return lower_resize_nearest(node);
  if (graph_.opset() < 11) return "Resize before opset 11 has no coordinate_transformation_mode";
  if (mode != "linear") return "only modes 'linear' and 'nearest' are taken";
  const std::string transform = GraphView::string_attribute(node, "coordinate_transformation_mode", "half_pixel");
  // pytorch_half_pixel differs from half_pixel only where an output axis has size 1.
  const bool half_pixel = transform == "half_pixel" ||
                          (transform == "pytorch_half_pixel" && std::find(ys.begin() + 2, ys.end(), 1) == ys.end());
  if (!half_pixel) return "only half-pixel coordinates are taken";
  // ONNX maps coordinates by the scale given, oneDNN by the ratio of sizes: they agree
  // only when each scale is that ratio exactly (0.6 on 4 gives 2, mapped by 0.6, not 0.5).
  if (const int32_t scales = GraphView::input(node, 2); scales != -1 && num_elements(graph_.shape(scales)) > 0) {
    const std::vector<float> factors = graph_.is_float(scales) ? graph_.floats(scales) : std::vector<float>();
    if (factors.size() != xs.size()) return "scales must be float32, one per dim";
    for (size_t d = 0; d < xs.size(); ++d) {
      if (static_cast<double>(factors[d]) * static_cast<double>(xs[d]) != static_cast<double>(ys[d])) {
        return "a scale that is not the ratio of output to input size is not taken";
      }
    }
  }
  Op& op = add(OpKind::Resampling, node, {activation(x)}, {activation(y)});
  op.algorithm = Algorithm::None;
  return "";
}

// Nearest Resize: taken where every output element reads the input element oneDNN's
// nearest resampling reads (checked index by index, as the sizes are static).
std::string Lowering::lower_resize_nearest(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  const std::vector<int64_t> xs = graph_.shape(x), ys = graph_.shape(y);
  // Resize 10 maps coordinates asymmetrically and rounds down; its scales are input 1.
  const bool legacy = graph_.opset() < 11;
  const std::string transform =
      legacy ? "asymmetric" : GraphView::string_attribute(node, "coordinate_transformation_mode", "half_pixel");
  const std::string rounding =
      legacy ? "floor" : GraphView::string_attribute(node, "nearest_mode", "round_prefer_floor");
  if (transform != "half_pixel" && transform != "pytorch_half_pixel" && transform != "align_corners" &&
      transform != "asymmetric" && transform != "tf_half_pixel_for_nn") {
    return "coordinate_transformation_mode '" + transform + "' is not taken with mode 'nearest'";
  }
  if (rounding != "round_prefer_floor" && rounding != "round_prefer_ceil" && rounding != "floor" &&
      rounding != "ceil") {
    return "nearest_mode '" + rounding + "' is unknown";
  }
  const int32_t scales_value = GraphView::input(node, legacy ? 1 : 2);
  const int32_t sizes_value = legacy ? -1 : GraphView::input(node, 3);
  const bool has_scales = scales_value != -1 && num_elements(graph_.shape(scales_value)) > 0;
  const bool has_sizes = sizes_value != -1 && num_elements(graph_.shape(sizes_value)) > 0;
  if (has_scales == has_sizes) return "exactly one of scales and sizes must be given";
  std::vector<float> scales;
  std::vector<int64_t> expected;
  if (has_sizes) {
    const std::optional<std::vector<int64_t>> sizes = graph_.ints(sizes_value);
    if (!sizes || sizes->size() != xs.size()) return "sizes must be int64, one per dim";
    for (size_t d = 0; d < xs.size(); ++d) {
      scales.push_back(static_cast<float>((*sizes)[d]) / static_cast<float>(xs[d]));
    }
    expected = *sizes;
  } else {
    if (graph_.is_float(scales_value)) scales = graph_.floats(scales_value);
    if (scales.size() != xs.size()) return "scales must be float32, one per dim";
    for (size_t d = 0; d < xs.size(); ++d) {
      const float size = static_cast<float>(xs[d]) * scales[d];
      if (!(scales[d] > 0.0f) || !(size < 1e15f)) return "scales must be positive and finite";
      expected.push_back(static_cast<int64_t>(std::floor(size)));
    }
  }
  if (expected != ys) return "the output shape is not " + shape_text(expected);
  if (std::string why = nearest_mismatch(transform, rounding, scales, xs, ys); !why.empty()) return why;
  Op& op = add(OpKind::Resampling, node, {activation(x)}, {activation(y)});
  op.algorithm = Algorithm::Nearest;
  return "";
}

// Pad in constant mode by non-negative amounts (the graph passes fold what they can into
// the next Conv or pool; this takes the rest, e.g. an asymmetric pad before a strided
// convolution in TensorFlow-style models).
namespace {

/// Why pads of reflect (`reflect`) or edge mode are not taken, or "".
std::string check_mirrored_pads(const std::vector<int64_t>& xs, const std::vector<int64_t>& pads, bool reflect) {
  for (size_t d = 0; d < xs.size(); ++d) {
    const int64_t before = pads[d], after = pads[d + xs.size()];
    if (before + after == 0) continue;
    // ONNX Runtime refuses these too: a reflection longer than the axis would repeat.
    if (reflect && (before >= xs[d] || after >= xs[d])) return "reflect pads must be shorter than their axis";
    if (xs[d] == 0) return "an empty axis cannot be padded from its edge";
  }
  return "";
}

}  // namespace

std::string Lowering::lower_pad(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x), ys = graph_.shape(y);
  const std::string mode = GraphView::string_attribute(node, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") return "mode '" + mode + "' is not taken";
  std::vector<int64_t> pads;
  float value = 0.0f;
  if (graph_.opset() < 11) {
    pads = GraphView::ints_attribute(node, "pads", {});
    value = GraphView::float_attribute(node, "value", 0.0f);
  } else {
    const int32_t p = GraphView::input(node, 1), v = GraphView::input(node, 2), axes = GraphView::input(node, 3);
    if (axes != -1) return "the axes input is not taken";
    const std::optional<std::vector<int64_t>> read = graph_.is_constant(p) ? graph_.ints(p) : std::nullopt;
    if (!read) return "pads must be an integer constant";
    pads = *read;
    if (v != -1) {
      const std::optional<float> scalar = graph_.scalar(v);
      if (!scalar) return "constant_value must be a float32 constant scalar";
      value = *scalar;
    }
  }
  if (pads.size() != 2 * xs.size()) return "pads must have two entries per axis";
  std::vector<int64_t> expected = xs;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (pads[d] < 0 || pads[d + xs.size()] < 0) return "negative pads (cropping) are not taken";
    expected[d] += pads[d] + pads[d + xs.size()];
  }
  if (ys != expected) return "the output shape is not " + shape_text(expected);
  if (mode != "constant") {
    if (std::string why = check_mirrored_pads(xs, pads, mode == "reflect"); !why.empty()) return why;
  }
  Op& op = add(OpKind::Pad, node, {activation(x)}, {activation(y)});
  op.starts.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(xs.size()));
  op.alpha = value;
  if (mode != "constant") op.algorithm = mode == "reflect" ? Algorithm::PadReflect : Algorithm::PadEdge;
  return "";
}

// An embedding: rows of a constant table picked by token ids the partition receives.
std::string Lowering::lower_gather(const ir::Node& node) {
  const int32_t data = GraphView::input(node, 0), indices = GraphView::input(node, 1), y = GraphView::output(node, 0);
  if (!graph_.is_constant(data) || !graph_.is_float(data)) return "the data is not a float32 constant";
  if (!graph_.valid(indices) || graph_.is_constant(indices) || graph_.value(indices).dtype() != ir::DType::Int64) {
    return "the indices are not int64 computed at run time";
  }
  const std::vector<int64_t> table = graph_.shape(data), ids = graph_.shape(indices), ys = graph_.shape(y);
  if (table.empty()) return "the data is a scalar";
  int64_t axis = GraphView::int_attribute(node, "axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(table.size());
  if (axis != 0) return "only axis 0 (the rows of a table) is taken";
  std::vector<int64_t> expected = ids;
  expected.insert(expected.end(), table.begin() + 1, table.end());
  if (ys != dnnl_dims(expected)) return "the output shape is not " + shape_text(expected);
  if (ids.size() > kMaxRank || num_elements(ids) > (int64_t{1} << 31)) return "too many indices";
  std::vector<float> rows = graph_.floats(data);
  if (rows.empty()) return "the data is empty";
  add(OpKind::Gather, node, {add_constant(table, std::move(rows), data), activation(indices)}, {activation(y)});
  return "";
}

// ---- Recurrent ops ----------------------------------------------------------------------

namespace {

/// ONNX's gate blocks in the order oneDNN lays them out: LSTM i, f, c, o from ONNX's
/// i, o, f, c; GRU's z (u), r, h (o) are in the same order in both.
constexpr int kLstmGates[] = {0, 2, 3, 1};
constexpr int kGruGates[] = {0, 1, 2};

/// ONNX's [D, gates x H, K] weights as oneDNN's ldigo [1, D, K, gates, H].
std::vector<float> to_ldigo(const std::vector<float>& onnx, int64_t directions, int64_t gates, int64_t hidden,
                            int64_t k, const int* order) {
  std::vector<float> out(static_cast<size_t>(directions * k * gates * hidden));
  for (int64_t d = 0; d < directions; ++d) {
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t g = 0; g < gates; ++g) {
        for (int64_t h = 0; h < hidden; ++h) {
          const int64_t from = ((d * gates + order[g]) * hidden + h) * k + i;
          out[static_cast<size_t>(((d * k + i) * gates + g) * hidden + h)] = onnx[static_cast<size_t>(from)];
        }
      }
    }
  }
  return out;
}

}  // namespace

// LSTM and GRU (layout 0, default activations, no clip, peepholes or sequence lengths) as
// oneDNN's RNN primitives: weights in ldigo with oneDNN's gate order, the two ONNX biases
// summed (the linear-before-reset GRU keeps the recurrent one of its third gate apart),
// Y transposed from oneDNN's [T, N, D x H] to ONNX's [T, D, N, H].
std::string Lowering::lower_recurrent(const ir::Node& node, bool lstm) {
  const int32_t x = GraphView::input(node, 0), w = GraphView::input(node, 1), r = GraphView::input(node, 2);
  const int32_t b = GraphView::input(node, 3), lengths = GraphView::input(node, 4), h0 = GraphView::input(node, 5);
  const int32_t c0 = lstm ? GraphView::input(node, 6) : -1, peepholes = lstm ? GraphView::input(node, 7) : -1;
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.size() != 3 || GraphView::int_attribute(node, "layout", 0) != 0)
    return "only layout 0 ([seq, batch, input]) is taken";
  if (lengths != -1 || peepholes != -1) return "sequence_lens and peepholes are not taken";
  if (GraphView::attribute(node, "clip") != nullptr) return "clip is not taken";
  if (lstm && GraphView::int_attribute(node, "input_forget", 0) != 0) return "input_forget is not taken";
  const std::string defaults = lstm ? "Sigmoid,Tanh,Tanh" : "Sigmoid,Tanh";
  const std::string direction = GraphView::string_attribute(node, "direction", "forward");
  const int64_t directions = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") return "unknown direction";
  const std::string activations = GraphView::string_attribute(node, "activations", "");
  if (!activations.empty() && activations != defaults && activations != defaults + "," + defaults) {
    return "only the default activations (" + defaults + ") are taken";
  }
  const int64_t hidden = GraphView::int_attribute(node, "hidden_size", 0), gates = lstm ? 4 : 3;
  const int64_t steps = xs[0], batch = xs[1], features = xs[2];
  const bool lbr = !lstm && GraphView::int_attribute(node, "linear_before_reset", 0) != 0;
  for (int32_t p : {w, r, b}) {
    if (p != -1 && (!graph_.is_constant(p) || !graph_.is_float(p))) return "W, R and B must be float32 constants";
  }
  if (hidden <= 0 || graph_.shape(w) != std::vector<int64_t>{directions, gates * hidden, features} ||
      graph_.shape(r) != std::vector<int64_t>{directions, gates * hidden, hidden} ||
      (b != -1 && graph_.shape(b) != std::vector<int64_t>{directions, 2 * gates * hidden})) {
    return "W, R or B does not match hidden_size and the input";
  }
  const std::vector<int64_t> state = {directions, batch, hidden};
  for (int32_t s : {h0, c0}) {
    if (s == -1) continue;
    if (graph_.shape(s) != state) return "an initial state is not [directions, batch, hidden]";
    if (!graph_.is_constant(s) && !check_activation(s, "initial state").empty())
      return "an initial state is not float32";
    if (graph_.is_constant(s) && !graph_.is_float(s)) return "an initial state is not float32";
  }
  // Output slots, present or not (GraphView::num_outputs counts the present ones).
  const size_t slots = node.outputs() != nullptr ? node.outputs()->size() : 0;
  std::vector<int32_t> outputs(3, -1);
  for (size_t o = 0; o < slots && o < 3; ++o) {
    outputs[o] = GraphView::output(node, o);
    if (outputs[o] == -1) continue;
    if (std::string why = check_activation(outputs[o], "output"); !why.empty()) return why;
  }
  if (slots > (lstm ? 3u : 2u)) return "too many outputs";

  const int* order = lstm ? kLstmGates : kGruGates;
  const int32_t layer_weights = add_constant({1, directions, features, gates, hidden},
                                             to_ldigo(graph_.floats(w), directions, gates, hidden, features, order));
  const int32_t iter_weights = add_constant({1, directions, hidden, gates, hidden},
                                            to_ldigo(graph_.floats(r), directions, gates, hidden, hidden, order));
  const std::vector<float> onnx_bias =
      b != -1 ? graph_.floats(b) : std::vector<float>(static_cast<size_t>(directions * 2 * gates * hidden), 0.0f);
  const int64_t bias_gates = lbr ? 4 : gates;
  std::vector<float> bias(static_cast<size_t>(directions * bias_gates * hidden));
  for (int64_t d = 0; d < directions; ++d) {
    for (int64_t g = 0; g < bias_gates; ++g) {
      for (int64_t h = 0; h < hidden; ++h) {
        const int64_t gate = g < gates ? order[g] : gates - 1;
        const float input_part = onnx_bias[static_cast<size_t>((d * 2 * gates + gate) * hidden + h)];
        const float recurrent_part = onnx_bias[static_cast<size_t>((d * 2 * gates + gates + gate) * hidden + h)];
        float value = input_part + recurrent_part;
        if (lbr && g == gates - 1) value = input_part;  // oneDNN's third bias: Wb of h only
        if (lbr && g == gates) value = recurrent_part;  // its fourth: Rb of h
        bias[static_cast<size_t>((d * bias_gates + g) * hidden + h)] = value;
      }
    }
  }
  std::vector<int32_t> inputs = {activation(x), layer_weights, iter_weights,
                                 add_constant({1, directions, bias_gates, hidden}, std::move(bias))};
  for (int32_t s : {h0, c0}) {
    if (s == -1) {
      inputs.push_back(-1);
    } else if (graph_.is_constant(s)) {
      inputs.push_back(add_constant({1, directions, batch, hidden}, graph_.floats(s), s));
    } else {
      inputs.push_back(with_rank(activation(s), 4, node));
    }
  }
  const int32_t layer_out = add_internal({steps, batch, directions * hidden});
  const int32_t state_out = add_internal({1, directions, batch, hidden});
  std::vector<int32_t> op_outputs = {layer_out, state_out};
  if (lstm) op_outputs.push_back(add_internal({1, directions, batch, hidden}));
  Op& op = add(OpKind::Rnn, node, std::move(inputs), op_outputs);
  op.algorithm = lstm ? Algorithm::Lstm : lbr ? Algorithm::GruLinearBeforeReset : Algorithm::Gru;
  op.axis = direction == "forward" ? 0 : direction == "reverse" ? 1 : 2;
  if (outputs[0] != -1) {
    if (directions == 1) {
      add(OpKind::Reshape, node, {layer_out}, {activation(outputs[0])});
    } else {
      const int32_t split = add_internal({steps, batch, directions, hidden});
      add(OpKind::Reshape, node, {layer_out}, {split});
      Op& transpose = add(OpKind::Reorder, node, {split}, {activation(outputs[0])});
      transpose.perm = {0, 2, 1, 3};
      transpose.alpha = 1.0f;
    }
  }
  for (size_t o = 1; o < op_outputs.size(); ++o) {
    if (outputs[o] != -1) add(OpKind::Reshape, node, {op_outputs[o]}, {activation(outputs[o])});
  }
  return "";
}

std::string Lowering::lower_reduce(const ir::Node& node, Algorithm algorithm) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.empty()) return "scalars are not reduced";
  // ReduceSum takes its axes as an input from opset 13, the others from opset 18.
  const bool axes_input = graph_.opset() >= (algorithm == Algorithm::ReduceSum ? 13 : 18);
  std::vector<int64_t> axes;
  if (axes_input) {
    const int32_t a = GraphView::input(node, 1);
    if (a != -1) {
      std::optional<std::vector<int64_t>> read = graph_.is_constant(a) ? graph_.ints(a) : std::nullopt;
      if (!read) return "axes is not an integer constant";
      axes = *read;
    }
  } else {
    axes = GraphView::ints_attribute(node, "axes");
  }
  if (axes.empty() && GraphView::int_attribute(node, "noop_with_empty_axes", 0) != 0)
    return "an empty reduction is not taken";
  std::vector<bool> reduced(xs.size(), axes.empty());
  for (int64_t axis : axes) {
    const std::optional<size_t> a = normalize_axis(axis, xs.size());
    if (!a) return "an axis is out of range";
    reduced[*a] = true;
  }
  const bool keep = GraphView::int_attribute(node, "keepdims", 1) != 0;
  std::vector<int64_t> kept, dropped;
  for (size_t d = 0; d < xs.size(); ++d) {
    kept.push_back(reduced[d] ? 1 : xs[d]);
    if (!reduced[d]) dropped.push_back(xs[d]);
  }
  if (graph_.shape(y) != (keep ? kept : dropped)) return "the output shape is not " + shape_text(keep ? kept : dropped);
  if (kept == xs) {  // nothing to reduce
    add(OpKind::Reshape, node, {activation(x)}, {activation(y)});
    return "";
  }
  const int32_t out = keep ? activation(y) : add_internal(kept);
  add(OpKind::Reduction, node, {activation(x)}, {out}).algorithm = algorithm;
  if (!keep) add(OpKind::Reshape, node, {out}, {activation(y)});
  return "";
}

}  // namespace plugrt::onednn
