// SPDX-License-Identifier: Apache-2.0
// Quantized operators in operator form: MatMulInteger, ConvInteger, QLinearMatMul and
// QLinearConv of the default domain, and the com.microsoft ops ONNX Runtime's quantizer
// writes (QLinearAdd, QLinearMul, QLinearGlobalAveragePool; their graph IR op types carry
// the domain: "com.microsoft.QLinearAdd").
//
// The matrix and convolution ops subtract the zero points from the 8-bit operands and
// accumulate their products in int32, wrapping on overflow as NumPy's int32 does (never
// undefined behaviour). The shifted operands fit int16, and every product goes through
// one GEMM (int_gemm.h) that takes both operands along k: MatMulInteger transposes B,
// and ConvInteger gathers each output position's patch into a row (for a 1x1 kernel
// with unit strides and no padding, the position's channels). QLinearMatMul and QLinearConv then requantize as ONNX's
// reference implementation does: the multiplier x_scale * w_scale / y_scale in float32, the accumulator times the
// multiplier in double, plus y_zero_point, rounded half to even and saturated to the output type. The com.microsoft ops
// compute as ONNX Runtime's CPU kernels do, in float32, rounding half to even.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "int_gemm.h"
#include "kernel_families.h"
#include "spatial.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

/// `value` rounded half to even and saturated to Q.
template <typename Q>
Q round_saturate(double value) {
  const double rounded = std::nearbyint(value);  // the default rounding mode: ties to even
  const double lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
  return static_cast<Q>(std::min(hi, std::max(lo, rounded)));
}

/// An int32 accumulator's value (the uint32 sums wrap as int32 arithmetic would).
int32_t as_int32(uint32_t value) {
  int32_t result = 0;
  std::memcpy(&result, &value, sizeof(result));
  return result;
}

/// Loads element i of an 8-bit tensor of dtype `dtype` (uint8 or int8) as int32.
int32_t load_8bit(const void* data, DType dtype, int64_t i) {
  return dtype == DType::kInt8 ? static_cast<const int8_t*>(data)[i] : static_cast<const uint8_t*>(data)[i];
}

bool is_8bit(DType dtype) { return dtype == DType::kUInt8 || dtype == DType::kInt8; }

/// dst[t] = element (first + t * stride) of an 8-bit tensor minus `zero`, for t in
/// [0, count): at most 255 in magnitude, so it fits the GEMM's int16 operands.
void widen_8bit(const void* data, DType dtype, int64_t first, int64_t stride, int64_t count, int32_t zero,
                int16_t* dst) {
  if (dtype == DType::kInt8) {
    const int8_t* src = static_cast<const int8_t*>(data) + first;
    for (int64_t t = 0; t < count; ++t) dst[t] = static_cast<int16_t>(src[t * stride] - zero);
  } else {
    const uint8_t* src = static_cast<const uint8_t*>(data) + first;
    for (int64_t t = 0; t < count; ++t) dst[t] = static_cast<int16_t>(src[t * stride] - zero);
  }
}

/// The output: int32 accumulators, or requantized to uint8 or int8.
struct Requantize {
  DType dtype = DType::kInt32;
  // Input indices of the scales and the output zero point; -1 for the integer ops.
  int a_scale = -1, b_scale = -1, y_scale = -1, y_zero_point = -1;
  bool b_scale_per_channel = false;

  /// The multiplier of channel c, as ONNX's reference computes it: float32 throughout.
  float multiplier(const KernelArgs& args, int64_t c) const {
    const float a = *static_cast<const float*>(args.inputs[a_scale]);
    const float b = static_cast<const float*>(args.inputs[b_scale])[b_scale_per_channel ? c : 0];
    const float y = *static_cast<const float*>(args.inputs[y_scale]);
    const float ab = a * b;
    return ab / y;
  }

  /// Writes `count` accumulators of channel `c` (plus `bias`) to out[0, count).
  void write(const KernelArgs& args, int64_t c, const uint32_t* acc, int64_t count, int32_t bias, void* out) const {
    if (out == nullptr) return;
    if (dtype == DType::kInt32) {
      auto* y = static_cast<int32_t*>(out);
      for (int64_t j = 0; j < count; ++j) y[j] = as_int32(acc[j] + static_cast<uint32_t>(bias));
      return;
    }
    const double m = multiplier(args, c);
    const double zp = load_8bit(args.inputs[y_zero_point], dtype, 0);
    if (dtype == DType::kUInt8) {
      auto* y = static_cast<uint8_t*>(out);
      for (int64_t j = 0; j < count; ++j) {
        y[j] = round_saturate<uint8_t>(as_int32(acc[j] + static_cast<uint32_t>(bias)) * m + zp);
      }
    } else {
      auto* y = static_cast<int8_t*>(out);
      for (int64_t j = 0; j < count; ++j) {
        y[j] = round_saturate<int8_t>(as_int32(acc[j] + static_cast<uint32_t>(bias)) * m + zp);
      }
    }
  }
};

/// Checks a scale (float32) or zero point (`dtype`) input: one element, or when
/// `channels` > 0 also a 1-D tensor of `channels` elements. Sets *per_channel.
std::string check_quant_param(const NodeContext& node, int index, const char* what, DType dtype, int64_t channels,
                              bool* per_channel) {
  const TensorInfo* info = node.input(static_cast<size_t>(index));
  if (info == nullptr) return std::string(what) + " (input " + std::to_string(index) + ") is missing";
  if (info->dtype != dtype) {
    return std::string(what) + " (input " + std::to_string(index) + ") must be " + std::string(to_string(dtype)) +
           ", not " + std::string(to_string(info->dtype));
  }
  *per_channel = false;
  if (info->shape.num_elements() == 1 && info->shape.rank <= 1) return {};
  if (channels > 0 && info->shape.rank == 1 && info->shape[0] == channels) {
    *per_channel = true;
    return {};
  }
  return std::string(what) + " (input " + std::to_string(index) + ") has shape " + to_string(info->shape) +
         (channels > 0 ? "; expected a scalar or [" + std::to_string(channels) + "]" : "; expected a scalar");
}

// ---- MatMulInteger, QLinearMatMul -------------------------------------------------------

/// Where one operand finds the zero point of a row (A) or column (B): element
/// matrix * matrix_stride + index * index_stride of the zero point input.
struct ZeroPoints {
  int input = -1;  // -1: none
  int64_t matrix_stride = 0, index_stride = 0;
  int32_t at(const KernelArgs& args, DType dtype, int64_t matrix, int64_t index) const {
    if (input < 0) return 0;
    return load_8bit(args.inputs[input], dtype, matrix * matrix_stride + index * index_stride);
  }
};

struct MatMulParams {
  Shape batch;
  std::array<int64_t, kMaxRank> strides[2]{};  // A's and B's strides over batch, in matrices
  int64_t m = 0, n = 0, k = 0;
  int a = 0, b = 1;  // input indices of A and B
  DType a_dtype = DType::kUInt8, b_dtype = DType::kUInt8;
  ZeroPoints a_zero, b_zero;
  Requantize requantize;
};

class IntegerMatMulKernel final : public Kernel {
 public:
  explicit IntegerMatMulKernel(const MatMulParams& p) : p_(p), depth_(int_gemm_padded_k(p.k)) {}

  size_t scratch_bytes() const override {
    return static_cast<size_t>((p_.m + p_.n) * depth_) * sizeof(int16_t) +
           static_cast<size_t>(p_.m * p_.n) * sizeof(uint32_t);
  }

  void run(const KernelArgs& args) const override {
    const void* a = args.inputs[p_.a];
    const void* b = args.inputs[p_.b];
    auto* acc = static_cast<uint32_t*>(args.scratch);
    auto* a16 = reinterpret_cast<int16_t*>(acc + p_.m * p_.n);
    int16_t* b16 = a16 + p_.m * depth_;  // B transposed: one row of k per column
    std::fill_n(a16, (p_.m + p_.n) * depth_, int16_t{0});
    const size_t out_size = dtype_size(p_.requantize.dtype);
    auto* y = static_cast<uint8_t*>(args.outputs[0]);
    BroadcastIterator it(p_.batch, 2, p_.strides);
    const int64_t count = p_.batch.num_elements();
    for (int64_t t = 0; t < count; ++t, it.next()) {
      const int64_t am = it.offset(0), bm = it.offset(1);
      for (int64_t i = 0; i < p_.m; ++i) {
        widen_8bit(a, p_.a_dtype, (am * p_.m + i) * p_.k, 1, p_.k, p_.a_zero.at(args, p_.a_dtype, am, i),
                   a16 + i * depth_);
      }
      for (int64_t j = 0; j < p_.n; ++j) {
        widen_8bit(b, p_.b_dtype, bm * p_.k * p_.n + j, p_.n, p_.k, p_.b_zero.at(args, p_.b_dtype, bm, j),
                   b16 + j * depth_);
      }
      std::fill_n(acc, p_.m * p_.n, 0u);
      int_gemm_nt(p_.m, p_.n, p_.k, a16, b16, acc, p_.n);
      uint8_t* out = y + static_cast<size_t>(t * p_.m * p_.n) * out_size;
      if (p_.requantize.b_scale_per_channel) {  // one multiplier per column
        for (int64_t i = 0; i < p_.m; ++i) {
          for (int64_t j = 0; j < p_.n; ++j) {
            p_.requantize.write(args, j, acc + i * p_.n + j, 1, 0, out + static_cast<size_t>(i * p_.n + j) * out_size);
          }
        }
      } else {
        p_.requantize.write(args, 0, acc, p_.m * p_.n, 0, out);
      }
    }
  }

 private:
  MatMulParams p_;
  int64_t depth_ = 0;  // k padded for the GEMM
};

Shape sub_shape(const Shape& shape, int begin, int end) {
  Shape result;
  for (int axis = begin; axis < end; ++axis) result.push_back(shape[axis]);
  return result;
}

/// A's zero point: a scalar, one per row ([M]), or one per row of each matrix (A's shape
/// with K replaced by 1). B's: a scalar, one per column ([N]), or one per column of each
/// matrix (B's shape with K replaced by 1).
std::string read_matmul_zero_point(const NodeContext& node, int index, bool is_a, const Shape& operand, DType dtype,
                                   int64_t count, ZeroPoints* zero) {
  const TensorInfo* info = node.input(static_cast<size_t>(index));
  if (info == nullptr) return {};
  const char* what = is_a ? "a_zero_point" : "b_zero_point";
  if (info->dtype != dtype) {
    return std::string(what) + " (input " + std::to_string(index) + ") must be " + std::string(to_string(dtype)) +
           " like its operand";
  }
  zero->input = index;
  const Shape& zp = info->shape;
  if (zp.num_elements() == 1 && zp.rank <= 1) return {};
  if (zp.rank == 1 && zp[0] == count) {
    zero->index_stride = 1;
    return {};
  }
  Shape expected = operand;
  if (operand.rank >= 2) expected[is_a ? operand.rank - 1 : operand.rank - 2] = 1;
  if (operand.rank >= 2 && zp == expected) {
    zero->index_stride = 1;
    zero->matrix_stride = count;
    return {};
  }
  return std::string(what) + " has shape " + to_string(zp) + "; expected a scalar, [" + std::to_string(count) +
         "] or " + to_string(expected) + " (one per " + (is_a ? "row" : "column") + ")";
}

/// `a` and `b`: the operands' input indices; `a_zero`, `b_zero` their zero points'.
std::string read_matmul(const NodeContext& node, int a, int b, int a_zero, int b_zero, MatMulParams* p) {
  const TensorInfo* ai = node.input(static_cast<size_t>(a));
  const TensorInfo* bi = node.input(static_cast<size_t>(b));
  if (ai == nullptr || bi == nullptr) return "A and B are required";
  if (!is_8bit(ai->dtype) || !is_8bit(bi->dtype)) {
    return "A and B must be uint8 or int8, not " + std::string(to_string(ai->dtype)) + " and " +
           std::string(to_string(bi->dtype));
  }
  p->a = a;
  p->b = b;
  p->a_dtype = ai->dtype;
  p->b_dtype = bi->dtype;
  const Shape& as = ai->shape;
  const Shape& bs = bi->shape;
  if (as.rank < 1 || bs.rank < 1) return "A and B must have rank 1 or more";
  p->m = as.rank == 1 ? 1 : as[as.rank - 2];
  p->k = as[as.rank - 1];
  p->n = bs.rank == 1 ? 1 : bs[bs.rank - 1];
  if ((bs.rank == 1 ? bs[0] : bs[bs.rank - 2]) != p->k) {
    return "shapes " + to_string(as) + " and " + to_string(bs) + " do not multiply";
  }
  const Shape a_batch = sub_shape(as, 0, std::max(0, as.rank - 2));
  const Shape b_batch = sub_shape(bs, 0, std::max(0, bs.rank - 2));
  if (!broadcast_shapes(a_batch, b_batch, &p->batch)) {
    return "batch dims of " + to_string(as) + " and " + to_string(bs) + " do not broadcast";
  }
  p->strides[0] = broadcast_strides(a_batch, p->batch);
  p->strides[1] = broadcast_strides(b_batch, p->batch);
  if (std::string why = read_matmul_zero_point(node, a_zero, true, as, ai->dtype, p->m, &p->a_zero); !why.empty()) {
    return why;
  }
  return read_matmul_zero_point(node, b_zero, false, bs, bi->dtype, p->n, &p->b_zero);
}

Shape matmul_output_shape(const NodeContext& node, const MatMulParams& p) {
  Shape out = p.batch;
  if (node.input(static_cast<size_t>(p.a))->shape.rank > 1) out.push_back(p.m);
  if (node.input(static_cast<size_t>(p.b))->shape.rank > 1) out.push_back(p.n);
  return out;
}

Prepared prepare_matmul_integer(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 4, 1, 1); !why.empty()) return prepare_error(node, why);
  MatMulParams p;
  if (std::string why = read_matmul(node, 0, 1, 2, 3, &p); !why.empty()) return prepare_error(node, why);
  const Shape out = matmul_output_shape(node, p);
  if (std::string why = check_output(node, 0, out, DType::kInt32); !why.empty()) return prepare_error(node, why);
  return prepared<IntegerMatMulKernel>(p);
}

/// QLinearMatMul and QLinearConv: the scales (float32; the weights' per channel when
/// `channels` > 0) and the output zero point, whose dtype is the output's.
std::string read_requantize(const NodeContext& node, int a_scale, int b_scale, int y_scale, int y_zero_point,
                            int64_t channels, Requantize* r) {
  bool per_channel = false;
  if (std::string why = check_quant_param(node, a_scale, "the input's scale", DType::kFloat32, 0, &per_channel);
      !why.empty()) {
    return why;
  }
  if (std::string why =
          check_quant_param(node, b_scale, "the weights' scale", DType::kFloat32, channels, &r->b_scale_per_channel);
      !why.empty()) {
    return why;
  }
  if (std::string why = check_quant_param(node, y_scale, "y_scale", DType::kFloat32, 0, &per_channel); !why.empty()) {
    return why;
  }
  const TensorInfo* zp = node.input(static_cast<size_t>(y_zero_point));
  if (zp == nullptr || !is_8bit(zp->dtype)) return "y_zero_point (input 7) must be given, uint8 or int8";
  if (std::string why = check_quant_param(node, y_zero_point, "y_zero_point", zp->dtype, 0, &per_channel);
      !why.empty()) {
    return why;
  }
  r->dtype = zp->dtype;
  r->a_scale = a_scale;
  r->b_scale = b_scale;
  r->y_scale = y_scale;
  r->y_zero_point = y_zero_point;
  return {};
}

Prepared prepare_qlinear_matmul(const NodeContext& node) {
  if (std::string why = check_arity(node, 8, 8, 1, 1); !why.empty()) return prepare_error(node, why);
  MatMulParams p;
  if (std::string why = read_matmul(node, 0, 3, 2, 5, &p); !why.empty()) return prepare_error(node, why);
  if (p.a_zero.matrix_stride != 0 || p.a_zero.index_stride != 0) {
    return prepare_error(node, "a_zero_point must be a scalar, as a_scale is");
  }
  if (std::string why = read_requantize(node, 1, 4, 6, 7, p.n, &p.requantize); !why.empty()) {
    return prepare_error(node, why);
  }
  if (p.b_zero.matrix_stride != 0) return prepare_error(node, "b_zero_point must be a scalar or one per column");
  const Shape out = matmul_output_shape(node, p);
  if (std::string why = check_output(node, 0, out, p.requantize.dtype); !why.empty()) return prepare_error(node, why);
  return prepared<IntegerMatMulKernel>(p);
}

// ---- ConvInteger, QLinearConv ----------------------------------------------------------

/// Scratch bytes an im2col chunk aims at.
constexpr int64_t kChunkBytes = int64_t{1} << 20;

struct ConvParams {
  SpatialGeometry g;
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  int x = 0, w = 1, x_zero = -1, w_zero = -1, bias = -1;  // input indices; -1: none
  DType x_dtype = DType::kUInt8, w_dtype = DType::kUInt8;
  bool w_zero_per_channel = false;
  Requantize requantize;

  int64_t in_per_group() const { return in_channels / groups; }
  int64_t out_per_group() const { return out_channels / groups; }
};

class IntegerConvKernel final : public Kernel {
 public:
  explicit IntegerConvKernel(const ConvParams& p) : p_(p) {
    const SpatialGeometry& g = p_.g;
    rows_ = p_.in_per_group() * g.kernel_size();
    depth_ = int_gemm_padded_k(rows_);
    const int64_t per_column = depth_ * 2 + p_.out_per_group() * 4;
    chunk_ = std::max<int64_t>(1, std::min(g.out_size(), std::max<int64_t>(64, kChunkBytes / per_column)));
    for (int64_t c = 0; c < p_.in_per_group(); ++c) {
      for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
        for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
          for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
            const SpatialInts at{kz * g.dilation[0], ky * g.dilation[1], kx * g.dilation[2]};
            const int64_t plane = c * g.in_size();
            taps_.push_back({plane + (at[0] * g.in[1] + at[1]) * g.in[2] + at[2], plane, at});
          }
        }
      }
    }
    // One or two spatial dims: chunks of whole output rows, read from a band of the
    // input made channels-last, so that a patch is kernel-many runs of channels.
    planar_ = g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1;
    if (planar_) {
      rows_per_chunk_ = std::clamp<int64_t>(chunk_ / g.out[2], 1, g.out[1]);
      chunk_ = rows_per_chunk_ * g.out[2];
      band_rows_ = std::min(g.in[1], (rows_per_chunk_ - 1) * g.stride[1] + g.extent(1));
      direct_ = g.kernel_size() == 1 && g.stride[1] == 1 && g.stride[2] == 1 && g.pad_begin[1] == 0 &&
                g.pad_begin[2] == 0 && g.out[1] == g.in[1] && g.out[2] == g.in[2];
      pixel_ = direct_ ? depth_ : p_.in_per_group();
    }
  }

  size_t scratch_bytes() const override {
    const int64_t band = planar_ ? band_rows_ * p_.g.in[2] * pixel_ : 0;
    return static_cast<size_t>(p_.out_per_group() * chunk_) * sizeof(uint32_t) +
           static_cast<size_t>((p_.out_channels + chunk_) * depth_ + band) * sizeof(int16_t);
  }

  void run(const KernelArgs& args) const override {
    auto* acc = static_cast<uint32_t*>(args.scratch);
    auto* filters = reinterpret_cast<int16_t*>(acc + p_.out_per_group() * chunk_);
    int16_t* patches = filters + p_.out_channels * depth_;
    int16_t* band = patches + chunk_ * depth_;
    const int64_t band_size = planar_ ? band_rows_ * p_.g.in[2] * pixel_ : 0;
    std::fill_n(filters, (p_.out_channels + chunk_) * depth_ + band_size, int16_t{0});
    const int64_t taps = p_.g.kernel_size(), in_per_group = p_.in_per_group();
    for (int64_t m = 0; m < p_.out_channels; ++m) {
      const int32_t zp =
          p_.w_zero >= 0 ? load_8bit(args.inputs[p_.w_zero], p_.w_dtype, p_.w_zero_per_channel ? m : 0) : 0;
      if (!planar_) {
        widen_8bit(args.inputs[p_.w], p_.w_dtype, m * rows_, 1, rows_, zp, filters + m * depth_);
        continue;
      }
      for (int64_t t = 0; t < taps; ++t) {  // channels innermost, as the patches hold them
        widen_8bit(args.inputs[p_.w], p_.w_dtype, m * rows_ + t, taps, in_per_group, zp,
                   filters + m * depth_ + t * in_per_group);
      }
    }
    const int32_t x_zero = p_.x_zero >= 0 ? load_8bit(args.inputs[p_.x_zero], p_.x_dtype, 0) : 0;
    const int64_t in_size = p_.g.in_size();
    const int64_t out_size = p_.g.out_size();
    const int64_t out_per_group = p_.out_per_group();
    for (int64_t n = 0; n < p_.batch; ++n) {
      for (int64_t group = 0; group < p_.groups; ++group) {
        const int64_t image = (n * p_.in_channels + group * in_per_group) * in_size;
        const int16_t* group_filters = filters + group * out_per_group * depth_;
        Band made;
        for (int64_t first = 0; first < out_size; first += chunk_) {
          const int64_t count = std::min(chunk_, out_size - first);
          const int16_t* columns = patches;
          if (planar_ && p_.x_dtype == DType::kUInt8) {
            columns = gather_planar(static_cast<const uint8_t*>(args.inputs[p_.x]) + image, x_zero, first, count, band,
                                    patches, &made);
          } else if (planar_) {
            columns = gather_planar(static_cast<const int8_t*>(args.inputs[p_.x]) + image, x_zero, first, count, band,
                                    patches, &made);
          } else if (p_.x_dtype == DType::kUInt8) {
            gather(static_cast<const uint8_t*>(args.inputs[p_.x]) + image, x_zero, first, count, patches);
          } else {
            gather(static_cast<const int8_t*>(args.inputs[p_.x]) + image, x_zero, first, count, patches);
          }
          std::fill_n(acc, out_per_group * count, 0u);
          int_gemm_nt(out_per_group, count, rows_, group_filters, columns, acc, count);
          write(args, n, group, first, count, acc);
        }
      }
    }
  }

 private:
  /// One element of a filter: its offset from the window's corner in one group's image,
  /// the offset of its channel's plane, and its displacement along each spatial slot.
  struct Tap {
    int64_t offset;
    int64_t plane;
    SpatialInts at;
  };

  /// Writes the patches of output positions [first, first + count) of one group's image
  /// `x` into `patches` (count rows of depth_): row t holds x - x_zero at what position
  /// first + t sees through each tap, zero in the padding (the padding holds x_zero, as
  /// ONNX's reference pads the shifted input with zeros) and past rows_.
  template <typename T>
  void gather(const T* x, int32_t x_zero, int64_t first, int64_t count, int16_t* patches) const {
    const SpatialGeometry& g = p_.g;
    const int64_t taps = rows_;
    const Tap* tap_list = taps_.data();
    for (int64_t t = 0; t < count; ++t) {
      const int64_t position = first + t;
      const SpatialInts out{position / (g.out[1] * g.out[2]), position / g.out[2] % g.out[1], position % g.out[2]};
      SpatialInts corner{};
      bool inside = true;
      for (size_t s = 0; s < kMaxSpatial; ++s) {
        corner[s] = out[s] * g.stride[s] - g.pad_begin[s];
        inside = inside && corner[s] >= 0 && corner[s] + g.extent(s) <= g.in[s];
      }
      int16_t* dst = patches + t * depth_;
      if (inside) {  // the whole window lies in the image
        const T* base = x + (corner[0] * g.in[1] + corner[1]) * g.in[2] + corner[2];
        for (int64_t r = 0; r < taps; ++r) dst[r] = static_cast<int16_t>(base[tap_list[r].offset] - x_zero);
        continue;
      }
      for (int64_t r = 0; r < taps; ++r) {
        const Tap& tap = tap_list[r];
        bool in = true;
        int64_t offset = 0;
        for (size_t s = 0; s < kMaxSpatial; ++s) {
          const int64_t i = corner[s] + tap.at[s];
          in = in && i >= 0 && i < g.in[s];
          offset = offset * g.in[s] + i;
        }
        dst[r] = in ? static_cast<int16_t>(x[tap.plane + offset] - x_zero) : int16_t{0};
      }
    }
  }

  /// Writes the accumulators of output positions [first, first + count) of one group.
  void write(const KernelArgs& args, int64_t n, int64_t group, int64_t first, int64_t count,
             const uint32_t* acc) const {
    const int32_t* bias = p_.bias >= 0 ? static_cast<const int32_t*>(args.inputs[p_.bias]) : nullptr;
    const size_t element = dtype_size(p_.requantize.dtype);
    auto* y = static_cast<uint8_t*>(args.outputs[0]);
    for (int64_t mm = 0; mm < p_.out_per_group(); ++mm) {
      const int64_t m = group * p_.out_per_group() + mm;
      const int64_t at = (n * p_.out_channels + m) * p_.g.out_size() + first;
      p_.requantize.write(args, m, acc + mm * count, count, bias != nullptr ? bias[m] : 0,
                          y + static_cast<size_t>(at) * element);
    }
  }

  /// The input rows [top, bottom) that `band` holds (gather_planar).
  struct Band {
    int64_t top = 0, bottom = 0;
  };

  /// The planar form of gather(): the input rows that output rows [first, first + count)
  /// (whole rows) see go into `band`, channels-last (pixel_ apart), x - x_zero; each
  /// patch row then copies one run of channels per tap (zeros in the padding). Returns
  /// the patches: `band` itself for a 1x1 filter that reads every position in place.
  /// Chunks come in order: rows the last chunk already made are moved, not made again.
  template <typename T>
  const int16_t* gather_planar(const T* x, int32_t x_zero, int64_t first, int64_t count, int16_t* band,
                               int16_t* patches, Band* made) const {
    const SpatialGeometry& g = p_.g;
    const int64_t channels = p_.in_per_group(), width = g.in[2], out_width = g.out[2];
    const int64_t first_row = first / out_width, last_row = (first + count) / out_width;  // [first_row, last_row)
    const int64_t top = std::max<int64_t>(0, first_row * g.stride[1] - g.pad_begin[1]);
    const int64_t bottom =
        std::max(top, std::min(g.in[1], (last_row - 1) * g.stride[1] - g.pad_begin[1] + g.extent(1)));
    const int64_t row_size = width * pixel_;
    int64_t from = top;  // the first row to make
    if (made->top <= top && top < made->bottom) {
      std::memmove(band, band + (top - made->top) * row_size,
                   static_cast<size_t>((made->bottom - top) * row_size) * sizeof(int16_t));
      from = std::min(made->bottom, bottom);
    }
    *made = {top, bottom};
    // Channels-last in tiles of kTile pixels, so that the scattered stores stay in cache.
    constexpr int64_t kTile = 64;
    const int64_t end = (bottom - top) * width;
    for (int64_t e0 = (from - top) * width; e0 < end; e0 += kTile) {
      const int64_t e1 = std::min(end, e0 + kTile);
      for (int64_t c = 0; c < channels; ++c) {
        const T* src = x + c * g.in_size() + top * width;
        int16_t* dst = band + c;
        for (int64_t e = e0; e < e1; ++e) dst[e * pixel_] = static_cast<int16_t>(src[e] - x_zero);
      }
    }
    if (direct_) return band;
    for (int64_t t = 0; t < count; ++t) {
      const int64_t oy = first_row + t / out_width, ox = t % out_width;
      int16_t* dst = patches + t * depth_;
      for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
        const int64_t iy = oy * g.stride[1] - g.pad_begin[1] + ky * g.dilation[1];
        if (iy < 0 || iy >= g.in[1]) {
          std::fill_n(dst, g.kernel[2] * channels, int16_t{0});
          dst += g.kernel[2] * channels;
          continue;
        }
        const int16_t* row = band + (iy - top) * width * channels;
        for (int64_t kx = 0; kx < g.kernel[2]; ++kx, dst += channels) {
          const int64_t ix = ox * g.stride[2] - g.pad_begin[2] + kx * g.dilation[2];
          if (ix >= 0 && ix < width) {
            std::copy_n(row + ix * channels, channels, dst);
          } else {
            std::fill_n(dst, channels, int16_t{0});
          }
        }
      }
    }
    return patches;
  }

  ConvParams p_;
  int64_t rows_ = 0;   // one group's filter length: input channels per group x taps
  int64_t depth_ = 0;  // rows_ padded for the GEMM
  int64_t chunk_ = 0;  // output positions per gathered chunk
  std::vector<Tap> taps_;
  bool planar_ = false;         // gather_planar() applies: filters hold channels innermost
  bool direct_ = false;         // and the band is the patches (1x1, unit strides, no padding)
  int64_t rows_per_chunk_ = 0;  // output rows per chunk (planar)
  int64_t band_rows_ = 0;       // input rows a chunk reads, at most (planar)
  int64_t pixel_ = 0;           // elements from one pixel to the next in the band (planar)
};

/// X and W (8-bit), the group and the geometry; the zero points' shapes.
std::string read_integer_conv(const NodeContext& node, ConvParams* p) {
  const TensorInfo* x = node.input(static_cast<size_t>(p->x));
  const TensorInfo* w = node.input(static_cast<size_t>(p->w));
  if (x == nullptr || w == nullptr) return "X and W are required";
  if (!is_8bit(x->dtype) || !is_8bit(w->dtype)) {
    return "X and W must be uint8 or int8, not " + std::string(to_string(x->dtype)) + " and " +
           std::string(to_string(w->dtype));
  }
  p->x_dtype = x->dtype;
  p->w_dtype = w->dtype;
  if (std::string why = read_spatial_input(x->shape, &p->g); !why.empty()) return why;
  if (w->shape.rank != x->shape.rank) {
    return "W has shape " + to_string(w->shape) + "; expected rank " + std::to_string(x->shape.rank);
  }
  p->groups = node.attr_int("group", 1);
  p->batch = x->shape[0];
  p->in_channels = x->shape[1];
  if (p->groups < 1 || p->in_channels % p->groups != 0) {
    return "group " + std::to_string(p->groups) + " does not divide the " + std::to_string(p->in_channels) +
           " input channels";
  }
  if (w->shape[1] != p->in_per_group() || w->shape[0] % p->groups != 0) {
    return "W has shape " + to_string(w->shape) + "; expected M x " + std::to_string(p->in_per_group()) +
           " x kernel with M divisible by group " + std::to_string(p->groups);
  }
  p->out_channels = w->shape[0];
  const std::vector<int64_t> kernel_shape = node.attr_ints("kernel_shape");
  for (int d = 0; d < p->g.rank; ++d) {
    p->g.kernel[p->g.slot(d)] = w->shape[d + 2];
    if (!kernel_shape.empty() && (kernel_shape.size() != static_cast<size_t>(p->g.rank) ||
                                  kernel_shape[static_cast<size_t>(d)] != w->shape[d + 2])) {
      return "kernel_shape does not match the spatial dims of W " + to_string(w->shape);
    }
  }
  if (std::string why = read_window_geometry(node, false, &p->g); !why.empty()) return why;
  if (node.input(static_cast<size_t>(p->x_zero)) == nullptr) p->x_zero = -1;
  if (node.input(static_cast<size_t>(p->w_zero)) == nullptr) p->w_zero = -1;
  bool per_channel = false;
  if (p->x_zero >= 0) {
    if (std::string why = check_quant_param(node, p->x_zero, "x_zero_point", p->x_dtype, 0, &per_channel);
        !why.empty()) {
      return why;
    }
  }
  if (p->w_zero >= 0) {
    if (std::string why =
            check_quant_param(node, p->w_zero, "w_zero_point", p->w_dtype, p->out_channels, &p->w_zero_per_channel);
        !why.empty()) {
      return why;
    }
  }
  return {};
}

Prepared prepare_conv_integer(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 4, 1, 1); !why.empty()) return prepare_error(node, why);
  ConvParams p;
  p.x_zero = 2;
  p.w_zero = 3;
  if (std::string why = read_integer_conv(node, &p); !why.empty()) return prepare_error(node, why);
  const Shape out = spatial_output_shape(p.batch, p.out_channels, p.g);
  if (std::string why = check_output(node, 0, out, DType::kInt32); !why.empty()) return prepare_error(node, why);
  return prepared<IntegerConvKernel>(p);
}

Prepared prepare_qlinear_conv(const NodeContext& node) {
  if (std::string why = check_arity(node, 8, 9, 1, 1); !why.empty()) return prepare_error(node, why);
  ConvParams p;
  p.x = 0;
  p.x_zero = 2;
  p.w = 3;
  p.w_zero = 5;
  if (std::string why = read_integer_conv(node, &p); !why.empty()) return prepare_error(node, why);
  if (std::string why = read_requantize(node, 1, 4, 6, 7, p.out_channels, &p.requantize); !why.empty()) {
    return prepare_error(node, why);
  }
  if (const TensorInfo* bias = node.input(8); bias != nullptr) {
    if (bias->dtype != DType::kInt32 || bias->shape != Shape{p.out_channels}) {
      return prepare_error(node, "B (input 8) must be int32 of shape [" + std::to_string(p.out_channels) + "]");
    }
    p.bias = 8;
  }
  const Shape out = spatial_output_shape(p.batch, p.out_channels, p.g);
  if (std::string why = check_output(node, 0, out, p.requantize.dtype); !why.empty()) return prepare_error(node, why);
  return prepared<IntegerConvKernel>(p);
}

// ---- com.microsoft QLinearAdd, QLinearMul ----------------------------------------------

/// The scalar scales and zero points of A (inputs 1, 2), B (4, 5) and C (6, 7); an
/// absent zero point is 0.
struct BinaryQuant {
  float a_scale, b_scale, c_scale;
  int32_t a_zero, b_zero, c_zero;
};

BinaryQuant read_binary_quant(const KernelArgs& args, DType dtype, bool has_c_zero) {
  auto zero = [&](int i) {
    return (i < 7 || has_c_zero) && args.inputs[i] != nullptr ? load_8bit(args.inputs[i], dtype, 0) : 0;
  };
  return {*static_cast<const float*>(args.inputs[1]),
          *static_cast<const float*>(args.inputs[4]),
          *static_cast<const float*>(args.inputs[6]),
          zero(2),
          zero(5),
          zero(7)};
}

/// C = saturate(round(op(a, b)) + c_zero), op in float32 as ONNX Runtime's kernels:
/// QLinearAdd: a_scale / c_scale * (a - a_zero) + b_scale / c_scale * (b - b_zero);
/// QLinearMul: (a - a_zero) * (b - b_zero) * (a_scale * b_scale / c_scale).
template <typename T, bool kMul>
class QLinearBinaryKernel final : public Kernel {
 public:
  QLinearBinaryKernel(const Shape& a, const Shape& b, const Shape& out, bool has_c_zero)
      : out_(out), has_c_zero_(has_c_zero) {
    strides_[0] = broadcast_strides(a, out);
    strides_[1] = broadcast_strides(b, out);
  }

  void run(const KernelArgs& args) const override {
    const T* a = static_cast<const T*>(args.inputs[0]);
    const T* b = static_cast<const T*>(args.inputs[3]);
    T* c = static_cast<T*>(args.outputs[0]);
    const BinaryQuant q = read_binary_quant(args, std::is_signed_v<T> ? DType::kInt8 : DType::kUInt8, has_c_zero_);
    const float a_ratio = q.a_scale / q.c_scale;
    const float b_ratio = q.b_scale / q.c_scale;
    const float ab = q.a_scale * q.b_scale;
    const float mul_ratio = ab / q.c_scale;
    BroadcastIterator it(out_, 2, strides_);
    const int64_t count = out_.num_elements();
    for (int64_t i = 0; i < count; ++i, it.next()) {
      const auto va = static_cast<float>(static_cast<int32_t>(a[it.offset(0)]) - q.a_zero);
      const auto vb = static_cast<float>(static_cast<int32_t>(b[it.offset(1)]) - q.b_zero);
      float value = 0;
      if constexpr (kMul) {
        value = va * vb * mul_ratio;
      } else {
        const float sa = a_ratio * va;
        const float sb = b_ratio * vb;
        value = sa + sb;
      }
      c[i] = round_saturate<T>(static_cast<double>(std::nearbyint(value)) + q.c_zero);
    }
  }

 private:
  Shape out_;
  std::array<int64_t, kMaxRank> strides_[2]{};
  bool has_c_zero_;
};

template <bool kMul>
Prepared prepare_qlinear_binary(const NodeContext& node) {
  if (std::string why = check_arity(node, 7, 8, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo* a = node.input(0);
  const TensorInfo* b = node.input(3);
  if (a == nullptr || b == nullptr || !is_8bit(a->dtype) || b->dtype != a->dtype) {
    return prepare_error(node, "A (input 0) and B (input 3) must both be uint8 or both int8");
  }
  bool per_channel = false;
  const char* names[] = {"", "A_scale", "A_zero_point", "", "B_scale", "B_zero_point", "C_scale", "C_zero_point"};
  for (int i : {1, 4, 6}) {
    if (std::string why = check_quant_param(node, i, names[i], DType::kFloat32, 0, &per_channel); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  for (int i : {2, 5, 7}) {
    if (node.input(static_cast<size_t>(i)) == nullptr) continue;
    if (std::string why = check_quant_param(node, i, names[i], a->dtype, 0, &per_channel); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  const bool has_c_zero = node.input(7) != nullptr;
  Shape out;
  if (!broadcast_shapes(a->shape, b->shape, &out)) {
    return prepare_error(node, "A " + to_string(a->shape) + " and B " + to_string(b->shape) + " do not broadcast");
  }
  if (std::string why = check_output(node, 0, out, a->dtype); !why.empty()) return prepare_error(node, why);
  if (a->dtype == DType::kInt8) return prepared<QLinearBinaryKernel<int8_t, kMul>>(a->shape, b->shape, out, has_c_zero);
  return prepared<QLinearBinaryKernel<uint8_t, kMul>>(a->shape, b->shape, out, has_c_zero);
}

// ---- com.microsoft QLinearGlobalAveragePool --------------------------------------------

/// Y = saturate(round(float(sum(x) - x_zero * size) * (x_scale / (y_scale * size))) +
/// y_zero) per image and channel, as ONNX Runtime computes it (float32). channels_last
/// reads X as N x spatial... x C.
template <typename T>
class QLinearGlobalAveragePoolKernel final : public Kernel {
 public:
  QLinearGlobalAveragePoolKernel(int64_t batch, int64_t channels, int64_t size, bool channels_last, bool has_y_zero)
      : batch_(batch), channels_(channels), size_(size), channels_last_(channels_last), has_y_zero_(has_y_zero) {}

  void run(const KernelArgs& args) const override {
    const T* x = static_cast<const T*>(args.inputs[0]);
    T* y = static_cast<T*>(args.outputs[0]);
    const DType dtype = std::is_signed_v<T> ? DType::kInt8 : DType::kUInt8;
    const float x_scale = *static_cast<const float*>(args.inputs[1]);
    const float y_scale = *static_cast<const float*>(args.inputs[3]);
    const int32_t x_zero = args.inputs[2] != nullptr ? load_8bit(args.inputs[2], dtype, 0) : 0;
    const int32_t y_zero = has_y_zero_ && args.inputs[4] != nullptr ? load_8bit(args.inputs[4], dtype, 0) : 0;
    const float denominator = y_scale * static_cast<float>(size_);
    const float scale = x_scale / denominator;
    const auto bias = static_cast<uint32_t>(-x_zero) * static_cast<uint32_t>(size_);
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t c = 0; c < channels_; ++c) {
        uint32_t sum = bias;
        for (int64_t s = 0; s < size_; ++s) {
          const int64_t i = channels_last_ ? (n * size_ + s) * channels_ + c : (n * channels_ + c) * size_ + s;
          sum += static_cast<uint32_t>(static_cast<int32_t>(x[i]));
        }
        const float value = static_cast<float>(as_int32(sum)) * scale;
        y[n * channels_ + c] = round_saturate<T>(static_cast<double>(std::nearbyint(value)) + y_zero);
      }
    }
  }

 private:
  int64_t batch_, channels_, size_;
  bool channels_last_, has_y_zero_;
};

Prepared prepare_qlinear_global_average_pool(const NodeContext& node) {
  if (std::string why = check_arity(node, 4, 5, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo* x = node.input(0);
  if (x == nullptr || !is_8bit(x->dtype)) return prepare_error(node, "X (input 0) must be uint8 or int8");
  if (x->shape.rank < 3) return prepare_error(node, "X has shape " + to_string(x->shape) + "; expected rank 3 or more");
  bool per_channel = false;
  const char* names[] = {"", "x_scale", "x_zero_point", "y_scale", "y_zero_point"};
  for (int i = 1; i <= 4; ++i) {
    const bool zero = i == 2 || i == 4;
    if (zero && node.input(static_cast<size_t>(i)) == nullptr) continue;
    if (std::string why = check_quant_param(node, i, names[i], zero ? x->dtype : DType::kFloat32, 0, &per_channel);
        !why.empty()) {
      return prepare_error(node, why);
    }
  }
  const int64_t layout = node.attr_int("channels_last", 0);
  if (layout != 0 && layout != 1) return prepare_error(node, "channels_last must be 0 or 1");
  const bool channels_last = layout == 1;
  const int channel_axis = channels_last ? x->shape.rank - 1 : 1;
  Shape out = x->shape;
  int64_t size = 1;
  for (int axis = 1; axis < x->shape.rank; ++axis) {
    if (axis == channel_axis) continue;
    size *= x->shape[axis];
    out[axis] = 1;
  }
  if (size == 0) return prepare_error(node, "X has no spatial elements");
  if (std::string why = check_output(node, 0, out, x->dtype); !why.empty()) return prepare_error(node, why);
  const int64_t batch = x->shape[0], channels = x->shape[channel_axis];
  if (x->dtype == DType::kInt8) {
    return prepared<QLinearGlobalAveragePoolKernel<int8_t>>(batch, channels, size, channels_last,
                                                            node.input(4) != nullptr);
  }
  return prepared<QLinearGlobalAveragePoolKernel<uint8_t>>(batch, channels, size, channels_last,
                                                           node.input(4) != nullptr);
}

}  // namespace

void add_quantized_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"MatMulInteger", prepare_matmul_integer});
  table.push_back({"ConvInteger", prepare_conv_integer});
  table.push_back({"QLinearMatMul", prepare_qlinear_matmul});
  table.push_back({"QLinearConv", prepare_qlinear_conv});
  table.push_back({"com.microsoft.QLinearAdd", prepare_qlinear_binary<false>});
  table.push_back({"com.microsoft.QLinearMul", prepare_qlinear_binary<true>});
  table.push_back({"com.microsoft.QLinearGlobalAveragePool", prepare_qlinear_global_average_pool});
}

}  // namespace plugrt::portable
