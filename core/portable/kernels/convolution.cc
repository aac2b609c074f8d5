// SPDX-License-Identifier: Apache-2.0
// Convolution kernels, float32, 1 to 3 spatial dimensions.
//
// Conv lowers each group of each image to a GEMM: im2col unfolds a chunk of output
// positions into scratch (one row per input channel and kernel tap), and the group's
// filters multiply it. A 1x1 convolution without stride or padding multiplies the
// input directly; a grouped convolution with one input channel per group (depthwise)
// uses a direct loop. ConvTranspose does the reverse: a GEMM of the transposed filters
// with a chunk of input positions, then col2im adds each column into the output.
#include <algorithm>
#include <cstring>

#include "gemm.h"
#include "kernel_families.h"
#include "spatial.h"

namespace plugrt::portable {

namespace {

/// Scratch bytes an im2col chunk aims at: small enough to stay in cache.
constexpr int64_t kChunkBytes = int64_t{1} << 20;

/// Columns per chunk for `rows` rows of floats, out of `total`.
int64_t chunk_columns(int64_t rows, int64_t total) {
  const int64_t columns = std::max<int64_t>(64, kChunkBytes / (4 * std::max<int64_t>(rows, 1)));
  return std::max<int64_t>(1, std::min(total, columns));
}

/// What both kernels need: the geometry, channel counts and whether a bias is given.
struct ConvParams {
  SpatialGeometry g;
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t groups = 1;
  bool has_bias = false;

  int64_t in_per_group() const { return in_channels / groups; }
  int64_t out_per_group() const { return out_channels / groups; }
};

/// Sets every output channel to its bias (or zero); the kernels then accumulate.
void fill_bias(const ConvParams& p, const float* bias, float* out) {
  const int64_t size = p.g.out_size();
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t m = 0; m < p.out_channels; ++m) {
      std::fill_n(out + (n * p.out_channels + m) * size, size, bias != nullptr ? bias[m] : 0.0f);
    }
  }
}

/// Reads W's spatial dims into g.kernel, checking them against kernel_shape when given.
std::string read_kernel_shape(const NodeContext& node, const Shape& w, SpatialGeometry* g) {
  std::vector<int64_t> attribute = node.attr_ints("kernel_shape");
  for (int d = 0; d < g->rank; ++d) {
    g->kernel[g->slot(d)] = w[d + 2];
    if (!attribute.empty() &&
        (attribute.size() != static_cast<size_t>(g->rank) || attribute[static_cast<size_t>(d)] != w[d + 2])) {
      return "kernel_shape does not match the spatial dims of W " + to_string(w);
    }
  }
  return {};
}

// ---- Conv ------------------------------------------------------------------------------

class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const ConvParams& p) : p_(p) {
    const SpatialGeometry& g = p_.g;
    rows_ = p_.in_per_group() * g.kernel_size();
    depthwise_ = p_.groups > 1 && p_.in_per_group() == 1;
    pointwise_ = g.kernel_size() == 1;
    for (size_t d = 0; d < kMaxSpatial; ++d) {
      pointwise_ = pointwise_ && g.stride[d] == 1 && g.pad_begin[d] == 0 && g.pad_end[d] == 0;
    }
    chunk_ = chunk_columns(rows_, g.out_size());
  }

  size_t scratch_bytes() const override {
    return depthwise_ || pointwise_ ? 0 : static_cast<size_t>(rows_ * chunk_) * sizeof(float);
  }

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* w = static_cast<const float*>(args.inputs[1]);
    float* y = static_cast<float*>(args.outputs[0]);
    fill_bias(p_, p_.has_bias ? static_cast<const float*>(args.inputs[2]) : nullptr, y);
    const int64_t in_size = p_.g.in_size();
    const int64_t out_size = p_.g.out_size();
    const int64_t out_per_group = p_.out_per_group();
    float* columns = static_cast<float*>(args.scratch);
    for (int64_t n = 0; n < p_.batch; ++n) {
      if (depthwise_) {
        for (int64_t m = 0; m < p_.out_channels; ++m) {
          const float* image = x + (n * p_.in_channels + m / out_per_group) * in_size;
          direct(image, w + m * rows_, y + (n * p_.out_channels + m) * out_size);
        }
        continue;
      }
      for (int64_t group = 0; group < p_.groups; ++group) {
        const float* image = x + (n * p_.in_channels + group * p_.in_per_group()) * in_size;
        const MatrixRef filters{w + group * out_per_group * rows_, rows_};
        float* out = y + (n * p_.out_channels + group * out_per_group) * out_size;
        if (pointwise_) {
          gemm_accumulate(out_per_group, out_size, rows_, 1.0f, filters, {image, in_size}, out, out_size);
          continue;
        }
        for (int64_t first = 0; first < out_size; first += chunk_) {
          const int64_t count = std::min(chunk_, out_size - first);
          im2col(image, first, count, columns);
          gemm_accumulate(out_per_group, count, rows_, 1.0f, filters, {columns, count}, out + first, out_size);
        }
      }
    }
  }

 private:
  /// Unfolds output positions [first, first + count) of one group's image into
  /// `columns` (rows_ x count): row (c, kz, ky, kx) holds the input each position sees
  /// through that tap, zero in the padding.
  void im2col(const float* image, int64_t first, int64_t count, float* columns) const {
    const SpatialGeometry& g = p_.g;
    float* dst = columns;
    for (int64_t c = 0; c < p_.in_per_group(); ++c) {
      const float* plane = image + c * g.in_size();
      for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
        for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
          for (int64_t kx = 0; kx < g.kernel[2]; ++kx, dst += count) {
            const int64_t x_offset = kx * g.dilation[2] - g.pad_begin[2];
            int64_t oz = first / (g.out[1] * g.out[2]);
            int64_t oy = first / g.out[2] % g.out[1];
            int64_t ox = first % g.out[2];
            for (int64_t done = 0; done < count;) {
              const int64_t run = std::min(count - done, g.out[2] - ox);  // the rest of one output row
              const int64_t iz = oz * g.stride[0] - g.pad_begin[0] + kz * g.dilation[0];
              const int64_t iy = oy * g.stride[1] - g.pad_begin[1] + ky * g.dilation[1];
              // Within the run, positions [lo, hi) read inside the input row; the rest is padding.
              int64_t lo = 0, hi = 0;
              float* row = dst + done;
              if (iz >= 0 && iz < g.in[0] && iy >= 0 && iy < g.in[1]) {
                valid_range(x_offset, g.stride[2], g.in[2], g.out[2], &lo, &hi);
                lo = std::clamp(lo - ox, int64_t{0}, run);
                hi = std::clamp(hi - ox, int64_t{0}, run);
                const float* src = plane + (iz * g.in[1] + iy) * g.in[2];
                for (int64_t t = lo; t < hi; ++t) row[t] = src[(ox + t) * g.stride[2] + x_offset];
              }
              std::fill(row, row + lo, 0.0f);
              std::fill(row + hi, row + run, 0.0f);
              done += run;
              ox = 0;
              if (++oy == g.out[1]) {
                oy = 0;
                ++oz;
              }
            }
          }
        }
      }
    }
  }

  /// One output plane from one input plane and one filter, adding into `out`.
  void direct(const float* plane, const float* filter, float* out) const {
    const SpatialGeometry& g = p_.g;
    for (int64_t oz = 0; oz < g.out[0]; ++oz) {
      for (int64_t oy = 0; oy < g.out[1]; ++oy) {
        float* row = out + (oz * g.out[1] + oy) * g.out[2];
        for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
          const int64_t iz = oz * g.stride[0] - g.pad_begin[0] + kz * g.dilation[0];
          if (iz < 0 || iz >= g.in[0]) continue;
          for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
            const int64_t iy = oy * g.stride[1] - g.pad_begin[1] + ky * g.dilation[1];
            if (iy < 0 || iy >= g.in[1]) continue;
            const float* src = plane + (iz * g.in[1] + iy) * g.in[2];
            const float* taps = filter + (kz * g.kernel[1] + ky) * g.kernel[2];
            for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
              const int64_t offset = kx * g.dilation[2] - g.pad_begin[2];
              int64_t lo = 0, hi = 0;
              valid_range(offset, g.stride[2], g.in[2], g.out[2], &lo, &hi);
              for (int64_t ox = lo; ox < hi; ++ox) row[ox] += taps[kx] * src[ox * g.stride[2] + offset];
            }
          }
        }
      }
    }
  }

  ConvParams p_;
  int64_t rows_ = 0;   // one group's filter length: input channels per group x taps
  int64_t chunk_ = 0;  // output positions per im2col chunk
  bool depthwise_ = false;
  bool pointwise_ = false;
};

/// Checks X, W and B of Conv or ConvTranspose; fills the channel counts and g.rank,
/// g.in and g.kernel. W is M x C/group x k... for Conv, C x M/group x k... transposed.
std::string read_conv_inputs(const NodeContext& node, bool transposed, ConvParams* p) {
  if (std::string why = check_arity(node, 2, 3, 1, 1); !why.empty()) return why;
  for (size_t i = 0; i < 3; ++i) {
    if (std::string why = check_dtype("input", i, node.input(i), DType::kFloat32); !why.empty()) return why;
  }
  const Shape& x = node.input(0)->shape;
  const Shape& w = node.input(1)->shape;
  if (std::string why = read_spatial_input(x, &p->g); !why.empty()) return why;
  if (w.rank != x.rank) return "W has shape " + to_string(w) + "; expected rank " + std::to_string(x.rank);
  p->groups = node.attr_int("group", 1);
  p->batch = x[0];
  p->in_channels = x[1];
  if (p->groups < 1 || p->in_channels % p->groups != 0) {
    return "group " + std::to_string(p->groups) + " does not divide the " + std::to_string(p->in_channels) +
           " input channels";
  }
  if (transposed) {
    if (w[0] != p->in_channels) {
      return "W has shape " + to_string(w) + "; its first dim must be the " + std::to_string(p->in_channels) +
             " input channels";
    }
    p->out_channels = w[1] * p->groups;
  } else {
    if (w[1] != p->in_per_group() || w[0] % p->groups != 0) {
      return "W has shape " + to_string(w) + "; expected M x " + std::to_string(p->in_per_group()) +
             " x kernel with M divisible by group " + std::to_string(p->groups);
    }
    p->out_channels = w[0];
  }
  const TensorInfo* b = node.input(2);
  p->has_bias = b != nullptr;
  if (b != nullptr && b->shape != Shape{p->out_channels}) {
    return "B has shape " + to_string(b->shape) + "; expected [" + std::to_string(p->out_channels) + "]";
  }
  return read_kernel_shape(node, w, &p->g);
}

Prepared prepare_conv(const NodeContext& node) {
  ConvParams p;
  if (std::string why = read_conv_inputs(node, false, &p); !why.empty()) return prepare_error(node, why);
  if (std::string why = read_window_geometry(node, false, &p.g); !why.empty()) return prepare_error(node, why);
  const Shape out = spatial_output_shape(p.batch, p.out_channels, p.g);
  if (std::string why = check_output(node, 0, out, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  return prepared<ConvKernel>(p);
}

// ---- ConvTranspose ---------------------------------------------------------------------

class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(const ConvParams& p) : p_(p) {
    rows_ = p_.out_per_group() * p_.g.kernel_size();
    chunk_ = chunk_columns(rows_, p_.g.in_size());
  }

  size_t scratch_bytes() const override { return static_cast<size_t>(rows_ * chunk_) * sizeof(float); }

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* w = static_cast<const float*>(args.inputs[1]);
    float* y = static_cast<float*>(args.outputs[0]);
    fill_bias(p_, p_.has_bias ? static_cast<const float*>(args.inputs[2]) : nullptr, y);
    const int64_t in_size = p_.g.in_size();
    const int64_t in_per_group = p_.in_per_group();
    float* columns = static_cast<float*>(args.scratch);
    for (int64_t n = 0; n < p_.batch; ++n) {
      for (int64_t group = 0; group < p_.groups; ++group) {
        const float* image = x + (n * p_.in_channels + group * in_per_group) * in_size;
        // W's group block is C/group x rows_; its transpose maps input channels to taps.
        const MatrixRef filters{w + group * in_per_group * rows_, rows_, true};
        float* out = y + (n * p_.out_channels + group * p_.out_per_group()) * p_.g.out_size();
        for (int64_t first = 0; first < in_size; first += chunk_) {
          const int64_t count = std::min(chunk_, in_size - first);
          std::fill_n(columns, rows_ * count, 0.0f);
          gemm_accumulate(rows_, count, in_per_group, 1.0f, filters, {image + first, in_size}, columns, count);
          col2im(columns, first, count, out);
        }
      }
    }
  }

 private:
  /// Adds `columns` (rows_ x count, for input positions [first, first + count)) into
  /// the group's output channels: row (m, kz, ky, kx) lands at position * stride +
  /// tap * dilation - pad_begin.
  void col2im(const float* columns, int64_t first, int64_t count, float* out) const {
    const SpatialGeometry& g = p_.g;
    const float* src = columns;
    for (int64_t m = 0; m < p_.out_per_group(); ++m) {
      float* plane = out + m * g.out_size();
      for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
        for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
          for (int64_t kx = 0; kx < g.kernel[2]; ++kx, src += count) {
            const int64_t x_offset = kx * g.dilation[2] - g.pad_begin[2];
            int64_t iz = first / (g.in[1] * g.in[2]);
            int64_t iy = first / g.in[2] % g.in[1];
            int64_t ix = first % g.in[2];
            for (int64_t done = 0; done < count;) {
              const int64_t run = std::min(count - done, g.in[2] - ix);  // the rest of one input row
              const int64_t oz = iz * g.stride[0] - g.pad_begin[0] + kz * g.dilation[0];
              const int64_t oy = iy * g.stride[1] - g.pad_begin[1] + ky * g.dilation[1];
              if (oz >= 0 && oz < g.out[0] && oy >= 0 && oy < g.out[1]) {
                // Input positions whose output x lies inside the output row.
                int64_t lo = 0, hi = 0;
                valid_range(x_offset, g.stride[2], g.out[2], g.in[2], &lo, &hi);
                lo = std::max(lo, ix);
                hi = std::min(hi, ix + run);
                float* row = plane + (oz * g.out[1] + oy) * g.out[2];
                const float* values = src + done;  // values[t - ix] is input x position t
                for (int64_t t = lo; t < hi; ++t) row[t * g.stride[2] + x_offset] += values[t - ix];
              }
              done += run;
              ix = 0;
              if (++iy == g.in[1]) {
                iy = 0;
                ++iz;
              }
            }
          }
        }
      }
    }
  }

  ConvParams p_;
  int64_t rows_ = 0;   // one group's output channels x taps
  int64_t chunk_ = 0;  // input positions per chunk
};

/// ConvTranspose's output size and padding along each spatial dim (ONNX's formulas:
/// output_shape, when given, sets the padding; SAME_* aims at input x stride).
std::string read_transpose_geometry(const NodeContext& node, SpatialGeometry* g) {
  const size_t rank = static_cast<size_t>(g->rank);
  std::vector<int64_t> strides, dilations, pads, output_padding;
  AutoPad auto_pad = AutoPad::kNotSet;
  if (std::string why = read_spatial_ints(node, "strides", rank, 1, 1, &strides); !why.empty()) return why;
  if (std::string why = read_spatial_ints(node, "dilations", rank, 1, 1, &dilations); !why.empty()) return why;
  if (std::string why = read_spatial_ints(node, "pads", 2 * rank, 0, 0, &pads); !why.empty()) return why;
  if (std::string why = read_spatial_ints(node, "output_padding", rank, 0, 0, &output_padding); !why.empty()) {
    return why;
  }
  if (std::string why = read_auto_pad(node, &auto_pad); !why.empty()) return why;
  std::vector<int64_t> output_shape = node.attr_ints("output_shape");
  if (output_shape.size() == rank + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != rank) {
    return "output_shape has " + std::to_string(output_shape.size()) + " values, expected " + std::to_string(rank);
  }
  for (size_t d = 0; d < rank; ++d) {
    const size_t s = g->slot(static_cast<int>(d));
    g->stride[s] = strides[d];
    g->dilation[s] = dilations[d];
    const int64_t natural = strides[d] * (g->in[s] - 1) + output_padding[d] + g->extent(s);
    if (output_shape.empty() && auto_pad == AutoPad::kNotSet) {
      g->pad_begin[s] = pads[d];
      g->pad_end[s] = pads[d + rank];
      g->out[s] = natural - pads[d] - pads[d + rank];
      if (g->out[s] < 0) return "pads exceed the output along spatial axis " + std::to_string(d);
      continue;
    }
    if (output_shape.empty() && auto_pad == AutoPad::kValid) {
      g->out[s] = natural;
      continue;
    }
    g->out[s] = output_shape.empty() ? g->in[s] * strides[d] : output_shape[d];
    if (g->out[s] < 0) return "output_shape has a negative value";
    // An output larger than the natural one gets no negative padding: its end holds the bias.
    const int64_t total = std::max<int64_t>(0, natural - g->out[s]);
    g->pad_begin[s] = auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
    g->pad_end[s] = total - g->pad_begin[s];
  }
  return {};
}

Prepared prepare_conv_transpose(const NodeContext& node) {
  ConvParams p;
  if (std::string why = read_conv_inputs(node, true, &p); !why.empty()) return prepare_error(node, why);
  if (std::string why = read_transpose_geometry(node, &p.g); !why.empty()) return prepare_error(node, why);
  const Shape out = spatial_output_shape(p.batch, p.out_channels, p.g);
  if (std::string why = check_output(node, 0, out, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  return prepared<ConvTransposeKernel>(p);
}

}  // namespace

void add_convolution_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"Conv", prepare_conv});
  table.push_back({"ConvTranspose", prepare_conv_transpose});
}

}  // namespace plugrt::portable
