// SPDX-License-Identifier: Apache-2.0
#include "aot/lowering.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <xnnpack.h>

#include "src/blob_format.h"

namespace plugrt::xnnpack {

namespace {

using blob::NodeKind;

constexpr float kInfinity = std::numeric_limits<float>::infinity();

/// The spatial geometry of a 2-D window op, with explicit pads (top, left, bottom, right
/// in ONNX order) resolved from auto_pad, and the output height and width (floor
/// rounding; -1 when the window does not fit).
struct Window {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  int64_t oh = -1, ow = -1;
};

/// The SDK's window, narrowed to what XNNPACK's 2-D window ops take.
std::string resolve_window(const ir::Node& node, const std::vector<int64_t>& input, int64_t kh, int64_t kw,
                           bool allow_dilations, Window* window) {
  if (input.size() != 4) return "the input is not 4-D";
  sdk::Window w;
  if (std::string why = sdk::resolve_window(node, input, {kh, kw}, &w); !why.empty()) return why;
  if (!allow_dilations && (w.dilations[0] != 1 || w.dilations[1] != 1)) return "dilations are not supported here";
  if (kh > 65535 || kw > 65535) return "the window is too large";
  for (const std::vector<int64_t>* pads : {&w.begin, &w.end}) {
    if ((*pads)[0] > 65535 || (*pads)[1] > 65535) return "a pad is too large";
  }
  const std::vector<int64_t> out = sdk::window_output(input, w);
  *window = Window{kh,         kw,         w.strides[0], w.strides[1], w.dilations[0], w.dilations[1],
                   w.begin[0], w.begin[1], w.end[0],     w.end[1],     out[0],         out[1]};
  return "";
}

/// A 2-D ConvTranspose's geometry in XNNPACK's deconvolution terms. XNNPACK's output is
/// stride x (input - 1) + adjustment + extent - top - bottom: the full result, with
/// `adjustment` rows (columns) of bias alone added at its end, cropped by the pads.
struct TransposedWindow {
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  int64_t adjust_h = 0, adjust_w = 0;
  int64_t oh = 0, ow = 0;
};

/// ONNX's rules for ConvTranspose, as the portable kernel applies them: `pads`, or the
/// padding `auto_pad` or `output_shape` implies (the odd one at the end for SAME_UPPER,
/// at the beginning otherwise; none where the output is longer than the natural size).
/// The output then begins `begin` into the full result and ends `base - begin - out`
/// before its end: a crop at the end where that is positive; otherwise the output reaches
/// past it into bias alone, which XNNPACK's adjustment gives only when shorter than the
/// stride.
std::string resolve_transposed_window(const ir::Node& node, const std::vector<int64_t>& input,
                                      const std::vector<int64_t>& kernel, TransposedWindow* w) {
  const std::vector<int64_t> strides = GraphView::ints_attribute(node, "strides", {1, 1});
  const std::vector<int64_t> dilations = GraphView::ints_attribute(node, "dilations", {1, 1});
  const std::vector<int64_t> pads = GraphView::ints_attribute(node, "pads", {0, 0, 0, 0});
  const std::vector<int64_t> extra = GraphView::ints_attribute(node, "output_padding", {0, 0});
  std::vector<int64_t> shape = GraphView::ints_attribute(node, "output_shape", {});
  if (shape.size() == 4) shape.erase(shape.begin(), shape.begin() + 2);  // N and C given too
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 || extra.size() != 2 ||
      (!shape.empty() && shape.size() != 2)) {
    return "strides, dilations, pads, output_padding or output_shape do not have 2 spatial values";
  }
  const std::string auto_pad = GraphView::string_attribute(node, "auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID") return "auto_pad '" + auto_pad + "' is unknown";
  // XNNPACK's parameters are 32-bit; these bounds also keep the sums below from overflowing.
  constexpr int64_t kMax = 65535;
  auto outside = [](int64_t v, int64_t lo) { return v < lo || v > kMax; };
  int64_t begin[2], end[2], adjust[2], out[2];
  for (size_t i = 0; i < 2; ++i) {
    if (outside(kernel[i], 1) || outside(strides[i], 1) || outside(dilations[i], 1) || outside(pads[i], 0) ||
        outside(pads[i + 2], 0) || outside(extra[i], 0) || (!shape.empty() && outside(shape[i], 1))) {
      return "a kernel, stride, dilation, pad, output_padding or output_shape value is out of range";
    }
    if (input[2 + i] > kMax) return "the input is too large";
    const int64_t base = strides[i] * (input[2 + i] - 1) + (kernel[i] - 1) * dilations[i] + 1;
    const int64_t natural = base + extra[i];
    begin[i] = 0;
    out[i] = natural;
    if (!shape.empty() || same) {
      out[i] = shape.empty() ? input[2 + i] * strides[i] : shape[i];
      const int64_t total = std::max<int64_t>(0, natural - out[i]);
      begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (auto_pad == "NOTSET") {
      begin[i] = pads[i];
      out[i] = natural - pads[i] - pads[i + 2];
    }
    if (out[i] < 1) return "the pads leave no output along spatial axis " + std::to_string(i);
    // The 2022 XNNPACK splits a strided deconvolution into stride x stride
    // subconvolutions, each starting up to stride - 1 into the output, and sizes each as
    // (output - start) / stride in unsigned arithmetic: an output shorter than the stride
    // wraps around and is written far out of bounds (found by the differential test).
    if (out[i] < strides[i]) {
      return "the output is shorter than the stride along spatial axis " + std::to_string(i) +
             " (XNNPACK's subconvolutions would overflow)";
    }
    end[i] = base - begin[i] - out[i];
    if (begin[i] > kMax || end[i] > kMax) return "a pad is too large";
    adjust[i] = 0;
    if (end[i] < 0) {
      adjust[i] = -end[i];
      end[i] = 0;
      if (adjust[i] >= strides[i]) {
        return "output_padding or output_shape lengthens the output by a stride or more past the pads (XNNPACK's "
               "adjustment is below the stride)";
      }
    }
  }
  *w = TransposedWindow{strides[0], strides[1], dilations[0], dilations[1], begin[0], begin[1],
                        end[0],     end[1],     adjust[0],    adjust[1],    out[0],   out[1]};
  return "";
}

std::vector<uint32_t> u32(std::initializer_list<int64_t> values) {
  std::vector<uint32_t> out;
  for (int64_t v : values) out.push_back(static_cast<uint32_t>(v));
  return out;
}

/// A constant's data as XNNPACK wants it for an input of a node whose output has rank
/// `rank`: its shape left-padded with 1s and, for rank 4, moved to NHWC.
void constant_for_rank(const std::vector<int64_t>& shape, const std::vector<float>& data, size_t rank,
                       std::vector<uint64_t>* dims, std::vector<float>* out) {
  if (rank != 4) {
    dims->assign(shape.begin(), shape.end());
    if (dims->empty()) dims->push_back(1);
    *out = data;
    return;
  }
  std::vector<int64_t> full(4 - shape.size(), 1);
  full.insert(full.end(), shape.begin(), shape.end());
  const int64_t n = full[0], c = full[1], h = full[2], w = full[3];
  *dims = {static_cast<uint64_t>(n), static_cast<uint64_t>(h), static_cast<uint64_t>(w), static_cast<uint64_t>(c)};
  out->assign(data.size(), 0.0f);
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw)
          (*out)[static_cast<size_t>(((in * h + ih) * w + iw) * c + ic)] =
              data[static_cast<size_t>(((in * c + ic) * h + ih) * w + iw)];
}

/// A 2-D convolution's group and window, checked against its input `xs` (NCHW), its
/// weights `ws` (OIHW) and its output `ys`.
std::string conv_geometry(const ir::Node& node, const std::vector<int64_t>& xs, const std::vector<int64_t>& ws,
                          const std::vector<int64_t>& ys, int64_t* group, Window* window) {
  *group = GraphView::int_attribute(node, "group", 1);
  const int64_t channels = xs[1], out_channels = ws[0];
  if (*group < 1 || channels % *group != 0 || out_channels % *group != 0 || ws[1] != channels / *group) {
    return "group, input channels and weights do not agree";
  }
  const std::vector<int64_t> kernel = GraphView::ints_attribute(node, "kernel_shape", {ws[2], ws[3]});
  if (kernel.size() != 2 || kernel[0] != ws[2] || kernel[1] != ws[3]) return "kernel_shape does not match the weights";
  if (std::string why = resolve_window(node, xs, ws[2], ws[3], true, window); !why.empty()) return why;
  const std::vector<int64_t> expected = {xs[0], out_channels, window->oh, window->ow};
  if (window->oh < 1 || window->ow < 1 || ys != expected) return "the output shape is not " + shape_text(expected);
  return "";
}

/// OIHW -> OHWI, for elements of any type.
template <typename T>
std::vector<T> oihw_to_ohwi(const std::vector<T>& weights, int64_t out_channels, int64_t group_in, int64_t kh,
                            int64_t kw) {
  std::vector<T> filter(weights.size());
  for (int64_t m = 0; m < out_channels; ++m)
    for (int64_t c = 0; c < group_in; ++c)
      for (int64_t i = 0; i < kh * kw; ++i)
        filter[static_cast<size_t>((m * kh * kw + i) * group_in + c)] =
            weights[static_cast<size_t>((m * group_in + c) * kh * kw + i)];
  return filter;
}

}  // namespace

std::vector<uint64_t> xnn_dims(const std::vector<int64_t>& shape) {
  std::vector<uint64_t> dims(shape.begin(), shape.end());
  if (shape.size() == 4) {
    dims = {static_cast<uint64_t>(shape[0]), static_cast<uint64_t>(shape[2]), static_cast<uint64_t>(shape[3]),
            static_cast<uint64_t>(shape[1])};
  }
  return dims;
}

bool layout_trivial(const std::vector<int64_t>& shape) {
  return shape.size() != 4 || shape[1] == 1 || shape[2] * shape[3] == 1;
}

Lowering::Node::Node() : kind(NodeKind::Clamp), output_min(-kInfinity), output_max(kInfinity) {}

std::string Lowering::add_node(size_t index) {
  const ir::Node& node = graph_.node(index);
  const size_t tensors_before = tensors_.size();
  const size_t nodes_before = nodes_.size();
  values_added_.clear();
  std::string why = lower(node);
  if (!why.empty()) {  // leave nothing of a refused node behind
    for (size_t n = nodes_before; n < nodes_.size(); ++n) {
      for (uint32_t t : nodes_[n].outputs) producer_.erase(t), ranges_.erase(t);
    }
    tensors_.resize(tensors_before);
    nodes_.resize(nodes_before, Node());
    for (int32_t value : values_added_) value_tensor_.erase(value);
  }
  return why;
}

std::string Lowering::check_activation(int32_t value, const char* role) const {
  if (!graph_.valid(value)) return std::string("the ") + role + " is missing";
  if (graph_.is_constant(value)) return std::string("the ") + role + " is a constant";
  if (!graph_.is_float(value)) return std::string("the ") + role + " is not float32";
  const std::vector<int64_t> shape = graph_.shape(value);
  if (shape.empty() || shape.size() > XNN_MAX_TENSOR_DIMS) {
    return std::string("the ") + role + " has rank " + std::to_string(shape.size()) + " (XNNPACK takes 1 to 6)";
  }
  for (int64_t dim : shape) {
    if (dim < 1 || dim > (std::numeric_limits<int32_t>::max)())
      return std::string("the ") + role + " has an empty dimension";
  }
  return "";
}

uint32_t Lowering::activation(int32_t value) {
  auto found = value_tensor_.find(value);
  if (found != value_tensor_.end()) return found->second;
  Tensor tensor;
  tensor.dims = xnn_dims(graph_.shape(value));
  tensors_.push_back(std::move(tensor));
  const uint32_t index = static_cast<uint32_t>(tensors_.size() - 1);
  value_tensor_[value] = index;
  values_added_.push_back(value);
  return index;
}

uint32_t Lowering::add_static(std::vector<uint64_t> dims, std::vector<float> data) {
  Tensor tensor;
  tensor.dims = std::move(dims);
  tensor.data = std::move(data);
  tensor.is_static = true;
  tensors_.push_back(std::move(tensor));
  return static_cast<uint32_t>(tensors_.size() - 1);
}

uint32_t Lowering::add_internal(std::vector<uint64_t> dims) {
  Tensor tensor;
  tensor.dims = std::move(dims);
  tensors_.push_back(std::move(tensor));
  return static_cast<uint32_t>(tensors_.size() - 1);
}

Lowering::Node& Lowering::add(NodeKind kind, const ir::Node& from, std::vector<uint32_t> inputs,
                              std::vector<uint32_t> outputs) {
  Node node;
  node.kind = kind;
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  node.name = from.name() != nullptr ? from.name()->str() : from.op_type()->str();
  for (uint32_t t : node.outputs) producer_[t] = nodes_.size();
  nodes_.push_back(std::move(node));
  return nodes_.back();
}

std::string Lowering::lower(const ir::Node& node) {
  const std::string op = node.op_type()->str();
  // Every output but the first must be absent (MaxPool's Indices, BatchNormalization's
  // training outputs, Dropout's mask...).
  if (GraphView::num_outputs(node) != 1 || GraphView::output(node, 0) == -1) {
    return "only nodes with exactly one output are taken";
  }
  // The quantized ops check their 8-bit output themselves.
  if (op == "QLinearConv") return lower_qlinear_conv(node);
  if (op == "QLinearMatMul") return lower_qlinear_matmul(node);
  if (op == "QuantizeLinear") return lower_quantize_linear(node);
  if (op == "DequantizeLinear") return lower_dequantize_linear(node);
  if (std::string why = check_activation(GraphView::output(node, 0), "output"); !why.empty()) return why;
  if (op == "Conv") return lower_conv(node);
  if (op == "ConvTranspose") return lower_conv_transpose(node);
  if (op == "Gemm") return lower_gemm(node);
  if (op == "MatMul") return lower_matmul(node);
  if (op == "Add") return lower_binary(node, NodeKind::Add);
  if (op == "Sub") return lower_binary(node, NodeKind::Subtract);
  if (op == "Mul") return lower_binary(node, NodeKind::Multiply);
  if (op == "Div") return lower_binary(node, NodeKind::Divide);
  if (op == "Relu" || op == "Clip" || op == "Sigmoid" || op == "HardSwish" || op == "LeakyRelu") {
    return lower_unary(node);
  }
  if (op == "HardSigmoid") return lower_hard_sigmoid(node);
  if (op == "Softmax") return lower_softmax(node);
  if (op == "MaxPool") return lower_pool(node, true);
  if (op == "AveragePool") return lower_pool(node, false);
  if (op == "GlobalAveragePool") return lower_global_pool(node);
  if (op == "Pad") return lower_pad(node);
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") return lower_reshape(node);
  if (op == "BatchNormalization") return lower_batch_norm(node);
  return "XNNPACK has no lowering of " + op + " in this build";
}

// ---- Convolution ---------------------------------------------------------------------

std::string Lowering::check_conv_operands(int32_t x, int32_t w, const char* what, std::vector<int64_t>* xs,
                                          std::vector<int64_t>* ws) const {
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  *xs = graph_.shape(x);
  if (xs->size() != 4) return std::string("only 2-D ") + what + " (a 4-D input) is taken";
  if (!graph_.is_constant(w) || !graph_.is_float(w)) return "the weights are not a float32 constant";
  *ws = graph_.shape(w);
  if (ws->size() != 4) return "the weights are not 4-D";
  return "";
}

std::string Lowering::read_bias(int32_t b, int64_t out_channels, std::vector<float>* bias) const {
  if (b == -1) {
    bias->assign(static_cast<size_t>(out_channels), 0.0f);
    return "";
  }
  if (!graph_.is_constant(b) || !graph_.is_float(b) || graph_.shape(b) != std::vector<int64_t>{out_channels}) {
    return "the bias is not a float32 constant of " + std::to_string(out_channels) + " elements";
  }
  *bias = graph_.floats(b);
  return "";
}

std::string Lowering::lower_conv(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), w = GraphView::input(node, 1), b = GraphView::input(node, 2);
  const int32_t y = GraphView::output(node, 0);
  std::vector<int64_t> xs, ws;
  if (std::string why = check_conv_operands(x, w, "convolution", &xs, &ws); !why.empty()) return why;
  int64_t group = 1;
  Window window;
  if (std::string why = conv_geometry(node, xs, ws, graph_.shape(y), &group, &window); !why.empty()) return why;
  const int64_t channels = xs[1], out_channels = ws[0];
  std::vector<float> bias;
  if (std::string why = read_bias(b, out_channels, &bias); !why.empty()) return why;
  const std::vector<float> weights = graph_.floats(w);
  if (weights.empty()) return "the weights' data does not match their shape";

  const int64_t kh = ws[2], kw = ws[3], group_in = ws[1];
  const bool depthwise = group > 1 && group == channels && group_in == 1;
  std::vector<float> filter(weights.size());
  if (depthwise) {
    // [M, 1, kh, kw] -> [1, kh, kw, M]
    for (int64_t m = 0; m < out_channels; ++m)
      for (int64_t i = 0; i < kh * kw; ++i)
        filter[static_cast<size_t>(i * out_channels + m)] = weights[static_cast<size_t>(m * kh * kw + i)];
  } else {
    filter = oihw_to_ohwi(weights, out_channels, group_in, kh, kw);
  }
  const uint32_t input = activation(x);
  const uint32_t filter_id =
      depthwise
          ? add_static({1, static_cast<uint64_t>(kh), static_cast<uint64_t>(kw), static_cast<uint64_t>(out_channels)},
                       std::move(filter))
          : add_static({static_cast<uint64_t>(out_channels), static_cast<uint64_t>(kh), static_cast<uint64_t>(kw),
                        static_cast<uint64_t>(group_in)},
                       std::move(filter));
  const uint32_t bias_id = add_static({static_cast<uint64_t>(out_channels)}, std::move(bias));
  Node& lowered = add(depthwise ? NodeKind::DepthwiseConvolution2d : NodeKind::Convolution2d, node,
                      {input, filter_id, bias_id}, {activation(y)});
  lowered.padding = u32({window.top, window.right, window.bottom, window.left});
  lowered.kernel = u32({kh, kw});
  lowered.strides = u32({window.sh, window.sw});
  lowered.dilations = u32({window.dh, window.dw});
  lowered.groups = static_cast<uint32_t>(group);
  lowered.group_input_channels = static_cast<uint64_t>(group_in);
  lowered.group_output_channels = static_cast<uint64_t>(out_channels / group);
  lowered.depth_multiplier = depthwise ? static_cast<uint32_t>(out_channels / channels) : 0;
  return "";
}

std::string Lowering::lower_conv_transpose(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), w = GraphView::input(node, 1), b = GraphView::input(node, 2);
  const int32_t y = GraphView::output(node, 0);
  std::vector<int64_t> xs, ws;
  if (std::string why = check_conv_operands(x, w, "transposed convolution", &xs, &ws); !why.empty()) return why;
  const int64_t group = GraphView::int_attribute(node, "group", 1);
  // ONNX's weights are [C, M / group, kh, kw]: input channels first.
  const int64_t channels = xs[1];
  if (group < 1 || ws[0] != channels || channels % group != 0 || ws[1] < 1 || ws[1] > (int64_t{1} << 24) / group) {
    return "group, input channels and weights do not agree";
  }
  const int64_t group_in = channels / group, group_out = ws[1], out_channels = group_out * group;
  const int64_t kh = ws[2], kw = ws[3];
  if (GraphView::ints_attribute(node, "kernel_shape", {kh, kw}) != std::vector<int64_t>{kh, kw}) {
    return "kernel_shape does not match the weights";
  }
  TransposedWindow window;
  if (std::string why = resolve_transposed_window(node, xs, {kh, kw}, &window); !why.empty()) return why;
  const std::vector<int64_t> expected = {xs[0], out_channels, window.oh, window.ow};
  if (graph_.shape(y) != expected) return "the output shape is not " + shape_text(expected);
  std::vector<float> bias;
  if (std::string why = read_bias(b, out_channels, &bias); !why.empty()) return why;
  const std::vector<float> weights = graph_.floats(w);
  if (weights.empty()) return "the weights' data does not match their shape";

  // [C, M / g, kh, kw] -> [M, kh, kw, C / g]: output channel g x M / g + m of group g
  // reads input channels g x C / g + c.
  std::vector<float> filter(weights.size());
  for (int64_t g = 0; g < group; ++g)
    for (int64_t c = 0; c < group_in; ++c)
      for (int64_t m = 0; m < group_out; ++m)
        for (int64_t i = 0; i < kh * kw; ++i)
          filter[static_cast<size_t>(((g * group_out + m) * kh * kw + i) * group_in + c)] =
              weights[static_cast<size_t>(((g * group_in + c) * group_out + m) * kh * kw + i)];
  const uint32_t input = activation(x);
  const uint32_t filter_id = add_static({static_cast<uint64_t>(out_channels), static_cast<uint64_t>(kh),
                                         static_cast<uint64_t>(kw), static_cast<uint64_t>(group_in)},
                                        std::move(filter));
  const uint32_t bias_id = add_static({static_cast<uint64_t>(out_channels)}, std::move(bias));
  Node& lowered = add(NodeKind::Deconvolution2d, node, {input, filter_id, bias_id}, {activation(y)});
  lowered.padding = u32({window.top, window.right, window.bottom, window.left});
  lowered.adjustment = u32({window.adjust_h, window.adjust_w});
  lowered.kernel = u32({kh, kw});
  lowered.strides = u32({window.sh, window.sw});
  lowered.dilations = u32({window.dh, window.dw});
  lowered.groups = static_cast<uint32_t>(group);
  lowered.group_input_channels = static_cast<uint64_t>(group_in);
  lowered.group_output_channels = static_cast<uint64_t>(group_out);
  return "";
}

// ---- Fully connected -------------------------------------------------------------------

std::string Lowering::lower_gemm(const ir::Node& node) {
  const int32_t a = GraphView::input(node, 0), c = GraphView::input(node, 2);
  const int32_t y = GraphView::output(node, 0);
  if (std::string why = check_activation(a, "input A"); !why.empty()) return why;
  sdk::DenseGemm gemm;
  if (std::string why = sdk::resolve_dense_gemm(graph_, node, &gemm); !why.empty()) return why;
  const int64_t n = gemm.n, k = gemm.k;
  std::vector<float> bias(static_cast<size_t>(n), 0.0f);
  if (c != -1) {
    if (!graph_.is_constant(c) || !graph_.is_float(c)) return "C is not a float32 constant";
    const std::vector<int64_t> cs = graph_.shape(c);
    const int64_t count = num_elements(cs);
    const bool per_column = count == n && (cs.size() == 1 || (cs.size() == 2 && cs[0] == 1));
    if (!per_column && count != 1) return "C is not a per-column bias";
    const std::vector<float> data = graph_.floats(c);
    if (data.size() != static_cast<size_t>(count)) return "C's data does not match its shape";
    for (int64_t j = 0; j < n; ++j) {
      bias[static_cast<size_t>(j)] = gemm.beta * data[per_column ? static_cast<size_t>(j) : 0];
    }
  }
  std::vector<float> filter = std::move(gemm.weights);  // [N, K]
  const uint32_t input = activation(a);
  const uint32_t filter_id = add_static({static_cast<uint64_t>(n), static_cast<uint64_t>(k)}, std::move(filter));
  const uint32_t bias_id = add_static({static_cast<uint64_t>(n)}, std::move(bias));
  add(NodeKind::FullyConnected, node, {input, filter_id, bias_id}, {activation(y)});
  return "";
}

std::string Lowering::lower_matmul(const ir::Node& node) {
  const int32_t a = GraphView::input(node, 0), b = GraphView::input(node, 1);
  const int32_t y = GraphView::output(node, 0);
  if (std::string why = check_activation(a, "input A"); !why.empty()) return why;
  const std::vector<int64_t> as = graph_.shape(a);
  if (as.size() < 2 || as.size() == 4) return "A must have rank 2, 3, 5 or 6 (a 4-D A is NHWC inside a partition)";
  if (!graph_.is_constant(b) || !graph_.is_float(b) || graph_.shape(b).size() != 2) {
    return "B is not a 2-D float32 constant";
  }
  const std::vector<int64_t> bs = graph_.shape(b);
  const int64_t k = bs[0], n = bs[1];
  if (as.back() != k) return "A and B do not agree on K";
  std::vector<int64_t> expected = as;
  expected.back() = n;
  if (graph_.shape(y) != expected) return "the output shape is not " + shape_text(expected);
  const std::vector<float> weights = graph_.floats(b);
  if (weights.empty()) return "B's data does not match its shape";
  std::vector<float> filter(static_cast<size_t>(n * k));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < k; ++i) filter[static_cast<size_t>(j * k + i)] = weights[static_cast<size_t>(i * n + j)];
  const uint32_t input = activation(a);
  const uint32_t filter_id = add_static({static_cast<uint64_t>(n), static_cast<uint64_t>(k)}, std::move(filter));
  const uint32_t bias_id = add_static({static_cast<uint64_t>(n)}, std::vector<float>(static_cast<size_t>(n), 0.0f));
  add(NodeKind::FullyConnected, node, {input, filter_id, bias_id}, {activation(y)});
  return "";
}

// ---- Elementwise -------------------------------------------------------------------------

std::string Lowering::lower_binary(const ir::Node& node, NodeKind kind) {
  const int32_t a = GraphView::input(node, 0), b = GraphView::input(node, 1);
  const int32_t y = GraphView::output(node, 0);
  if (!graph_.valid(a) || !graph_.valid(b)) return "an input is missing";
  if (!graph_.is_float(a) || !graph_.is_float(b)) return "an input is not float32";
  if (graph_.is_constant(a) && graph_.is_constant(b)) return "both inputs are constants";
  const std::optional<std::vector<int64_t>> expected = sdk::broadcast_shapes(graph_.shape(a), graph_.shape(b));
  if (!expected) return "the inputs do not broadcast";
  const std::vector<int64_t> ys = graph_.shape(y);
  if (ys != *expected) return "the output shape is not " + shape_text(*expected);
  const size_t rank = ys.size();
  std::vector<uint32_t> inputs;
  for (int32_t v : {a, b}) {
    if (graph_.is_constant(v)) {
      const std::vector<int64_t> shape = graph_.shape(v);
      const std::vector<float> data = graph_.floats(v);
      if (data.size() != static_cast<size_t>(num_elements(shape))) return "a constant's data does not match its shape";
      continue;
    }
    if (std::string why = check_activation(v, "input"); !why.empty()) return why;
    const size_t input_rank = graph_.shape(v).size();
    // A run-time value keeps one layout; NHWC (4-D) and graph order only line up when
    // both sides are 4-D or neither is.
    if ((rank == 4) != (input_rank == 4)) {
      return "a run-time input of rank " + std::to_string(input_rank) + " broadcasts to rank " + std::to_string(rank) +
             ", which NHWC does not preserve";
    }
  }
  for (int32_t v : {a, b}) {
    if (graph_.is_constant(v)) {
      std::vector<uint64_t> dims;
      std::vector<float> data;
      constant_for_rank(graph_.shape(v), graph_.floats(v), rank, &dims, &data);
      inputs.push_back(add_static(std::move(dims), std::move(data)));
    } else {
      inputs.push_back(activation(v));
    }
  }
  add(kind, node, std::move(inputs), {activation(y)});
  return "";
}

std::string Lowering::lower_unary(const ir::Node& node) {
  const std::string op = node.op_type()->str();
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  if (graph_.shape(y) != graph_.shape(x)) return "the output shape differs from the input's";
  NodeKind kind = NodeKind::Clamp;
  float lo = -kInfinity, hi = kInfinity, alpha = 0;
  if (op == "Relu") {
    lo = 0;
  } else if (op == "Clip") {
    if (graph_.opset() < 11) {
      lo = GraphView::float_attribute(node, "min", -(std::numeric_limits<float>::max)());
      hi = GraphView::float_attribute(node, "max", (std::numeric_limits<float>::max)());
    } else {
      for (size_t i = 1; i <= 2; ++i) {
        const int32_t bound = GraphView::input(node, i);
        if (bound == -1) continue;
        if (!graph_.is_constant(bound) || !graph_.is_float(bound)) return "a bound is not a float32 constant";
        const std::vector<float> value = graph_.floats(bound);
        if (value.size() != 1) return "a bound is not a scalar";
        (i == 1 ? lo : hi) = value[0];
      }
    }
    if (std::isnan(lo) || std::isnan(hi) || !(lo < hi)) return "Clip's bounds are not min < max";
  } else if (op == "Sigmoid") {
    kind = NodeKind::Sigmoid;
  } else if (op == "HardSwish") {
    kind = NodeKind::HardSwish;
  } else {  // LeakyRelu
    kind = NodeKind::LeakyRelu;
    alpha = GraphView::float_attribute(node, "alpha", 0.01f);
    if (!std::isfinite(alpha)) return "alpha is not finite";
  }
  if (kind == NodeKind::Clamp && value_tensor_.count(x) > 0) {
    // XNNPACK fuses a clamp into the node before it, intersecting their ranges, and
    // refuses the runtime when that leaves nothing (a Clip to [-2, -1] after a Relu).
    const auto [before_lo, before_hi] = clamped_range(value_tensor_.at(x));
    if (!(std::max(lo, before_lo) < std::min(hi, before_hi))) {
      return "its range [" + std::to_string(lo) + ", " + std::to_string(hi) + "] does not meet its input's [" +
             std::to_string(before_lo) + ", " + std::to_string(before_hi) + "], which XNNPACK cannot fuse";
    }
  }
  Node& lowered = add(kind, node, {activation(x)}, {activation(y)});
  lowered.output_min = lo;
  lowered.output_max = hi;
  lowered.alpha = alpha;
  return "";
}

std::pair<float, float> Lowering::clamped_range(uint32_t tensor) {
  const auto producer = producer_.find(tensor);
  if (producer == producer_.end()) return {-kInfinity, kInfinity};  // a partition input
  if (const auto known = ranges_.find(tensor); known != ranges_.end()) return known->second;
  const Node& node = nodes_[producer->second];
  std::pair<float, float> range = {node.output_min, node.output_max};
  if (node.kind == NodeKind::Clamp && !node.inputs.empty()) {  // known by now: made before this node
    const auto [lo, hi] = clamped_range(node.inputs[0]);
    range = {std::max(range.first, lo), std::min(range.second, hi)};
  }
  ranges_[tensor] = range;
  return range;
}

std::string Lowering::lower_hard_sigmoid(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (graph_.shape(y) != xs) return "the output shape differs from the input's";
  const float alpha = GraphView::float_attribute(node, "alpha", 0.2f);
  const float beta = GraphView::float_attribute(node, "beta", 0.5f);
  if (!std::isfinite(alpha) || !std::isfinite(beta)) return "alpha or beta is not finite";
  // max(0, min(1, alpha * x + beta)): a multiply, then an add clamped to [0, 1].
  const uint32_t input = activation(x);
  const uint32_t scaled = add_internal(xnn_dims(xs));
  const uint32_t alpha_id = add_static({1}, {alpha});
  add(NodeKind::Multiply, node, {input, alpha_id}, {scaled});
  const uint32_t beta_id = add_static({1}, {beta});
  Node& shifted = add(NodeKind::Add, node, {scaled, beta_id}, {activation(y)});
  shifted.output_min = 0.0f;
  shifted.output_max = 1.0f;
  return "";
}

std::string Lowering::lower_softmax(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (graph_.shape(y) != xs) return "the output shape differs from the input's";
  const int64_t rank = static_cast<int64_t>(xs.size());
  const bool per_axis = graph_.opset() >= 13;
  const std::optional<size_t> normalized_axis =
      sdk::normalize_axis(GraphView::int_attribute(node, "axis", per_axis ? -1 : 1), xs.size());
  if (!normalized_axis) return "axis is out of range";
  const int64_t axis = static_cast<int64_t>(*normalized_axis);
  // XNNPACK normalises over the innermost dimension: the last one, or C for 4-D (NHWC).
  bool ok;
  if (rank == 4) {
    // Per-axis (opset 13) over C; the older flattening form over C only when H = W = 1.
    ok = axis == 1 && (per_axis || xs[2] * xs[3] == 1);
  } else {
    ok = axis == rank - 1;
  }
  if (!ok) return "softmax is taken over the innermost dimension only";
  add(NodeKind::Softmax, node, {activation(x)}, {activation(y)});
  return "";
}

// ---- Pooling -----------------------------------------------------------------------------

std::string Lowering::lower_pool(const ir::Node& node, bool is_max) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.size() != 4) return "only 2-D pooling (a 4-D input) is taken";
  const std::vector<int64_t> kernel = GraphView::ints_attribute(node, "kernel_shape");
  if (kernel.size() != 2) return "kernel_shape is not 2-D";
  if (kernel[0] * kernel[1] < 2) return "XNNPACK pools windows of at least 2 elements";
  if (is_max && GraphView::int_attribute(node, "storage_order", 0) != 0) return "storage_order 1 is not supported";
  Window window;
  if (std::string why = resolve_window(node, xs, kernel[0], kernel[1], is_max, &window); !why.empty()) return why;
  if (!is_max && GraphView::int_attribute(node, "count_include_pad", 0) != 0 &&
      (window.top | window.left | window.bottom | window.right) != 0) {
    return "count_include_pad with padding is not supported (XNNPACK averages over the valid elements)";
  }
  const int64_t oh = window.oh, ow = window.ow;
  const std::vector<int64_t> expected = {xs[0], xs[1], oh, ow};
  // ceil_mode is taken where it gives the same shape as floor rounding.
  if (oh < 1 || graph_.shape(y) != expected) return "the output shape is not " + shape_text(expected);
  Node& lowered =
      add(is_max ? NodeKind::MaxPooling2d : NodeKind::AveragePooling2d, node, {activation(x)}, {activation(y)});
  lowered.padding = u32({window.top, window.right, window.bottom, window.left});
  lowered.kernel = u32({window.kh, window.kw});
  lowered.strides = u32({window.sh, window.sw});
  lowered.dilations = u32({window.dh, window.dw});
  return "";
}

std::string Lowering::lower_global_pool(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.size() != 4) return "only 4-D inputs are taken";
  if (graph_.shape(y) != std::vector<int64_t>{xs[0], xs[1], 1, 1}) return "the output shape is not [N, C, 1, 1]";
  add(NodeKind::GlobalAveragePooling2d, node, {activation(x)}, {activation(y)});
  return "";
}

// ---- Layout ---------------------------------------------------------------------------------

std::string Lowering::lower_pad(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (GraphView::string_attribute(node, "mode", "constant") != "constant") return "only constant padding is taken";
  std::vector<int64_t> pads;
  float value = 0;
  if (graph_.opset() < 11) {
    pads = GraphView::ints_attribute(node, "pads");
    value = GraphView::float_attribute(node, "value", 0.0f);
  } else {
    const int32_t p = GraphView::input(node, 1), v = GraphView::input(node, 2);
    if (GraphView::input(node, 3) != -1) return "the axes input is not supported";
    if (!graph_.is_constant(p)) return "pads is not a constant";
    std::optional<std::vector<int64_t>> read = graph_.ints(p);
    if (!read) return "pads is not an integer constant";
    pads = *read;
    if (v != -1) {
      if (!graph_.is_constant(v) || !graph_.is_float(v)) return "constant_value is not a float32 constant";
      const std::vector<float> data = graph_.floats(v);
      if (data.size() != 1) return "constant_value is not a scalar";
      value = data[0];
    }
  }
  const size_t rank = xs.size();
  if (pads.size() != 2 * rank) return "pads does not have 2 x rank values";
  std::vector<int64_t> expected = xs;
  for (size_t d = 0; d < rank; ++d) {
    if (pads[d] < 0 || pads[d + rank] < 0) return "negative pads (cropping) are not supported";
    expected[d] += pads[d] + pads[d + rank];
  }
  if (graph_.shape(y) != expected) return "the output shape is not " + shape_text(expected);
  std::vector<uint64_t> pre(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  std::vector<uint64_t> post(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
  if (rank == 4) {
    pre = {pre[0], pre[2], pre[3], pre[1]};
    post = {post[0], post[2], post[3], post[1]};
  }
  Node& lowered = add(NodeKind::ConstantPad, node, {activation(x)}, {activation(y)});
  lowered.pre_paddings = std::move(pre);
  lowered.post_paddings = std::move(post);
  lowered.padding_value = value;
  return "";
}

std::string Lowering::lower_reshape(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  for (size_t i = 1; i < GraphView::num_inputs(node); ++i) {
    const int32_t extra = GraphView::input(node, i);
    if (extra != -1 && !graph_.is_constant(extra)) return "the shape or axes input is not a constant";
  }
  const std::vector<int64_t> xs = graph_.shape(x), ys = graph_.shape(y);
  const int64_t count = num_elements(xs);
  if (count < 0 || count != num_elements(ys)) return "the element counts differ";
  // A reshape moves no bytes: it is right only where both sides hold their elements in
  // the graph's order, which a 4-D value does when its C or its H x W is 1.
  if (!layout_trivial(xs) || !layout_trivial(ys)) {
    return "reshaping " + shape_text(xs) + " to " + shape_text(ys) + " is not the same in NHWC";
  }
  Node& lowered = add(NodeKind::Reshape, node, {activation(x)}, {activation(y)});
  lowered.new_shape = xnn_dims(ys);
  return "";
}

std::string Lowering::lower_batch_norm(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  if (GraphView::int_attribute(node, "training_mode", 0) != 0) return "training mode is not supported";
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.size() != 4 && xs.size() != 2) return "only 2-D and 4-D inputs are taken";
  if (graph_.shape(y) != xs) return "the output shape differs from the input's";
  const int64_t channels = xs[1];
  std::vector<std::vector<float>> params;
  for (size_t i = 1; i <= 4; ++i) {
    const int32_t p = GraphView::input(node, i);
    if (!graph_.is_constant(p) || !graph_.is_float(p) || graph_.shape(p) != std::vector<int64_t>{channels}) {
      return "scale, bias, mean and variance must be float32 constants of C elements";
    }
    params.push_back(graph_.floats(p));
  }
  const float epsilon = GraphView::float_attribute(node, "epsilon", 1e-5f);
  std::vector<float> scale(static_cast<size_t>(channels)), shift(static_cast<size_t>(channels));
  for (size_t c = 0; c < scale.size(); ++c) {
    scale[c] = params[0][c] / std::sqrt(params[3][c] + epsilon);
    shift[c] = params[1][c] - params[2][c] * scale[c];
  }
  // C is innermost both in NHWC and in [N, C]: per-channel constants of shape [C].
  const uint32_t input = activation(x);
  const uint32_t scaled = add_internal(xnn_dims(xs));
  const uint32_t scale_id = add_static({static_cast<uint64_t>(channels)}, std::move(scale));
  add(NodeKind::Multiply, node, {input, scale_id}, {scaled});
  const uint32_t shift_id = add_static({static_cast<uint64_t>(channels)}, std::move(shift));
  add(NodeKind::Add, node, {scaled, shift_id}, {activation(y)});
  return "";
}

// ---- Quantized: QLinearConv, QLinearMatMul -----------------------------------------------
//
// XNNPACK's quantized convolution and fully connected operators compute ONNX's QLinearConv
// and QLinearMatMul in one form: 8-bit activations of one type with one scale and zero
// point each, int8 weights with zero point 0 (per tensor, or per output channel for the
// convolution with int8 activations) and an int32 bias. They requantize in float32
// (x_scale * w_scale / y_scale, computed in float32, times the accumulator, rounded to
// nearest even), where ONNX's reference and the portable kernel compute in double: the
// results may differ by one output quantum. uint8 activations are int8 inside the
// partition: a uint8 value v with zero point z is the int8 value v - 128 with zero point
// z - 128 (the same real numbers, and the same saturation), which the partition's edges
// convert by flipping the top bit. So uint8 and int8 models alike run on XNNPACK's QS8
// and QC8 (per-channel) operators, whose weights are int8 with zero point 0, as ONNX's
// symmetric ones are. The rest stays on portable.

namespace {

bool is_8bit(ir::DType dtype) { return dtype == ir::DType::UInt8 || dtype == ir::DType::Int8; }

/// The bytes of a constant of `element_size`-byte elements (empty when it is not one).
std::vector<uint8_t> constant_bytes(const GraphView& graph, int32_t value, size_t element_size) {
  if (!graph.is_constant(value)) return {};
  const auto* data = graph.value(value).data();
  const int64_t count = num_elements(graph.shape(value));
  if (data == nullptr || count < 1 || data->size() != static_cast<size_t>(count) * element_size) return {};
  return std::vector<uint8_t>(data->begin(), data->end());
}

/// XNNPACK's limits on a multiplier x_scale * w_scale / y_scale, computed as it does:
/// below 256 (its operators refuse more) and at least 2^-32 (its Arm kernels' fixed-point
/// form asserts that).
bool multiplier_in_range(float x_scale, float w_scale, float y_scale) {
  const float m = x_scale * w_scale / y_scale;
  return std::isfinite(m) && m < 256.0f && m >= 0x1.0p-32f;
}

bool positive_normal(float v) { return v > 0.0f && std::isnormal(v); }

}  // namespace

std::string Lowering::read_quantization(const ir::Node& node, int32_t value, size_t scale, size_t zero_point,
                                        const char* role, Quantization* out) const {
  if (!graph_.valid(value)) return std::string("the ") + role + " is missing";
  if (graph_.is_constant(value)) return std::string("the ") + role + " is a constant";
  const ir::DType dtype = graph_.value(value).dtype();
  if (!is_8bit(dtype)) return std::string("the ") + role + " is not uint8 or int8";
  const std::vector<int64_t> shape = graph_.shape(value);
  if (shape.empty() || shape.size() > XNN_MAX_TENSOR_DIMS)
    return std::string("the ") + role + " has an unsupported rank";
  for (int64_t dim : shape) {
    if (dim < 1 || dim > (std::numeric_limits<int32_t>::max)())
      return std::string("the ") + role + " has an empty dimension";
  }
  out->datatype = blob::DataType::QInt8;
  out->from_uint8 = dtype == ir::DType::UInt8;
  const std::optional<float> s = graph_.scalar(GraphView::input(node, scale));
  if (!s) return std::string("the ") + role + "'s scale is not a float32 constant of one element";
  if (!positive_normal(*s)) return std::string("the ") + role + "'s scale is not a positive normal float";
  out->scale = *s;
  out->zero_point = out->from_uint8 ? -128 : 0;
  const int32_t z = GraphView::input(node, zero_point);
  if (z == -1) return "";
  if (!graph_.is_constant(z) || graph_.value(z).dtype() != dtype || graph_.shape(z).size() > 1) {
    return std::string("the ") + role + "'s zero point is not a constant of its type";
  }
  const std::vector<uint8_t> bytes = constant_bytes(graph_, z, 1);
  if (bytes.size() != 1) return std::string("the ") + role + "'s zero point is not one element";
  out->zero_point = dtype == ir::DType::Int8 ? static_cast<int32_t>(static_cast<int8_t>(bytes[0])) : bytes[0] - 128;
  return "";
}

std::string Lowering::read_weight_scales(const ir::Node& node, int64_t channels, const Quantization& x,
                                         const Quantization& y, std::vector<float>* scales) const {
  const int32_t w = GraphView::input(node, 3), ws = GraphView::input(node, 4), wz = GraphView::input(node, 5);
  if (!graph_.is_constant(w) || graph_.value(w).dtype() != ir::DType::Int8) {
    return "the weights are not an int8 constant (XNNPACK's quantized operators take int8 weights only)";
  }
  const std::vector<int64_t> scale_shape = graph_.shape(ws);
  *scales = graph_.is_constant(ws) && graph_.is_float(ws) ? graph_.floats(ws) : std::vector<float>{};
  const bool per_channel = scale_shape.size() == 1 && scale_shape[0] == channels && channels > 1;
  if (scales->empty() || scale_shape.size() > 1 || !(scales->size() == 1 || per_channel)) {
    return "the weights' scale is not a float32 constant of one or " + std::to_string(channels) + " elements";
  }
  if (wz != -1) {
    if (!graph_.is_constant(wz) || graph_.value(wz).dtype() != ir::DType::Int8) {
      return "the weights' zero point is not an int8 constant";
    }
    const std::vector<uint8_t> bytes = constant_bytes(graph_, wz, 1);
    if (bytes.empty()) return "the weights' zero point has no data";
    for (uint8_t v : bytes) {
      if (v != 0) return "the weights' zero point is not 0 (XNNPACK takes symmetric int8 weights only)";
    }
  }
  for (float s : *scales) {
    if (!positive_normal(s)) return "a weight scale is not a positive normal float";
    if (!multiplier_in_range(x.scale, s, y.scale)) {
      return "a requantization multiplier x_scale * w_scale / y_scale is outside XNNPACK's range [2^-32, 256)";
    }
    // The bias's scale, which XNNPACK checks like any other.
    if (!positive_normal(x.scale * s)) return "x_scale * w_scale is not a normal float";
  }
  return "";
}

std::string Lowering::quantized_activation(int32_t value, const Quantization& q, uint32_t* tensor) {
  auto found = value_tensor_.find(value);
  if (found != value_tensor_.end()) {
    const Tensor& t = tensors_[found->second];
    const float graph_scale = t.graph_scale != 0 ? t.graph_scale : t.scale;
    if (t.datatype != q.datatype || graph_scale != q.scale || t.zero_point != q.zero_point ||
        t.from_uint8 != q.from_uint8) {
      return "a value is read or written with another scale or zero point than the node before gave it "
             "(an XNNPACK value has one)";
    }
    *tensor = found->second;
    return "";
  }
  *tensor = activation(value);
  Tensor& t = tensors_[*tensor];
  t.datatype = q.datatype;
  t.scale = q.scale;
  t.zero_point = q.zero_point;
  t.from_uint8 = q.from_uint8;
  return "";
}

uint32_t Lowering::add_quantized_static(std::vector<uint64_t> dims, blob::DataType datatype, float scale,
                                        int32_t zero_point, std::vector<float> channel_scales,
                                        std::vector<uint8_t> bytes) {
  Tensor tensor;
  tensor.dims = std::move(dims);
  tensor.is_static = true;
  tensor.datatype = datatype;
  tensor.scale = scale;
  tensor.zero_point = zero_point;
  tensor.channel_scales = std::move(channel_scales);
  tensor.bytes = std::move(bytes);
  tensors_.push_back(std::move(tensor));
  return static_cast<uint32_t>(tensors_.size() - 1);
}

namespace {

/// The weights' and the bias's tensor types for one weight scale (QS8) or one per output
/// channel (QC8).
struct QuantizedWeights {
  blob::DataType weights, bias;
  float weight_scale = 0, bias_scale = 0;
  std::vector<float> weight_channel_scales, bias_channel_scales;
};

QuantizedWeights quantized_weights(const std::vector<float>& scales, float x_scale) {
  QuantizedWeights q;
  if (scales.size() > 1) {
    q.weights = blob::DataType::QCInt8;
    q.bias = blob::DataType::QCInt32;
    q.weight_channel_scales = scales;
    for (float s : scales) q.bias_channel_scales.push_back(x_scale * s);
    return q;
  }
  q.weight_scale = scales[0];
  q.bias_scale = x_scale * scales[0];
  q.bias = blob::DataType::QInt32;
  q.weights = blob::DataType::QInt8;
  return q;
}

}  // namespace

std::string Lowering::lower_qlinear_conv(const ir::Node& node) {
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  const int32_t x = GraphView::input(node, 0), w = GraphView::input(node, 3), b = GraphView::input(node, 8);
  const int32_t y = GraphView::output(node, 0);
  Quantization xq, yq;
  if (std::string why = read_quantization(node, x, 1, 2, "input", &xq); !why.empty()) return why;
  if (std::string why = read_quantization(node, y, 6, 7, "output", &yq); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.size() != 4) return "only 2-D convolution (a 4-D input) is taken";
  if (!graph_.valid(w) || graph_.shape(w).size() != 4) return "the weights are not 4-D";
  const std::vector<int64_t> ws = graph_.shape(w);
  int64_t group = 1;
  Window window;
  if (std::string why = conv_geometry(node, xs, ws, graph_.shape(y), &group, &window); !why.empty()) return why;
  const int64_t out_channels = ws[0], group_in = ws[1], kh = ws[2], kw = ws[3];
  std::vector<float> scales;
  if (std::string why = read_weight_scales(node, out_channels, xq, yq, &scales); !why.empty()) return why;
  std::vector<uint8_t> bias(static_cast<size_t>(out_channels) * 4, 0);
  if (b != -1) {
    bias = constant_bytes(graph_, b, 4);
    if (graph_.value(b).dtype() != ir::DType::Int32 || graph_.shape(b) != std::vector<int64_t>{out_channels} ||
        bias.empty()) {
      return "the bias is not an int32 constant of " + std::to_string(out_channels) + " elements";
    }
  }
  std::vector<uint8_t> weights = constant_bytes(graph_, w, 1);
  if (weights.empty()) return "the weights' data does not match their shape";
  weights = oihw_to_ohwi(weights, out_channels, group_in, kh, kw);
  uint32_t input = 0, output = 0;
  if (std::string why = quantized_activation(x, xq, &input); !why.empty()) return why;
  if (std::string why = fold_unit_input(input, yq, &xq, &scales); !why.empty()) return why;
  QuantizedWeights q = quantized_weights(scales, xq.scale);
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  const uint32_t filter_id =
      add_quantized_static({u(out_channels), u(kh), u(kw), u(group_in)}, q.weights, q.weight_scale, 0,
                           std::move(q.weight_channel_scales), std::move(weights));
  const uint32_t bias_id =
      add_quantized_static({u(out_channels)}, q.bias, q.bias_scale, 0, std::move(q.bias_channel_scales), bias);
  if (std::string why = quantized_activation(y, yq, &output); !why.empty()) return why;
  // Every group count on the convolution node: XNNPACK picks its depthwise kernels
  // itself where each group has one input and one output channel.
  Node& lowered = add(NodeKind::Convolution2d, node, {input, filter_id, bias_id}, {output});
  lowered.padding = u32({window.top, window.right, window.bottom, window.left});
  lowered.kernel = u32({kh, kw});
  lowered.strides = u32({window.sh, window.sw});
  lowered.dilations = u32({window.dh, window.dw});
  lowered.groups = static_cast<uint32_t>(group);
  lowered.group_input_channels = u(group_in);
  lowered.group_output_channels = u(out_channels / group);
  return "";
}

std::string Lowering::lower_qlinear_matmul(const ir::Node& node) {
  // a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
  const int32_t a = GraphView::input(node, 0), b = GraphView::input(node, 3), y = GraphView::output(node, 0);
  Quantization aq, yq;
  if (std::string why = read_quantization(node, a, 1, 2, "input A", &aq); !why.empty()) return why;
  if (std::string why = read_quantization(node, y, 6, 7, "output", &yq); !why.empty()) return why;
  const std::vector<int64_t> as = graph_.shape(a);
  if (!graph_.valid(b) || graph_.shape(b).size() != 2) return "B is not 2-D";
  const std::vector<int64_t> bs = graph_.shape(b);
  // A 4-D A would be NHWC inside the partition.
  if (as.size() < 2 || as.size() == 4) return "A has rank " + std::to_string(as.size()) + " (2, 3, 5 or 6 are taken)";
  if (as.back() != bs[0]) return "A and B do not agree on K";
  std::vector<int64_t> expected = as;
  expected.back() = bs[1];
  if (graph_.shape(y) != expected) return "the output shape is not " + shape_text(expected);
  std::vector<float> scales;
  if (std::string why = read_weight_scales(node, bs[1], aq, yq, &scales); !why.empty()) return why;
  std::vector<uint8_t> bytes = constant_bytes(graph_, b, 1);
  if (bytes.empty()) return "B's data does not match its shape";
  const int64_t k = bs[0], n = bs[1];
  std::vector<uint8_t> weights(bytes.size());  // [K, N] -> [N, K]
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) weights[static_cast<size_t>(j * k + i)] = bytes[static_cast<size_t>(i * n + j)];
  uint32_t input = 0, output = 0;
  if (std::string why = quantized_activation(a, aq, &input); !why.empty()) return why;
  if (std::string why = fold_unit_input(input, yq, &aq, &scales); !why.empty()) return why;
  QuantizedWeights q = quantized_weights(scales, aq.scale);
  const uint64_t rows = static_cast<uint64_t>(num_elements(as) / k), un = static_cast<uint64_t>(n);
  const uint64_t uk = static_cast<uint64_t>(k);
  const bool per_column = scales.size() > 1;
  // XNNPACK's quantized fully connected has one weight scale; its per-channel (QC8)
  // kernels are convolutions. So with per-column scales A's rows are the batch of a 1x1
  // convolution: [rows, 1, 1, K] and [rows, 1, 1, N] hold A's and Y's bytes as they are.
  const uint32_t filter_id =
      add_quantized_static(per_column ? std::vector<uint64_t>{un, 1, 1, uk} : std::vector<uint64_t>{un, uk}, q.weights,
                           q.weight_scale, 0, std::move(q.weight_channel_scales), std::move(weights));
  const uint32_t bias_id = add_quantized_static({un}, q.bias, q.bias_scale, 0, std::move(q.bias_channel_scales),
                                                std::vector<uint8_t>(static_cast<size_t>(n) * 4, 0));
  if (std::string why = quantized_activation(y, yq, &output); !why.empty()) return why;
  if (!per_column) {
    add(NodeKind::FullyConnected, node, {input, filter_id, bias_id}, {output});
    return "";
  }
  const uint32_t rows_in = add_internal_like(input, {rows, 1, 1, uk});
  add(NodeKind::Reshape, node, {input}, {rows_in}).new_shape = tensors_[rows_in].dims;
  const uint32_t rows_out = add_internal_like(output, {rows, 1, 1, un});
  Node& conv = add(NodeKind::Convolution2d, node, {rows_in, filter_id, bias_id}, {rows_out});
  conv.padding = {0, 0, 0, 0};
  conv.kernel = conv.strides = conv.dilations = {1, 1};
  conv.groups = 1;
  conv.group_input_channels = uk;
  conv.group_output_channels = un;
  add(NodeKind::Reshape, node, {rows_out}, {output}).new_shape = tensors_[output].dims;
  return "";
}

uint32_t Lowering::add_internal_like(uint32_t like, std::vector<uint64_t> dims) {
  Tensor tensor = tensors_[like];
  tensor.dims = std::move(dims);
  tensors_.push_back(std::move(tensor));
  return static_cast<uint32_t>(tensors_.size() - 1);
}

// ---- QuantizeLinear, DequantizeLinear ------------------------------------------------------
//
// XNNPACK's convert quantizes by multiplying by the reciprocal of the scale, so a value
// within rounding of a half of x / scale may round to the other neighbour of ONNX's
// result. A QuantizeLinear is therefore a Divide by the scale (ONNX's quotient, exactly)
// and a convert at scale 1: its output tensor holds ONNX's bytes at scale 1 and keeps
// the graph's scale beside (Tensor::graph_scale), which its readers fold in:
// - a DequantizeLinear converts to exact integers, (q - zero point), and multiplies by
//   the scale: ONNX's one rounding;
// - a QLinearConv or QLinearMatMul takes x_scale * w_scale as its weights' scale, so
//   XNNPACK's multiplier, input scale * weight scale / output scale, is 1 * (x_scale *
//   w_scale) / y_scale: the same float32 value as with the input at its own scale.
// Dequantizing any other 8-bit value is XNNPACK's convert alone, (q - zero point) * scale
// in float32: ONNX's product. Scales are per tensor (XNNPACK's converts have one).

std::string Lowering::lower_quantize_linear(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(x, "input"); !why.empty()) return why;
  Quantization yq;
  if (std::string why = read_quantization(node, y, 1, 2, "output", &yq); !why.empty()) return why;
  if (graph_.shape(y) != graph_.shape(x)) return "the output shape differs from the input's";
  const uint32_t quotient = add_internal(xnn_dims(graph_.shape(x)));
  // Clamped from below, so that a NaN quotient becomes the lowest float (x86's max takes
  // its second operand then) and saturates low, as on portable.
  add(NodeKind::Divide, node, {activation(x), add_static({1}, {yq.scale})}, {quotient}).output_min =
      std::numeric_limits<float>::lowest();
  const float graph_scale = yq.scale;
  yq.scale = 1.0f;
  uint32_t output = 0;
  if (std::string why = quantized_activation(y, yq, &output); !why.empty()) return why;
  tensors_[output].graph_scale = graph_scale;
  add(NodeKind::Convert, node, {quotient}, {output});
  return "";
}

std::string Lowering::lower_dequantize_linear(const ir::Node& node) {
  const int32_t x = GraphView::input(node, 0), y = GraphView::output(node, 0);
  if (std::string why = check_activation(y, "output"); !why.empty()) return why;
  Quantization xq;
  if (std::string why = read_quantization(node, x, 1, 2, "input", &xq); !why.empty()) return why;
  if (graph_.shape(y) != graph_.shape(x)) return "the output shape differs from the input's";
  uint32_t input = 0;
  if (std::string why = quantized_activation(x, xq, &input); !why.empty()) return why;
  const float graph_scale = tensors_[input].graph_scale;
  if (graph_scale == 0) {
    add(NodeKind::Convert, node, {input}, {activation(y)});
    return "";
  }
  const uint32_t integers = add_internal(xnn_dims(graph_.shape(x)));
  add(NodeKind::Convert, node, {input}, {integers});
  add(NodeKind::Multiply, node, {integers, add_static({1}, {graph_scale})}, {activation(y)});
  return "";
}

std::string Lowering::fold_unit_input(uint32_t input, const Quantization& y, Quantization* x,
                                      std::vector<float>* weight_scales) const {
  const float graph_scale = tensors_[input].graph_scale;
  if (graph_scale == 0) return "";
  for (float& scale : *weight_scales) {
    scale = graph_scale * scale;  // x_scale * w_scale, the first product of the multiplier
    if (!positive_normal(scale)) return "x_scale * w_scale is not a normal float";
    if (!multiplier_in_range(1.0f, scale, y.scale)) {
      return "a requantization multiplier x_scale * w_scale / y_scale is outside XNNPACK's range [2^-32, 256)";
    }
  }
  x->scale = 1.0f;
  return "";
}

// ---- The blob ---------------------------------------------------------------------------------

std::vector<uint8_t> Lowering::finish(std::string* error) {
  const ir::Graph& graph = graph_.graph();
  flatbuffers::FlatBufferBuilder builder(1024 + 4 * tensors_.size());
  std::vector<int32_t> external_input(tensors_.size(), -1), external_output(tensors_.size(), -1);
  std::vector<std::vector<int64_t>> host_dims(tensors_.size());
  std::vector<uint32_t> inputs, outputs;
  auto mark = [&](const flatbuffers::Vector<int32_t>* list, bool is_input) -> bool {
    if (list == nullptr) return true;
    for (flatbuffers::uoffset_t k = 0; k < list->size(); ++k) {
      const int32_t value = list->Get(k);
      auto found = value_tensor_.find(value);
      if (found == value_tensor_.end()) {
        *error = std::string("graph ") + (is_input ? "input" : "output") + " " + std::to_string(k) +
                 " is not read or written by any lowered node";
        return false;
      }
      const uint32_t t = found->second;
      if (external_input[t] != -1 || external_output[t] != -1) {
        *error = "value " + std::to_string(value) + " is listed twice among the graph's inputs and outputs";
        return false;
      }
      (is_input ? external_input : external_output)[t] = static_cast<int32_t>(k);
      host_dims[t] = graph_.shape(value);
      (is_input ? inputs : outputs).push_back(t);
    }
    return true;
  };
  if (!mark(graph.inputs(), true) || !mark(graph.outputs(), false)) return {};
  if (outputs.empty() || nodes_.empty()) {
    *error = "the partition has no nodes or no outputs";
    return {};
  }

  std::vector<flatbuffers::Offset<blob::Tensor>> tensors;
  for (size_t t = 0; t < tensors_.size(); ++t) {
    const Tensor& tensor = tensors_[t];
    auto dims = builder.CreateVector(tensor.dims);
    const bool quantized = tensor.datatype != blob::DataType::Float32;
    flatbuffers::Offset<flatbuffers::Vector<float>> data, channel_scales;
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> quantized_data;
    if (tensor.is_static && !quantized) {
      builder.ForceVectorAlignment(tensor.data.size(), sizeof(float), 16);
      data = builder.CreateVector(tensor.data);
    }
    if (tensor.is_static && quantized) {  // int32 biases are read in place: aligned
      builder.ForceVectorAlignment(tensor.bytes.size(), 1, 16);
      quantized_data = builder.CreateVector(tensor.bytes);
    }
    if (!tensor.channel_scales.empty()) channel_scales = builder.CreateVector(tensor.channel_scales);
    flatbuffers::Offset<flatbuffers::Vector<int64_t>> host;
    const bool external = external_input[t] != -1 || external_output[t] != -1;
    if (external) host = builder.CreateVector(host_dims[t]);
    blob::TensorBuilder tb(builder);
    tb.add_dims(dims);
    if (tensor.is_static && !quantized) tb.add_data(data);
    if (quantized) {
      tb.add_datatype(tensor.datatype);
      tb.add_scale(tensor.scale);
      tb.add_zero_point(tensor.zero_point);
      if (tensor.is_static) tb.add_quantized_data(quantized_data);
      if (!tensor.channel_scales.empty()) tb.add_channel_scales(channel_scales);
      tb.add_channel_dim(tensor.channel_dim);
      if (external) tb.add_host_uint8(tensor.from_uint8);
    }
    tb.add_external_input(external_input[t]);
    tb.add_external_output(external_output[t]);
    if (external) {
      tb.add_host_dims(host);
      tb.add_transpose_at_edge(!layout_trivial(host_dims[t]));
    }
    tensors.push_back(tb.Finish());
  }
  std::vector<flatbuffers::Offset<blob::Node>> nodes;
  for (const Node& node : nodes_) {
    auto in = builder.CreateVector(node.inputs);
    auto out = builder.CreateVector(node.outputs);
    auto padding = builder.CreateVector(node.padding);
    auto kernel = builder.CreateVector(node.kernel);
    auto strides = builder.CreateVector(node.strides);
    auto dilations = builder.CreateVector(node.dilations);
    auto adjustment = builder.CreateVector(node.adjustment);
    auto pre = builder.CreateVector(node.pre_paddings);
    auto post = builder.CreateVector(node.post_paddings);
    auto shape = builder.CreateVector(node.new_shape);
    auto name = builder.CreateString(node.name);
    blob::NodeBuilder nb(builder);
    nb.add_kind(node.kind);
    nb.add_inputs(in);
    nb.add_outputs(out);
    nb.add_padding(padding);
    nb.add_kernel(kernel);
    nb.add_strides(strides);
    nb.add_dilations(dilations);
    nb.add_groups(node.groups);
    nb.add_group_input_channels(node.group_input_channels);
    nb.add_group_output_channels(node.group_output_channels);
    nb.add_depth_multiplier(node.depth_multiplier);
    nb.add_output_min(node.output_min);
    nb.add_output_max(node.output_max);
    nb.add_alpha(node.alpha);
    nb.add_pre_paddings(pre);
    nb.add_post_paddings(post);
    nb.add_padding_value(node.padding_value);
    nb.add_new_shape(shape);
    nb.add_name(name);
    if (!node.adjustment.empty()) nb.add_adjustment(adjustment);
    nodes.push_back(nb.Finish());
  }
  auto tensor_vector = builder.CreateVector(tensors);
  auto node_vector = builder.CreateVector(nodes);
  auto input_vector = builder.CreateVector(inputs);
  auto output_vector = builder.CreateVector(outputs);
  builder.Finish(blob::CreateBlob(builder, tensor_vector, node_vector, input_vector, output_vector),
                 blob::BlobIdentifier());

  std::vector<uint8_t> out(kBlobHeaderSize + builder.GetSize());
  kBlobFormat.write_header(out.data());
  std::memcpy(out.data() + kBlobHeaderSize, builder.GetBufferPointer(), builder.GetSize());
  return out;
}

}  // namespace plugrt::xnnpack
