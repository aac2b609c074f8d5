// SPDX-License-Identifier: Apache-2.0
// Pooling kernels, float32, 1 to 3 spatial dimensions: MaxPool, AveragePool,
// GlobalAveragePool and GlobalMaxPool (MaxPool's Indices output and other dtypes:
// max_pool.cc).
#include <algorithm>
#include <limits>

#include "kernel_families.h"
#include "max_pool.h"
#include "spatial.h"

namespace plugrt::portable {

namespace {

enum class PoolKind { kMax, kAverage };

/// Slides a window over each N x C plane. Windows are clipped to the input; an average
/// divides by the taps inside the input, or with count_include_pad by the taps inside
/// the padded input (as PyTorch, where a ceil_mode window can reach past the padding).
class PoolKernel final : public Kernel {
 public:
  PoolKernel(PoolKind kind, const SpatialGeometry& g, int64_t planes, bool count_include_pad)
      : kind_(kind), g_(g), planes_(planes), count_include_pad_(count_include_pad) {}

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    for (int64_t plane = 0; plane < planes_; ++plane) {
      const float* in = x + plane * g_.in_size();
      float* out = y + plane * g_.out_size();
      for (int64_t oz = 0; oz < g_.out[0]; ++oz) {
        for (int64_t oy = 0; oy < g_.out[1]; ++oy) {
          for (int64_t ox = 0; ox < g_.out[2]; ++ox) *out++ = window(in, {oz, oy, ox});
        }
      }
    }
  }

 private:
  /// Taps of the window starting at `start` along slot `s`: [first, last) inside the
  /// input, and how many lie inside the padded input.
  struct Taps {
    int64_t first, last, padded;
  };
  Taps taps(size_t s, int64_t start) const {
    Taps t{};
    valid_range(start, g_.dilation[s], g_.in[s], g_.kernel[s], &t.first, &t.last);
    int64_t lo = 0;
    valid_range(start + g_.pad_begin[s], g_.dilation[s], g_.in[s] + g_.pad_begin[s] + g_.pad_end[s], g_.kernel[s], &lo,
                &t.padded);
    t.padded -= lo;
    return t;
  }

  float window(const float* in, const SpatialInts& o) const {
    SpatialInts start{};
    Taps t[kMaxSpatial];
    for (size_t s = 0; s < kMaxSpatial; ++s) {
      start[s] = o[s] * g_.stride[s] - g_.pad_begin[s];
      t[s] = taps(s, start[s]);
    }
    float max = std::numeric_limits<float>::lowest();
    float sum = 0.0f;
    for (int64_t kz = t[0].first; kz < t[0].last; ++kz) {
      for (int64_t ky = t[1].first; ky < t[1].last; ++ky) {
        const float* row =
            in + ((start[0] + kz * g_.dilation[0]) * g_.in[1] + start[1] + ky * g_.dilation[1]) * g_.in[2];
        for (int64_t kx = t[2].first; kx < t[2].last; ++kx) {
          const float value = row[start[2] + kx * g_.dilation[2]];
          max = std::max(max, value);
          sum += value;
        }
      }
    }
    if (kind_ == PoolKind::kMax) return max;
    const int64_t count = count_include_pad_
                              ? t[0].padded * t[1].padded * t[2].padded
                              : (t[0].last - t[0].first) * (t[1].last - t[1].first) * (t[2].last - t[2].first);
    return count > 0 ? sum / static_cast<float>(count) : 0.0f;
  }

  PoolKind kind_;
  SpatialGeometry g_;
  int64_t planes_;
  bool count_include_pad_;
};

Prepared prepare_pool(const NodeContext& node, PoolKind kind) {
  if (std::string why = check_arity(node, 1, 1, 1, kind == PoolKind::kMax ? 2 : 1); !why.empty()) {
    return prepare_error(node, why);
  }
  const TensorInfo& x = *node.input(0);
  // MaxPool with its Indices output or on other dtypes: max_pool.cc.
  const bool general = kind == PoolKind::kMax && (node.output(1) != nullptr || x.dtype != DType::kFloat32);
  if (std::string why = check_dtype("input", 0, &x, DType::kFloat32); !why.empty() && !general) {
    return prepare_error(node, why);
  }
  SpatialGeometry g;
  if (std::string why = read_spatial_input(x.shape, &g); !why.empty()) return prepare_error(node, why);
  const std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  if (kernel.size() != static_cast<size_t>(g.rank)) {
    return prepare_error(
        node, "kernel_shape has " + std::to_string(kernel.size()) + " values, expected " + std::to_string(g.rank));
  }
  for (int d = 0; d < g.rank; ++d) {
    if (kernel[static_cast<size_t>(d)] < 1) return prepare_error(node, "kernel_shape values must be positive");
    g.kernel[g.slot(d)] = kernel[static_cast<size_t>(d)];
  }
  const int64_t ceil_mode = node.attr_int("ceil_mode", 0);
  if (ceil_mode != 0 && ceil_mode != 1) return prepare_error(node, "ceil_mode must be 0 or 1");
  if (std::string why = read_window_geometry(node, ceil_mode == 1, &g); !why.empty()) return prepare_error(node, why);
  if (general) return prepare_max_pool_general(node, g);
  const Shape out = spatial_output_shape(x.shape[0], x.shape[1], g);
  if (std::string why = check_output(node, 0, out, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  const bool count_include_pad = node.attr_int("count_include_pad", 0) != 0;
  return prepared<PoolKernel>(kind, g, x.shape[0] * x.shape[1], count_include_pad);
}

Prepared prepare_max_pool(const NodeContext& node) { return prepare_pool(node, PoolKind::kMax); }
Prepared prepare_average_pool(const NodeContext& node) { return prepare_pool(node, PoolKind::kAverage); }

// ---- Global pooling: one value per N x C plane --------------------------------------------

class GlobalPoolKernel final : public Kernel {
 public:
  GlobalPoolKernel(PoolKind kind, int64_t planes, int64_t size) : kind_(kind), planes_(planes), size_(size) {}

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    for (int64_t plane = 0; plane < planes_; ++plane) {
      const float* in = x + plane * size_;
      if (kind_ == PoolKind::kMax) {
        float max = std::numeric_limits<float>::lowest();
        for (int64_t i = 0; i < size_; ++i) max = std::max(max, in[i]);
        y[plane] = max;
      } else {
        float sum = 0.0f;
        for (int64_t i = 0; i < size_; ++i) sum += in[i];
        y[plane] = size_ > 0 ? sum / static_cast<float>(size_) : 0.0f;
      }
    }
  }

 private:
  PoolKind kind_;
  int64_t planes_, size_;
};

Prepared prepare_global_pool(const NodeContext& node, PoolKind kind) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  if (std::string why = check_dtype("input", 0, &x, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  if (x.shape.rank < 3)
    return prepare_error(node, "input has shape " + to_string(x.shape) + "; expected rank 3 or more");
  Shape out = x.shape;
  for (int axis = 2; axis < out.rank; ++axis) out[axis] = 1;
  if (std::string why = check_output(node, 0, out, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  return prepared<GlobalPoolKernel>(kind, x.shape[0] * x.shape[1], x.shape.product(2, x.shape.rank));
}

Prepared prepare_global_average_pool(const NodeContext& node) { return prepare_global_pool(node, PoolKind::kAverage); }
Prepared prepare_global_max_pool(const NodeContext& node) { return prepare_global_pool(node, PoolKind::kMax); }

}  // namespace

void add_pooling_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"AveragePool", prepare_average_pool});
  table.push_back({"GlobalAveragePool", prepare_global_average_pool});
  table.push_back({"GlobalMaxPool", prepare_global_max_pool});
  table.push_back({"MaxPool", prepare_max_pool});
}

}  // namespace plugrt::portable
