// SPDX-License-Identifier: Apache-2.0
// Object detection kernels: NonMaxSuppression.
#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <utility>

#include "kernel_families.h"

namespace plugrt::portable {

namespace {

// ---- NonMaxSuppression -----------------------------------------------------------------

/// A box that passed the score threshold, ordered as ONNX Runtime's priority queue pops
/// them: higher score first, the lower box index first among equal scores.
struct Candidate {
  float score;
  int64_t index;
};

/// Whether `a` and `b` overlap by more than `iou_threshold`, computed in float32 as ONNX
/// Runtime's SuppressByIOU (and ONNX's reference, a port of it): corners in either order,
/// a box of zero area or an empty intersection never suppresses.
bool suppresses(const float* a, const float* b, bool center_point_box, float iou_threshold) {
  float ax_min = 0, ax_max = 0, ay_min = 0, ay_max = 0;
  float bx_min = 0, bx_max = 0, by_min = 0, by_max = 0;
  if (!center_point_box) {  // [y1, x1, y2, x2], either diagonal
    ax_min = std::min(a[1], a[3]);
    ax_max = std::max(a[1], a[3]);
    bx_min = std::min(b[1], b[3]);
    bx_max = std::max(b[1], b[3]);
    ay_min = std::min(a[0], a[2]);
    ay_max = std::max(a[0], a[2]);
    by_min = std::min(b[0], b[2]);
    by_max = std::max(b[0], b[2]);
  } else {  // [x_center, y_center, width, height]
    ax_min = a[0] - a[2] / 2;
    ax_max = a[0] + a[2] / 2;
    bx_min = b[0] - b[2] / 2;
    bx_max = b[0] + b[2] / 2;
    ay_min = a[1] - a[3] / 2;
    ay_max = a[1] + a[3] / 2;
    by_min = b[1] - b[3] / 2;
    by_max = b[1] + b[3] / 2;
  }
  const float ix_min = std::max(ax_min, bx_min), ix_max = std::min(ax_max, bx_max);
  if (!(ix_max > ix_min)) return false;
  const float iy_min = std::max(ay_min, by_min), iy_max = std::min(ay_max, by_max);
  if (!(iy_max > iy_min)) return false;
  const float intersection = (ix_max - ix_min) * (iy_max - iy_min);
  if (!(intersection > 0.0f)) return false;
  const float area_a = (ax_max - ax_min) * (ay_max - ay_min);
  const float area_b = (bx_max - bx_min) * (by_max - by_min);
  const float union_area = area_a + area_b - intersection;
  if (!(area_a > 0.0f) || !(area_b > 0.0f) || !(union_area > 0.0f)) return false;
  return intersection / union_area > iou_threshold;
}

/// Selects per batch and class, greedily by score, the boxes that no box selected before
/// them overlaps by more than the IoU threshold; writes [batch, class, box] rows in that
/// order. The number selected depends on the values, so the output keeps the length the
/// graph was compiled with: a call that selects another number fails, naming the node.
class NonMaxSuppressionKernel final : public Kernel {
 public:
  NonMaxSuppressionKernel(std::string label, int64_t batches, int64_t classes, int64_t boxes, int64_t rows,
                          bool center_point_box, std::array<bool, 3> given)
      : label_(std::move(label)),
        batches_(batches),
        classes_(classes),
        boxes_(boxes),
        rows_(rows),
        center_point_box_(center_point_box),
        given_(given) {}

  size_t scratch_bytes() const override { return static_cast<size_t>(boxes_) * (sizeof(Candidate) + sizeof(int64_t)); }
  void run(const KernelArgs& args) const override {
    char ignored[1];
    (void)run_checked(args, ignored, sizeof(ignored));
  }
  bool may_fail() const override { return true; }

  bool run_checked(const KernelArgs& args, char* error, size_t error_capacity) const override {
    const auto* boxes = static_cast<const float*>(args.inputs[0]);
    const auto* scores = static_cast<const float*>(args.inputs[1]);
    // Absent: no box is selected (ONNX's default of 0); a negative count selects none.
    int64_t max_per_class = 0;
    if (given_[0]) max_per_class = std::max<int64_t>(*static_cast<const int64_t*>(args.inputs[2]), 0);
    const float iou_threshold = given_[1] ? *static_cast<const float*>(args.inputs[3]) : 0.0f;
    const bool has_score_threshold = given_[2];
    const float score_threshold = has_score_threshold ? *static_cast<const float*>(args.inputs[4]) : 0.0f;
    if (!(iou_threshold >= 0.0f && iou_threshold <= 1.0f)) {
      std::snprintf(error, error_capacity, "%s: iou_threshold %g is outside [0, 1]", label_.c_str(),
                    static_cast<double>(iou_threshold));
      return false;
    }
    auto* candidates = static_cast<Candidate*>(args.scratch);
    auto* selected = reinterpret_cast<int64_t*>(candidates + boxes_);
    auto* out = static_cast<int64_t*>(args.outputs[0]);
    int64_t count = 0;
    for (int64_t b = 0; b < batches_; ++b) {
      const float* batch_boxes = boxes + b * boxes_ * 4;
      for (int64_t c = 0; c < classes_; ++c) {
        const float* class_scores = scores + (b * classes_ + c) * boxes_;
        int64_t num_candidates = 0;
        for (int64_t i = 0; i < boxes_; ++i) {
          const float score = class_scores[i];
          // A NaN score is never selected (it has no place in the order).
          if (score != score || (has_score_threshold && !(score > score_threshold))) continue;
          candidates[num_candidates++] = Candidate{score, i};
        }
        std::sort(candidates, candidates + num_candidates, [](const Candidate& x, const Candidate& y) {
          return x.score > y.score || (x.score == y.score && x.index < y.index);
        });
        int64_t num_selected = 0;
        for (int64_t k = 0; k < num_candidates && num_selected < max_per_class; ++k) {
          const float* box = batch_boxes + candidates[k].index * 4;
          bool keep = true;
          for (int64_t s = 0; s < num_selected && keep; ++s) {
            keep = !suppresses(box, batch_boxes + selected[s] * 4, center_point_box_, iou_threshold);
          }
          if (!keep) continue;
          selected[num_selected++] = candidates[k].index;
          if (count < rows_) {
            out[count * 3] = b;
            out[count * 3 + 1] = c;
            out[count * 3 + 2] = candidates[k].index;
          }
          ++count;
        }
      }
    }
    if (count != rows_) {
      std::snprintf(error, error_capacity,
                    "%s: selected %lld boxes, but its output (selected_indices) was compiled for %lld; the number "
                    "selected depends on the values, so the model must declare the length its inputs give",
                    label_.c_str(), static_cast<long long>(count), static_cast<long long>(rows_));
      return false;
    }
    return true;
  }

 private:
  std::string label_;
  int64_t batches_, classes_, boxes_, rows_;
  bool center_point_box_;
  std::array<bool, 3> given_;  // max_output_boxes_per_class, iou_threshold, score_threshold
};

/// Checks that optional input `index`, when given, has one element of `dtype`.
std::string check_scalar(const NodeContext& node, size_t index, DType dtype) {
  const TensorInfo* info = node.input(index);
  if (info == nullptr) return {};
  if (std::string why = check_dtype("input", index, info, dtype); !why.empty()) return why;
  if (info->num_elements() != 1 || info->shape.rank > 1) {
    return "input " + std::to_string(index) + " must hold one element, not shape " + to_string(info->shape);
  }
  return {};
}

/// NonMaxSuppression(boxes [B, N, 4], scores [B, C, N], max_output_boxes_per_class,
/// iou_threshold, score_threshold) -> int64 [K, 3] (opsets 10 and 11). The three last
/// inputs are optional and read when the node runs (constants or given at run time). K is
/// the output's compiled length (declared by the model): at most B * C * N.
Prepared prepare_non_max_suppression(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 5, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& boxes = *node.input(0);
  const TensorInfo& scores = *node.input(1);
  if (std::string why = check_dtype("input", 0, &boxes, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_dtype("input", 1, &scores, DType::kFloat32); !why.empty()) {
    return prepare_error(node, why);
  }
  if (boxes.shape.rank != 3 || boxes.shape[2] != 4) {
    return prepare_error(node,
                         "the boxes (input 0) must have shape [batches, boxes, 4], not " + to_string(boxes.shape));
  }
  if (scores.shape.rank != 3 || scores.shape[0] != boxes.shape[0] || scores.shape[2] != boxes.shape[1]) {
    return prepare_error(node, "the scores (input 1) must have shape [" + std::to_string(boxes.shape[0]) +
                                   ", classes, " + std::to_string(boxes.shape[1]) + "] for boxes of shape " +
                                   to_string(boxes.shape) + ", not " + to_string(scores.shape));
  }
  for (const auto& [index, dtype] :
       {std::pair<size_t, DType>{2, DType::kInt64}, {3, DType::kFloat32}, {4, DType::kFloat32}}) {
    if (std::string why = check_scalar(node, index, dtype); !why.empty()) return prepare_error(node, why);
  }
  const int64_t center_point_box = node.attr_int("center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1) {
    return prepare_error(node, "center_point_box must be 0 or 1, not " + std::to_string(center_point_box));
  }
  const TensorInfo* out = node.output(0);
  if (out == nullptr) return prepare_error(node, "output 0 is missing");
  if (std::string why = check_dtype("output", 0, out, DType::kInt64); !why.empty()) return prepare_error(node, why);
  const int64_t batches = boxes.shape[0], num_boxes = boxes.shape[1], classes = scores.shape[1];
  if (out->shape.rank != 2 || out->shape[1] != 3) {
    return prepare_error(node, "output 0 must have shape [selected, 3], not " + to_string(out->shape));
  }
  // Each (batch, class) selects each of its boxes at most once.
  const int64_t rows = out->shape[0];
  if (rows > batches * classes * num_boxes) {
    return prepare_error(node, "output 0 has " + std::to_string(rows) + " rows, but at most " +
                                   std::to_string(batches * classes * num_boxes) + " boxes can be selected");
  }
  std::string label = std::string(node.op_type()) + (node.name().empty() ? "" : " '" + std::string(node.name()) + "'");
  const std::array<bool, 3> given{node.input(2) != nullptr, node.input(3) != nullptr, node.input(4) != nullptr};
  return prepared<NonMaxSuppressionKernel>(std::move(label), batches, classes, num_boxes, rows, center_point_box != 0,
                                           given);
}

}  // namespace

void add_detection_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"NonMaxSuppression", prepare_non_max_suppression});
}

}  // namespace plugrt::portable
