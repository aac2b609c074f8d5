// SPDX-License-Identifier: Apache-2.0
// Dimensions that vary at import: the symbol table and plugrt's shape rules over
// expressions. See onnx_symbolic.h.
#include "onnx_symbolic.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>

namespace plugrt::compiler::onnx_import {

namespace {

using common::DimExpr;
using common::DimOp;

/// Constants beyond this are clamped like "to the end" (Slice's INT64_MAX).
constexpr int64_t kLargeIndex = int64_t{1} << 50;
/// Shape values longer than this are not followed (a shape has at most a few elements).
constexpr size_t kMaxShapeValueLength = 64;

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const char* name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t int_attribute(const onnx::NodeProto& node, const char* name, int64_t otherwise) {
  const onnx::AttributeProto* a = attribute(node, name);
  return a != nullptr && a->type() == onnx::AttributeProto::INT ? a->i() : otherwise;
}

std::vector<int64_t> ints_attribute(const onnx::NodeProto& node, const char* name) {
  const onnx::AttributeProto* a = attribute(node, name);
  if (a == nullptr || a->type() != onnx::AttributeProto::INTS) return {};
  return {a->ints().begin(), a->ints().end()};
}

std::string string_attribute(const onnx::NodeProto& node, const char* name) {
  const onnx::AttributeProto* a = attribute(node, name);
  return a != nullptr && a->type() == onnx::AttributeProto::STRING ? a->s() : std::string();
}

DimExpr constant(int64_t value) {
  return DimExpr::constant(std::clamp(value, -common::kMaxDimConstant, common::kMaxDimConstant));
}

bool is(const DimExpr& e, int64_t value) { return e.is_constant() && e.constant_value() == value; }

/// a + c, written a - |c| for a negative c.
DimExpr plus(const DimExpr& a, int64_t c) { return c < 0 ? a - constant(-c) : a + constant(c); }

bool range_of(const DimExpr& e, const std::vector<common::DimRange>& ranges, common::DimRange* range) {
  return common::check_dim_expr(e.words().data(), e.words().size(), ranges.size()).empty() &&
         common::dim_expr_range(e.words().data(), e.words().size(), ranges.data(), range);
}

/// min(a, b) and max(a, b), reduced to one side when the symbols' ranges decide it.
DimExpr smaller(const DimExpr& a, const DimExpr& b, const std::vector<common::DimRange>& ranges) {
  common::DimRange ra, rb;
  if (range_of(a, ranges, &ra) && range_of(b, ranges, &rb)) {
    if (ra.max <= rb.min) return a;
    if (rb.max <= ra.min) return b;
  }
  return common::min(a, b);
}
DimExpr larger(const DimExpr& a, const DimExpr& b, const std::vector<common::DimRange>& ranges) {
  common::DimRange ra, rb;
  if (range_of(a, ranges, &ra) && range_of(b, ranges, &rb)) {
    if (ra.min >= rb.max) return a;
    if (rb.min >= ra.max) return b;
  }
  return common::max(a, b);
}

/// The integers of a constant int64 or int32 tensor of rank 0 or 1.
bool constant_ints(const Tensor& tensor, std::vector<int64_t>* values) {
  return tensor_ints(tensor, values) && values->size() <= kMaxShapeValueLength;
}

/// An operand's integers as expressions: a shape value's elements, or a small integer
/// constant's values.
bool int_elements(const Operand& operand, std::vector<DimExpr>* elements) {
  if (operand.elements != nullptr) {
    *elements = *operand.elements;
    return true;
  }
  std::vector<int64_t> values;
  if (operand.constant == nullptr || !constant_ints(*operand.constant, &values)) return false;
  elements->clear();
  for (int64_t v : values) elements->push_back(constant(v));
  return true;
}

bool input_ints(const std::vector<Operand>& inputs, size_t k, std::vector<int64_t>* values) {
  return k < inputs.size() && inputs[k].constant != nullptr && constant_ints(*inputs[k].constant, values);
}

/// The floats of a constant float32 tensor of rank 1.
bool constant_floats(const Tensor& tensor, std::vector<float>* values) {
  if (tensor.shape.size() != 1 || tensor.dtype != DType::kFloat32) return false;
  values->resize(tensor.bytes.size() / sizeof(float));
  if (!values->empty()) std::memcpy(values->data(), tensor.bytes.data(), values->size() * sizeof(float));
  return values->size() <= kMaxShapeValueLength;
}

/// floor(d * scale) exactly, for a scale that is a multiple of 1/8 (2, 0.5, 1.5...).
bool scaled_dim(const DimExpr& d, float scale, DimExpr* out) {
  const double eighths = static_cast<double>(scale) * 8;
  if (!(scale > 0) || eighths != std::floor(eighths) || eighths > 8 * 1024) return false;
  const auto numerator = static_cast<int64_t>(eighths);
  const int64_t divisor = std::gcd(numerator, int64_t{8});
  *out = floor_div(d * constant(numerator / divisor), constant(8 / divisor));
  return true;
}

/// Resize (opset 10+: X, roi, scales, sizes; opset 10: X, scales) and Upsample: the target
/// sizes when given, else each dimension times its scale, rounded down.
bool resized_dims(const onnx::NodeProto& node, int64_t opset, const std::vector<Operand>& inputs,
                  const std::vector<DimExpr>& data, std::vector<DimExpr>* dims) {
  if (attribute(node, "axes") != nullptr) return false;
  const size_t scales_input = node.op_type() == "Resize" && opset >= 11 ? 2 : 1;
  if (node.op_type() == "Resize" && opset >= 11 && inputs.size() > 3 && inputs[3].type != nullptr) {
    return int_elements(inputs[3], dims) && dims->size() == data.size();
  }
  std::vector<float> scales;
  if (const onnx::AttributeProto* given = attribute(node, "scales"); given != nullptr) {
    scales.assign(given->floats().begin(), given->floats().end());
  } else if (scales_input >= inputs.size() || inputs[scales_input].constant == nullptr ||
             !constant_floats(*inputs[scales_input].constant, &scales)) {
    return false;
  }
  if (scales.size() != data.size()) return false;
  dims->resize(data.size());
  for (size_t k = 0; k < data.size(); ++k) {
    if (!scaled_dim(data[k], scales[k], &(*dims)[k])) return false;
  }
  return true;
}

/// ConvTranspose without output_shape: stride * (length - 1) + output_padding +
/// (kernel - 1) * dilation + 1 - pads per spatial axis (auto_pad SAME_*: length * stride).
bool transposed_dims(const onnx::NodeProto& node, const std::vector<DimExpr>& data, const std::vector<DimExpr>& weights,
                     std::vector<DimExpr>* dims) {
  if (data.size() < 3 || attribute(node, "output_shape") != nullptr || weights.size() != data.size() ||
      !weights[1].is_constant()) {
    return false;
  }
  const size_t spatial = data.size() - 2;
  std::vector<int64_t> kernel = ints_attribute(node, "kernel_shape"), strides = ints_attribute(node, "strides"),
                       dilations = ints_attribute(node, "dilations"), pads = ints_attribute(node, "pads"),
                       output_padding = ints_attribute(node, "output_padding");
  for (size_t k = 2; kernel.size() < spatial && k < weights.size(); ++k) {
    if (!weights[k].is_constant()) return false;
    kernel.push_back(weights[k].constant_value());
  }
  strides.resize(spatial, 1);
  dilations.resize(spatial, 1);
  pads.resize(2 * spatial, 0);
  output_padding.resize(spatial, 0);
  if (kernel.size() != spatial) return false;
  const std::string auto_pad = string_attribute(node, "auto_pad");
  *dims = {data[0], constant(weights[1].constant_value() * int_attribute(node, "group", 1))};
  for (size_t k = 0; k < spatial; ++k) {
    if (strides[k] < 1 || dilations[k] < 1) return false;
    const DimExpr stretched = data[2 + k] * constant(strides[k]);
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      dims->push_back(stretched);
      continue;
    }
    const int64_t padding = auto_pad == "VALID" ? 0 : pads[k] + pads[k + spatial];
    dims->push_back(plus(stretched, output_padding[k] + (kernel[k] - 1) * dilations[k] + 1 - strides[k] - padding));
  }
  return true;
}

/// Splits an expression whose last op is `op` into its two operands.
bool split(const DimExpr& e, DimOp op, DimExpr* a, DimExpr* b) {
  const std::vector<int64_t>& words = e.words();
  if (words.size() < 3 || common::dim_word_op(words.back()) != op) return false;
  // Walk back from the word before the op until one complete operand is found.
  size_t start = words.size() - 1;
  int needed = 1;
  while (needed > 0 && start > 0) {
    --start;
    const DimOp word = common::dim_word_op(words[start]);
    needed += (word == DimOp::kConstant || word == DimOp::kSymbol) ? -1 : 1;
  }
  if (needed != 0 || start == 0) return false;
  *a = DimExpr::from_words({words.begin(), words.begin() + static_cast<std::ptrdiff_t>(start)});
  *b = DimExpr::from_words({words.begin() + static_cast<std::ptrdiff_t>(start), words.end() - 1});
  return true;
}

/// A product as its constant part and its other factors.
void factors(const DimExpr& e, int64_t* constant_part, std::vector<DimExpr>* others) {
  DimExpr a, b;
  if (split(e, DimOp::kMul, &a, &b)) {
    factors(a, constant_part, others);
    factors(b, constant_part, others);
  } else if (e.is_constant()) {
    *constant_part *= e.constant_value();
  } else {
    others->push_back(e);
  }
}

DimExpr product(const std::vector<DimExpr>& dims) {
  DimExpr result = DimExpr::constant(1);
  for (const DimExpr& d : dims) result = result * d;
  return result;
}

/// total / known, cancelling the factors they share (Reshape's -1: the quotient is
/// exact, and the cancelled form keeps its range tight).
DimExpr quotient(const DimExpr& total, const DimExpr& known) {
  int64_t top = 1, bottom = 1;
  std::vector<DimExpr> numerator, denominator;
  factors(total, &top, &numerator);
  factors(known, &bottom, &denominator);
  for (auto it = denominator.begin(); it != denominator.end();) {
    auto match = std::find(numerator.begin(), numerator.end(), *it);
    if (match == numerator.end()) {
      ++it;
      continue;
    }
    numerator.erase(match);
    it = denominator.erase(it);
  }
  if (bottom != 0 && top % bottom == 0) {
    top /= bottom;
    bottom = 1;
  }
  return floor_div(constant(top) * product(numerator), constant(bottom) * product(denominator));
}

/// Right-aligned broadcasting of several shapes.
std::vector<DimExpr> broadcast(const std::vector<std::vector<DimExpr>>& shapes) {
  size_t rank = 0;
  for (const auto& shape : shapes) rank = std::max(rank, shape.size());
  std::vector<DimExpr> result(rank, DimExpr::constant(1));
  for (const auto& shape : shapes) {
    for (size_t k = 0; k < shape.size(); ++k) {
      DimExpr& out = result[rank - shape.size() + k];
      const DimExpr& d = shape[k];
      if (is(d, 1) || d == out) continue;
      out = is(out, 1) ? d : common::max(out, d);  // equal when valid, or one of them 1
    }
  }
  return result;
}

/// The length of a Python-style slice of one axis of length `length`.
DimExpr slice_length(const DimExpr& length, int64_t start, int64_t end, int64_t step,
                     const std::vector<common::DimRange>& ranges) {
  auto clamp_index = [&](int64_t index, int64_t low) {
    // low: 0 for a forward slice (indices in [0, L]), -1 backward ([-1, L - 1]).
    if (index >= kLargeIndex) return plus(length, low);
    if (index <= -kLargeIndex) return constant(low);
    if (index < 0) return larger(plus(length, index), constant(low), ranges);
    return smaller(constant(index), plus(length, low), ranges);
  };
  const DimExpr s = clamp_index(start, step > 0 ? 0 : -1), e = clamp_index(end, step > 0 ? 0 : -1);
  const DimExpr span = step > 0 ? e - s : s - e;
  return ceil_div(larger(span, constant(0), ranges), constant(step > 0 ? step : -step));
}

bool is_broadcasting(const std::string& op) {
  static const char* const kOps[] = {
      "Add", "Sub", "Mul", "Div",   "Pow", "Mod", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual",
      "And", "Or",  "Xor", "Where", "Max", "Min", "Sum",   "Mean", "PRelu",       "BitShift"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

}  // namespace

void SymbolicDims::add_symbol(const std::string& name, int64_t min, int64_t max) {
  by_text_[name] = DimExpr::symbol(names_.size());
  names_.push_back(name);
  ranges_.push_back({min, max});
}

bool SymbolicDims::dims_of(const ValueType& type, std::vector<DimExpr>* dims) const {
  if (!type.known || !type.has_shape) return false;
  dims->clear();
  for (size_t k = 0; k < type.dims.size(); ++k) {
    if (type.dims[k] >= 0) {
      dims->push_back(constant(type.dims[k]));
      continue;
    }
    auto it = by_text_.find(type.dim_names[k]);
    if (it == by_text_.end()) return false;
    dims->push_back(it->second);
  }
  return true;
}

void SymbolicDims::set_dims(const std::vector<DimExpr>& dims, onnx::TypeProto* type) {
  onnx::TensorShapeProto* shape = type->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (const DimExpr& d : dims) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (d.is_constant()) {
      dim->set_dim_value(d.constant_value());
      continue;
    }
    const std::string text = describe(d);
    by_text_.emplace(text, d);
    dim->set_dim_param(text);
  }
}

bool SymbolicDims::knows(const onnx::TensorShapeProto::Dimension& dim) const {
  return dim.has_dim_value() || (dim.has_dim_param() && by_text_.count(dim.dim_param()) != 0);
}

void SymbolicDims::infer(const onnx::NodeProto& node, int64_t opset, const std::vector<Operand>& inputs,
                         std::vector<onnx::TypeProto>* outputs, std::vector<std::vector<DimExpr>>* values) {
  values->assign(outputs->size(), {});
  if (outputs->size() == 1 && !shape_value(node, opset, inputs, *this, &values->front())) values->front().clear();
  if (outputs->empty()) return;
  onnx::TypeProto& output = outputs->front();
  if (output.value_case() != onnx::TypeProto::kTensorType || output.tensor_type().elem_type() == 0) return;
  const onnx::TensorShapeProto& shape = output.tensor_type().shape();
  const bool complete = output.tensor_type().has_shape() &&
                        std::all_of(shape.dim().begin(), shape.dim().end(),
                                    [this](const onnx::TensorShapeProto::Dimension& d) { return knows(d); });
  if (complete) return;
  std::vector<DimExpr> dims;
  if (!output_dims(node, opset, inputs, &dims)) return;
  if (output.tensor_type().has_shape() && static_cast<size_t>(shape.dim_size()) == dims.size()) {
    for (size_t k = 0; k < dims.size(); ++k) {  // keep what ONNX knows
      const onnx::TensorShapeProto::Dimension& d = shape.dim(static_cast<int>(k));
      if (d.has_dim_value()) dims[k] = constant(d.dim_value());
    }
  }
  set_dims(dims, &output);
}

/// The first output's dimensions by plugrt's rules, for the ops whose dimensions ONNX's
/// inference loses when they vary.
bool SymbolicDims::output_dims(const onnx::NodeProto& node, int64_t opset, const std::vector<Operand>& inputs,
                               std::vector<DimExpr>* dims) const {
  const std::string& op = node.op_type();
  auto input_dims = [&](size_t k, std::vector<DimExpr>* out) {
    return k < inputs.size() && inputs[k].type != nullptr && dims_of(*inputs[k].type, out);
  };
  std::vector<DimExpr> data;
  if (op == "Reshape") {
    std::vector<DimExpr> target;
    if (!input_dims(0, &data) || inputs.size() < 2 || !int_elements(inputs[1], &target)) return false;
    const bool allow_zero = int_attribute(node, "allowzero", 0) != 0;
    int64_t inferred = -1;
    for (size_t k = 0; k < target.size(); ++k) {
      if (is(target[k], 0) && !allow_zero) {
        if (k >= data.size()) return false;
        target[k] = data[k];
      } else if (is(target[k], -1)) {
        if (inferred >= 0) return false;
        inferred = static_cast<int64_t>(k);
      }
    }
    if (inferred >= 0) {
      std::vector<DimExpr> others = target;
      others.erase(others.begin() + inferred);
      target[static_cast<size_t>(inferred)] = quotient(product(data), product(others));
    }
    *dims = std::move(target);
    return true;
  }
  if (op == "Expand") {
    std::vector<DimExpr> target;
    if (!input_dims(0, &data) || inputs.size() < 2 || !int_elements(inputs[1], &target)) return false;
    *dims = broadcast({data, target});
    return true;
  }
  if (op == "ConstantOfShape") return !inputs.empty() && int_elements(inputs[0], dims);
  if (op == "Range") {
    // max(ceil((limit - start) / delta), 0) elements: the bounds integers, constants or
    // shape values (torch.arange(x.shape[1]) exports Range(0, Shape -> Gather, 1)), the
    // step a non-zero constant.
    std::vector<DimExpr> start, limit;
    std::vector<int64_t> delta;
    if (inputs.size() != 3 || !int_elements(inputs[0], &start) || !int_elements(inputs[1], &limit) ||
        !input_ints(inputs, 2, &delta) || start.size() != 1 || limit.size() != 1 || delta.size() != 1 ||
        delta[0] == 0 || delta[0] == std::numeric_limits<int64_t>::min()) {
      return false;
    }
    const DimExpr span = delta[0] > 0 ? limit[0] - start[0] : start[0] - limit[0];
    *dims = {common::max(common::ceil_div(span, constant(std::abs(delta[0]))), constant(0))};
    return true;
  }
  if (op == "Conv" || op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    if (!input_dims(0, &data) || data.size() < 3) return false;
    const size_t spatial = data.size() - 2;
    std::vector<int64_t> kernel = ints_attribute(node, "kernel_shape");
    DimExpr channels = data[1];
    if (op == "Conv") {
      std::vector<DimExpr> weights;
      if (!input_dims(1, &weights) || weights.size() != data.size()) return false;
      channels = weights[0];
      if (kernel.empty()) {
        for (size_t k = 2; k < weights.size(); ++k) {
          if (!weights[k].is_constant()) return false;
          kernel.push_back(weights[k].constant_value());
        }
      }
    }
    std::vector<int64_t> strides = ints_attribute(node, "strides"), dilations = ints_attribute(node, "dilations"),
                         pads = ints_attribute(node, "pads");
    strides.resize(spatial, 1);
    dilations.resize(spatial, 1);
    pads.resize(2 * spatial, 0);
    if (kernel.size() != spatial) return false;
    const std::string auto_pad = string_attribute(node, "auto_pad");
    const bool ceil_mode = op != "Conv" && int_attribute(node, "ceil_mode", 0) != 0;
    *dims = {data[0], channels};
    for (size_t k = 0; k < spatial; ++k) {
      if (strides[k] < 1 || dilations[k] < 1) return false;
      const DimExpr& length = data[2 + k];
      const DimExpr stride = constant(strides[k]);
      if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        dims->push_back(ceil_div(length, stride));
        continue;
      }
      const bool valid = auto_pad == "VALID";
      const int64_t begin = valid ? 0 : pads[k], end = valid ? 0 : pads[k + spatial];
      const DimExpr span = plus(length, begin + end - dilations[k] * (kernel[k] - 1) - 1);
      if (!ceil_mode) {
        dims->push_back(floor_div(span, stride) + constant(1));
        continue;
      }
      // Rounded up, less a last window that would start in the end padding.
      dims->push_back(smaller(ceil_div(span, stride) + constant(1),
                              floor_div(plus(length, begin - 1), stride) + constant(1), ranges_));
    }
    return true;
  }
  if (op == "Concat") {
    if (!input_dims(0, &data)) return false;
    int64_t axis = int_attribute(node, "axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(data.size());
    if (axis < 0 || axis >= static_cast<int64_t>(data.size())) return false;
    DimExpr length = DimExpr::constant(0);
    for (size_t k = 0; k < inputs.size(); ++k) {
      std::vector<DimExpr> part;
      if (!input_dims(k, &part) || part.size() != data.size()) return false;
      length = length + part[static_cast<size_t>(axis)];
    }
    data[static_cast<size_t>(axis)] = length;
    *dims = std::move(data);
    return true;
  }
  if (op == "Slice") {
    std::vector<int64_t> starts, ends, axes, steps;
    if (!input_dims(0, &data)) return false;
    if (opset < 10) {
      starts = ints_attribute(node, "starts");
      ends = ints_attribute(node, "ends");
      axes = ints_attribute(node, "axes");
    } else if (!input_ints(inputs, 1, &starts) || !input_ints(inputs, 2, &ends) ||
               (inputs.size() > 3 && inputs[3].type != nullptr && !input_ints(inputs, 3, &axes)) ||
               (inputs.size() > 4 && inputs[4].type != nullptr && !input_ints(inputs, 4, &steps))) {
      return false;
    }
    if (axes.empty()) {
      for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
    }
    steps.resize(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size()) return false;
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t axis = axes[k] < 0 ? axes[k] + static_cast<int64_t>(data.size()) : axes[k];
      if (axis < 0 || axis >= static_cast<int64_t>(data.size()) || steps[k] == 0) return false;
      DimExpr& d = data[static_cast<size_t>(axis)];
      d = slice_length(d, starts[k], ends[k], steps[k], ranges_);
    }
    *dims = std::move(data);
    return true;
  }
  if (op == "Flatten") {
    if (!input_dims(0, &data)) return false;
    int64_t axis = int_attribute(node, "axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(data.size());
    if (axis < 0 || axis > static_cast<int64_t>(data.size())) return false;
    const auto middle = data.begin() + axis;
    *dims = {product({data.begin(), middle}), product({middle, data.end()})};
    return true;
  }
  if (op == "ConvTranspose") {
    std::vector<DimExpr> weights;
    return input_dims(0, &data) && input_dims(1, &weights) && transposed_dims(node, data, weights, dims);
  }
  if (op == "Resize" || op == "Upsample") return input_dims(0, &data) && resized_dims(node, opset, inputs, data, dims);
  if (op == "Pad") {
    std::vector<int64_t> pads = ints_attribute(node, "pads");
    if (!input_dims(0, &data) || (opset >= 11 && !input_ints(inputs, 1, &pads))) return false;
    if (pads.size() != 2 * data.size()) return false;
    for (size_t k = 0; k < data.size(); ++k) data[k] = plus(data[k], pads[k] + pads[k + data.size()]);
    *dims = std::move(data);
    return true;
  }
  if (is_broadcasting(op)) {
    std::vector<std::vector<DimExpr>> shapes;
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (!input_dims(k, &shapes.emplace_back())) return false;
    }
    *dims = broadcast(shapes);
    return true;
  }
  return false;
}

bool shape_value(const onnx::NodeProto& node, int64_t opset, const std::vector<Operand>& inputs,
                 const SymbolicDims& symbols, std::vector<DimExpr>* elements) {
  const std::string& op = node.op_type();
  const bool reads_shape_value =
      std::any_of(inputs.begin(), inputs.end(), [](const Operand& in) { return in.elements != nullptr; });
  std::vector<DimExpr> data;
  if (op == "Shape" || op == "Size") {
    if (inputs.empty() || inputs[0].type == nullptr || !symbols.dims_of(*inputs[0].type, &data)) return false;
    if (op == "Size") {
      *elements = {product(data)};
      return true;
    }
    const auto rank = static_cast<int64_t>(data.size());
    auto clamp_axis = [rank](int64_t axis) { return std::clamp(axis < 0 ? axis + rank : axis, int64_t{0}, rank); };
    const int64_t start = clamp_axis(opset >= 15 ? int_attribute(node, "start", 0) : 0);
    const int64_t end = clamp_axis(opset >= 15 ? int_attribute(node, "end", rank) : rank);
    elements->assign(data.begin() + start, data.begin() + std::max(start, end));
    return true;
  }
  if (!reads_shape_value || inputs.empty() || !int_elements(inputs[0], &data)) return false;
  if (op == "Identity" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten") {
    *elements = std::move(data);
    return true;
  }
  if (op == "Cast") {
    const int64_t to = int_attribute(node, "to", 0);
    if (to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32) return false;
    *elements = std::move(data);
    return true;
  }
  if (op == "Gather") {
    std::vector<int64_t> indices;
    if (int_attribute(node, "axis", 0) != 0 || !input_ints(inputs, 1, &indices)) return false;
    elements->clear();
    for (int64_t index : indices) {
      if (index < 0) index += static_cast<int64_t>(data.size());
      if (index < 0 || index >= static_cast<int64_t>(data.size())) return false;
      elements->push_back(data[static_cast<size_t>(index)]);
    }
    return true;
  }
  if (op == "Concat") {
    elements->clear();
    for (const Operand& in : inputs) {
      std::vector<DimExpr> part;
      if (!int_elements(in, &part)) return false;
      elements->insert(elements->end(), part.begin(), part.end());
    }
    return elements->size() <= kMaxShapeValueLength;
  }
  if (op == "Slice") {
    std::vector<int64_t> starts, ends, axes, steps{1};
    if (opset < 10) {  // starts, ends and axes are attributes
      starts = ints_attribute(node, "starts");
      ends = ints_attribute(node, "ends");
      axes = ints_attribute(node, "axes");
      if (starts.size() != 1 || ends.size() != 1 || axes.size() > 1 || (axes.size() == 1 && axes[0] != 0)) {
        return false;
      }
    } else if (!input_ints(inputs, 1, &starts) || !input_ints(inputs, 2, &ends) || starts.size() != 1 ||
               ends.size() != 1 ||
               (inputs.size() > 3 && inputs[3].type != nullptr &&
                (!input_ints(inputs, 3, &axes) || axes.size() != 1)) ||
               (inputs.size() > 4 && inputs[4].type != nullptr &&
                (!input_ints(inputs, 4, &steps) || steps.size() != 1)) ||
               steps[0] == 0) {
      return false;
    }
    const auto n = static_cast<int64_t>(data.size());
    int64_t start = starts[0] < 0 ? starts[0] + n : starts[0], end = ends[0] < 0 ? ends[0] + n : ends[0];
    elements->clear();
    if (steps[0] > 0) {
      start = std::clamp<int64_t>(start, 0, n);
      end = std::clamp<int64_t>(end, 0, n);
      for (int64_t k = start; k < end; k += steps[0]) elements->push_back(data[static_cast<size_t>(k)]);
    } else {
      start = std::clamp<int64_t>(start, -1, n - 1);
      end = std::clamp<int64_t>(end, -1, n - 1);
      for (int64_t k = start; k > end; k += steps[0]) elements->push_back(data[static_cast<size_t>(k)]);
    }
    return true;
  }
  static const std::map<std::string, DimOp> kArithmetic = {{"Add", DimOp::kAdd}, {"Sub", DimOp::kSub},
                                                           {"Mul", DimOp::kMul}, {"Div", DimOp::kFloorDiv},
                                                           {"Min", DimOp::kMin}, {"Max", DimOp::kMax}};
  auto arithmetic = kArithmetic.find(op);
  if (arithmetic == kArithmetic.end() || inputs.size() != 2) return false;
  std::vector<DimExpr> other;
  if (!int_elements(inputs[1], &other)) return false;
  const size_t length = std::max(data.size(), other.size());
  if ((data.size() != length && data.size() != 1) || (other.size() != length && other.size() != 1)) return false;
  elements->clear();
  for (size_t k = 0; k < length; ++k) {
    const DimExpr& a = data[data.size() == 1 ? 0 : k];
    const DimExpr& b = other[other.size() == 1 ? 0 : k];
    // Integer division truncates; it floors for the non-negative sizes shapes hold,
    // provided the divisor is a positive constant.
    if (arithmetic->second == DimOp::kFloorDiv && !(b.is_constant() && b.constant_value() > 0)) return false;
    elements->push_back(DimExpr::combine(arithmetic->second, a, b));
  }
  return true;
}

}  // namespace plugrt::compiler::onnx_import
