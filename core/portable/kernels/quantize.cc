// SPDX-License-Identifier: Apache-2.0
// Linear quantization kernels: QuantizeLinear, DequantizeLinear (per tensor, or per axis
// with a 1-D scale) and DynamicQuantizeLinear. Rounding is to nearest, ties to even, and
// results saturate to the integer type, as ONNX says.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

/// Where element i finds its scale and zero point: (i / inner) % channels.
struct Channels {
  int64_t inner = 1, count = 1;
  int64_t of(int64_t i) const { return count == 1 ? 0 : (i / inner) % count; }
};

template <typename Q>
Q saturate(double value) {
  const double lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
  return static_cast<Q>(std::min(hi, std::max(lo, value)));
}

/// y = saturate(round(x / scale) + zero_point), the quotient in float32.
template <typename X, typename Q>
class QuantizeKernel final : public Kernel {
 public:
  QuantizeKernel(int64_t count, Channels channels, bool has_zero_point)
      : count_(count), channels_(channels), has_zero_point_(has_zero_point) {}
  void run(const KernelArgs& args) const override {
    const X* x = static_cast<const X*>(args.inputs[0]);
    const float* scale = static_cast<const float*>(args.inputs[1]);
    const Q* zero_point = has_zero_point_ ? static_cast<const Q*>(args.inputs[2]) : nullptr;
    Q* y = static_cast<Q*>(args.outputs[0]);
    for (int64_t i = 0; i < count_; ++i) {
      const int64_t c = channels_.of(i);
      const double zp = zero_point != nullptr ? zero_point[c] : 0;
      // Divided in float32, as ONNX's reference does: a double quotient can fall on the
      // other side of a .5 and round the other way.
      const float quotient = static_cast<float>(load(x[i])) / scale[c];
      y[i] = saturate<Q>(static_cast<double>(std::nearbyint(quotient)) + zp);
    }
  }

 private:
  int64_t count_;
  Channels channels_;
  bool has_zero_point_;
};

/// y = (x - zero_point) * scale, in float32.
template <typename Q>
class DequantizeKernel final : public Kernel {
 public:
  DequantizeKernel(int64_t count, Channels channels, bool has_zero_point)
      : count_(count), channels_(channels), has_zero_point_(has_zero_point) {}
  void run(const KernelArgs& args) const override {
    const Q* x = static_cast<const Q*>(args.inputs[0]);
    const float* scale = static_cast<const float*>(args.inputs[1]);
    const Q* zero_point = has_zero_point_ ? static_cast<const Q*>(args.inputs[2]) : nullptr;
    float* y = static_cast<float*>(args.outputs[0]);
    for (int64_t i = 0; i < count_; ++i) {
      const int64_t c = channels_.of(i);
      const double zp = zero_point != nullptr ? zero_point[c] : 0;
      y[i] = static_cast<float>((static_cast<double>(x[i]) - zp) * scale[c]);
    }
  }

 private:
  int64_t count_;
  Channels channels_;
  bool has_zero_point_;
};

/// Checks the scale (input 1) and zero point (input 2, of `quantized` dtype) against the
/// data (input 0): scalars, or 1-D along the axis attribute (from opset 13).
std::string read_channels(const NodeContext& node, DType quantized, Channels* channels) {
  const TensorInfo& data = *node.input(0);
  const TensorInfo& scale = *node.input(1);
  if (scale.dtype != DType::kFloat32) return "the scale (input 1) must be float32";
  if (scale.num_elements() != 1 || scale.shape.rank > 1) {
    if (node.opset() < 13 || scale.shape.rank != 1) return "the scale (input 1) must be a scalar";
    int a = 0;
    const int64_t axis = node.attr_int("axis", 1);
    if (!normalize_axis(axis, data.shape.rank, &a)) {
      return "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(data.shape.rank);
    }
    if (scale.shape[0] != data.shape[a]) {
      return "the scale has " + std::to_string(scale.shape[0]) + " elements; axis " + std::to_string(a) + " has " +
             std::to_string(data.shape[a]);
    }
    channels->count = data.shape[a];
    channels->inner = data.shape.product(a + 1, data.shape.rank);
  }
  if (const TensorInfo* zero_point = node.input(2); zero_point != nullptr) {
    if (zero_point->dtype != quantized || zero_point->shape != scale.shape) {
      return "the zero point (input 2) must be " + std::string(to_string(quantized)) + " of the scale's shape " +
             to_string(scale.shape);
    }
  }
  return {};
}

Prepared prepare_quantize(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 3, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  const DType quantized = node.input(2) != nullptr ? node.input(2)->dtype : DType::kUInt8;
  if (quantized != DType::kUInt8 && quantized != DType::kInt8) {
    return prepare_error(node, "quantizes to uint8 or int8, not " + std::string(to_string(quantized)));
  }
  Channels channels;
  if (std::string why = read_channels(node, quantized, &channels); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_output(node, 0, x.shape, quantized); !why.empty()) return prepare_error(node, why);
  const bool has_zero_point = node.input(2) != nullptr;
  return dispatch<kFloatTypes | kSignedInts>(node, x.dtype, [&](auto tag) {
    using X = typename decltype(tag)::type;
    if (quantized == DType::kInt8)
      return prepared<QuantizeKernel<X, int8_t>>(x.num_elements(), channels, has_zero_point);
    return prepared<QuantizeKernel<X, uint8_t>>(x.num_elements(), channels, has_zero_point);
  });
}

Prepared prepare_dequantize(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 3, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  Channels channels;
  if (std::string why = read_channels(node, x.dtype, &channels); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_output(node, 0, x.shape, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  const bool has_zero_point = node.input(2) != nullptr;
  switch (x.dtype) {
    case DType::kUInt8: return prepared<DequantizeKernel<uint8_t>>(x.num_elements(), channels, has_zero_point);
    case DType::kInt8: return prepared<DequantizeKernel<int8_t>>(x.num_elements(), channels, has_zero_point);
    case DType::kInt32: return prepared<DequantizeKernel<int32_t>>(x.num_elements(), channels, has_zero_point);
    default: return prepare_error(node, "dequantizes uint8, int8 or int32, not " + std::string(to_string(x.dtype)));
  }
}

/// DynamicQuantizeLinear: uint8 with the scale and zero point that map [min(x, 0),
/// max(x, 0)] onto [0, 255].
class DynamicQuantizeKernel final : public Kernel {
 public:
  explicit DynamicQuantizeKernel(int64_t count) : count_(count) {}
  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < count_; ++i) {
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    // In float32, as ONNX's reference and ONNX Runtime compute them: the range's
    // difference and the quotients rounded to float32 (a double scale can be one ulp off,
    // and every value quantized with it then may round the other way).
    const float range = hi - lo;
    const float scale = range / 255.0f;
    const float shifted = scale > 0 ? 0.0f - lo / scale : 0.0f;
    const uint8_t zero_point = saturate<uint8_t>(std::nearbyint(std::min(255.0f, std::max(0.0f, shifted))));
    auto* y = static_cast<uint8_t*>(args.outputs[0]);
    for (int64_t i = 0; i < count_; ++i) {
      y[i] = scale > 0 ? saturate<uint8_t>(std::nearbyint(x[i] / scale) + zero_point) : zero_point;
    }
    *static_cast<float*>(args.outputs[1]) = scale;
    *static_cast<uint8_t*>(args.outputs[2]) = zero_point;
  }

 private:
  int64_t count_;
};

Prepared prepare_dynamic_quantize(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 3, 3); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  if (std::string why = check_dtype("input", 0, &x, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_output(node, 0, x.shape, DType::kUInt8); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_output(node, 1, Shape{}, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_output(node, 2, Shape{}, DType::kUInt8); !why.empty()) return prepare_error(node, why);
  return prepared<DynamicQuantizeKernel>(x.num_elements());
}

}  // namespace

void add_quantize_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"QuantizeLinear", prepare_quantize});
  table.push_back({"DequantizeLinear", prepare_dequantize});
  table.push_back({"DynamicQuantizeLinear", prepare_dynamic_quantize});
}

}  // namespace plugrt::portable
