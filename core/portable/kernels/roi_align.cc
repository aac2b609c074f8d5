// SPDX-License-Identifier: Apache-2.0
// RoiAlign (opsets 10 and 16), float32, as ONNX Runtime and ONNX's reference compute
// it: each region of interest (x1, y1, x2, y2, scaled by spatial_scale, shifted by half
// a pixel with coordinate_transformation_mode half_pixel) is split into output_height x
// output_width bins, each sampled on a regular grid (sampling_ratio points a side, or
// ceil(bin size) when 0) by bilinear interpolation; a bin is the average of its samples,
// or with mode max the largest weighted corner of any sample (ONNX Runtime's definition).
// A sample more than one pixel outside the image counts as 0.
#include <algorithm>
#include <cmath>

#include "kernel_families.h"

namespace plugrt::portable {

namespace {

struct RoiConfig {
  int64_t out_h = 1, out_w = 1, sampling_ratio = 0;
  float spatial_scale = 1.0f;
  bool half_pixel = true;
  bool max = false;
};

/// One sample's four neighbours (flat offsets in a plane) and their weights.
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  float w[4] = {0, 0, 0, 0};
};

Sample bilinear_sample(float y, float x, int64_t height, int64_t width) {
  Sample s;
  if (y < -1.0f || y > static_cast<float>(height) || x < -1.0f || x > static_cast<float>(width)) return s;
  y = std::max(y, 0.0f);
  x = std::max(x, 0.0f);
  auto y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high = y_low + 1, x_high = x_low + 1;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<float>(y_low);
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<float>(x_low);
  }
  const float ly = y - static_cast<float>(y_low), lx = x - static_cast<float>(x_low);
  const float hy = 1.0f - ly, hx = 1.0f - lx;
  s.pos[0] = y_low * width + x_low;
  s.pos[1] = y_low * width + x_high;
  s.pos[2] = y_high * width + x_low;
  s.pos[3] = y_high * width + x_high;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

/// ceil(bin) samples a side when sampling_ratio is 0; a NaN or negative bin takes none,
/// and a bin larger than any image (computed regions can be anything) at most 2^16.
int64_t samples_per_bin(float bin) {
  if (!(bin > 0.0f)) return 0;
  return static_cast<int64_t>(std::ceil(std::min(bin, 65536.0f)));
}

class RoiAlignKernel final : public Kernel {
 public:
  RoiAlignKernel(const RoiConfig& c, const Shape& x, int64_t rois)
      : c_(c), batch_(x[0]), channels_(x[1]), height_(x[2]), width_(x[3]), rois_(rois) {}

  void run(const KernelArgs& args) const override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* rois = static_cast<const float*>(args.inputs[1]);
    const auto* batch_indices = static_cast<const int64_t*>(args.inputs[2]);
    float* y = static_cast<float*>(args.outputs[0]);
    const int64_t plane = height_ * width_;
    for (int64_t r = 0; r < rois_; ++r) {
      const int64_t b = std::clamp<int64_t>(batch_indices[r], 0, batch_ - 1);
      for (int64_t ch = 0; ch < channels_; ++ch) {
        region(rois + r * 4, x + (b * channels_ + ch) * plane, y + (r * channels_ + ch) * c_.out_h * c_.out_w);
      }
    }
  }

 private:
  /// Pools one channel `image` over the region `roi` into out_h x out_w values.
  void region(const float* roi, const float* image, float* out) const {
    const float offset = c_.half_pixel ? 0.5f : 0.0f;
    const float start_w = roi[0] * c_.spatial_scale - offset, start_h = roi[1] * c_.spatial_scale - offset;
    float roi_w = roi[2] * c_.spatial_scale - offset - start_w, roi_h = roi[3] * c_.spatial_scale - offset - start_h;
    if (!c_.half_pixel) {
      roi_w = std::max(roi_w, 1.0f);
      roi_h = std::max(roi_h, 1.0f);
    }
    const float bin_h = roi_h / static_cast<float>(c_.out_h), bin_w = roi_w / static_cast<float>(c_.out_w);
    const int64_t grid_h = c_.sampling_ratio > 0 ? c_.sampling_ratio : samples_per_bin(bin_h);
    const int64_t grid_w = c_.sampling_ratio > 0 ? c_.sampling_ratio : samples_per_bin(bin_w);
    const float count = static_cast<float>(std::max<int64_t>(grid_h * grid_w, 1));
    for (int64_t ph = 0; ph < c_.out_h; ++ph) {
      for (int64_t pw = 0; pw < c_.out_w; ++pw) {
        float value = 0.0f;
        bool first = true;
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const float yy = start_h + static_cast<float>(ph) * bin_h +
                           (static_cast<float>(iy) + 0.5f) * bin_h / static_cast<float>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const float xx = start_w + static_cast<float>(pw) * bin_w +
                             (static_cast<float>(ix) + 0.5f) * bin_w / static_cast<float>(grid_w);
            const Sample s = bilinear_sample(yy, xx, height_, width_);
            if (c_.max) {
              float v = s.w[0] * image[s.pos[0]];
              for (int k = 1; k < 4; ++k) v = std::max(v, s.w[k] * image[s.pos[k]]);
              value = first ? v : std::max(value, v);
              first = false;
            } else {
              value += s.w[0] * image[s.pos[0]] + s.w[1] * image[s.pos[1]] + s.w[2] * image[s.pos[2]] +
                       s.w[3] * image[s.pos[3]];
            }
          }
        }
        *out++ = c_.max ? value : value / count;
      }
    }
  }

  RoiConfig c_;
  int64_t batch_, channels_, height_, width_, rois_;
};

std::string read_roi_config(const NodeContext& node, RoiConfig* c) {
  c->out_h = node.attr_int("output_height", 1);
  c->out_w = node.attr_int("output_width", 1);
  c->sampling_ratio = node.attr_int("sampling_ratio", 0);
  c->spatial_scale = node.attr_float("spatial_scale", 1.0f);
  if (c->out_h < 1 || c->out_w < 1 || c->sampling_ratio < 0) {
    return "output_height and output_width must be positive, sampling_ratio not negative";
  }
  const std::string mode = node.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") return "mode '" + mode + "' is not avg or max";
  c->max = mode == "max";
  const std::string transform =
      node.attr_string("coordinate_transformation_mode", node.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel") {
    return "coordinate_transformation_mode '" + transform + "' is not half_pixel or output_half_pixel";
  }
  c->half_pixel = transform == "half_pixel";
  return {};
}

Prepared prepare_roi_align(const NodeContext& node) {
  if (std::string why = check_arity(node, 3, 3, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  const TensorInfo& rois = *node.input(1);
  const TensorInfo& indices = *node.input(2);
  if (std::string why = check_dtype("input", 0, &x, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_dtype("input", 1, &rois, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_dtype("input", 2, &indices, DType::kInt64); !why.empty()) return prepare_error(node, why);
  if (x.shape.rank != 4 || x.shape[0] < 1 || x.shape[2] < 1 || x.shape[3] < 1) {
    return prepare_error(node, "X has shape " + to_string(x.shape) + "; expected a non-empty [N, C, H, W]");
  }
  if (rois.shape.rank != 2 || rois.shape[1] != 4 || indices.shape != Shape{rois.shape[0]}) {
    return prepare_error(node, "rois must be [num_rois, 4] and batch_indices [num_rois], not " + to_string(rois.shape) +
                                   " and " + to_string(indices.shape));
  }
  RoiConfig c;
  if (std::string why = read_roi_config(node, &c); !why.empty()) return prepare_error(node, why);
  const Shape out{rois.shape[0], x.shape[1], c.out_h, c.out_w};
  if (std::string why = check_output(node, 0, out, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  return prepared<RoiAlignKernel>(c, x.shape, rois.shape[0]);
}

}  // namespace

void add_roi_align_kernels(std::vector<KernelEntry>& table) { table.push_back({"RoiAlign", prepare_roi_align}); }

}  // namespace plugrt::portable
