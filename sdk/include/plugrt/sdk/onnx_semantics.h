// SPDX-License-Identifier: Apache-2.0
/// \file onnx_semantics.h
/// The ONNX rules that every backend's partition and preprocess apply again and again:
/// window geometry (kernel, strides, dilations, pads with auto_pad), NumPy broadcasting,
/// negative axes, and a Gemm with constant weights as a dense layer. Header-only; link plugrt::sdk_graph.
///
/// Each check returns "" when the node follows the rule, otherwise the reason in words a
/// user reads in `plugrt compile`'s summary of nodes a backend leaves.
#ifndef PLUGRT_SDK_ONNX_SEMANTICS_H_
#define PLUGRT_SDK_ONNX_SEMANTICS_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plugrt/sdk/graph_view.h"

namespace plugrt::sdk {

/// The geometry of a window op (Conv, MaxPool, AveragePool...) over the spatial dims of
/// an N, C, spatial... input, with auto_pad resolved into explicit pads.
struct Window {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> begin, end;  ///< pads before and after, per spatial dim
};

/// Reads `strides`, `dilations`, `pads` and `auto_pad` (ONNX's defaults when absent) for a
/// window of `kernel` over `input` (rank 3 or more). The caller checks what its library
/// cannot do (dilations in pooling, bounds on sizes).
inline std::string resolve_window(const ir::Node& node, const std::vector<int64_t>& input,
                                  const std::vector<int64_t>& kernel, Window* window) {
  if (input.size() < 3) return "the input has rank " + std::to_string(input.size()) + ", below 3";
  const size_t spatial = input.size() - 2;
  const std::vector<int64_t> ones(spatial, 1);
  window->kernel = kernel;
  window->strides = GraphView::ints_attribute(node, "strides", ones);
  window->dilations = GraphView::ints_attribute(node, "dilations", ones);
  std::vector<int64_t> pads = GraphView::ints_attribute(node, "pads", std::vector<int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || window->strides.size() != spatial || window->dilations.size() != spatial ||
      pads.size() != 2 * spatial) {
    return "kernel, strides, dilations or pads do not match the " + std::to_string(spatial) + " spatial dims";
  }
  // Bounded so that extents and padded sizes cannot overflow (inputs hold at most 2^40).
  constexpr int64_t kMaxWindowValue = int64_t{1} << 31;
  for (size_t i = 0; i < spatial; ++i) {
    if (kernel[i] < 1 || window->strides[i] < 1 || window->dilations[i] < 1) {
      return "a kernel, stride or dilation is below 1";
    }
    if (kernel[i] > kMaxWindowValue || window->strides[i] > kMaxWindowValue || window->dilations[i] > kMaxWindowValue) {
      return "a kernel, stride or dilation is above 2^31";
    }
  }
  for (int64_t pad : pads) {
    if (pad > kMaxWindowValue) return "a pad is above 2^31";
  }
  const std::string auto_pad = GraphView::string_attribute(node, "auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // The output keeps ceil(input / stride); the odd pad goes at the end (UPPER) or the
    // beginning (LOWER).
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t in = input[2 + i], stride = window->strides[i];
      const int64_t extent = (kernel[i] - 1) * window->dilations[i] + 1;
      const int64_t out = (in + stride - 1) / stride;
      const int64_t total = std::max<int64_t>(0, (out - 1) * stride + extent - in);
      const int64_t small = total / 2;
      pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[i + spatial] = total - pads[i];
    }
  } else if (auto_pad == "VALID") {
    std::fill(pads.begin(), pads.end(), 0);
  } else if (auto_pad != "NOTSET") {
    return "auto_pad '" + auto_pad + "' is unknown";
  }
  for (int64_t pad : pads) {
    if (pad < 0) return "a pad is negative";
  }
  window->begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(spatial));
  window->end.assign(pads.begin() + static_cast<std::ptrdiff_t>(spatial), pads.end());
  return "";
}

/// The output's spatial dims with floor (or, for pooling's ceil_mode, ceil) rounding;
/// -1 in every dim when the window does not fit the padded input.
inline std::vector<int64_t> window_output(const std::vector<int64_t>& input, const Window& w, bool ceil = false) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < w.kernel.size(); ++i) {
    const int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
    const int64_t padded = input[2 + i] + w.begin[i] + w.end[i];
    if (padded < extent) return std::vector<int64_t>(w.kernel.size(), -1);
    const int64_t span = padded - extent;
    int64_t size = (ceil ? (span + w.strides[i] - 1) / w.strides[i] : span / w.strides[i]) + 1;
    // ONNX drops a last window that would start in the end padding.
    if (ceil && (size - 1) * w.strides[i] >= input[2 + i] + w.begin[i]) --size;
    out.push_back(size);
  }
  return out;
}

/// The shape NumPy broadcasting gives `a` and `b`, or nothing when they do not broadcast.
inline std::optional<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                                            const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

/// Whether `small` broadcasts to exactly `full` (aligned at the last dimension).
inline bool broadcasts_to(const std::vector<int64_t>& small, const std::vector<int64_t>& full) {
  if (small.size() > full.size()) return false;
  const size_t offset = full.size() - small.size();
  for (size_t i = 0; i < small.size(); ++i) {
    if (small[i] != 1 && small[i] != full[offset + i]) return false;
  }
  return true;
}

/// An ONNX axis (negative counts from the end) as an index below `rank`, or nothing when
/// it is out of [-rank, rank).
inline std::optional<size_t> normalize_axis(int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

/// A Gemm whose A is 2-D and whose B is a 2-D float32 constant, as the dense (fully
/// connected) layer libraries take: y[M, N] = A[M, K] * weights[N, K]^T (+ C).
struct DenseGemm {
  int64_t m = 0, n = 0, k = 0;
  std::vector<float> weights;  ///< [N, K], row-major, scaled by alpha
  float beta = 1.0f;           ///< C's factor; C (input 2, optional) is the caller's to read
};

/// Reads a Gemm as a DenseGemm: transA must be 0, transB any. "" when it is one,
/// otherwise the reason.
inline std::string resolve_dense_gemm(const GraphView& graph, const ir::Node& node, DenseGemm* gemm) {
  const int32_t a = GraphView::input(node, 0), b = GraphView::input(node, 1), y = GraphView::output(node, 0);
  if (GraphView::int_attribute(node, "transA", 0) != 0) return "transA is not supported";
  const std::vector<int64_t> as = graph.shape(a);
  if (as.size() != 2) return "A is not 2-D";
  if (!graph.is_constant(b) || !graph.is_float(b) || graph.shape(b).size() != 2) {
    return "B is not a 2-D float32 constant";
  }
  const bool trans_b = GraphView::int_attribute(node, "transB", 0) != 0;
  const std::vector<int64_t> bs = graph.shape(b);
  const int64_t m = as[0], k = as[1], n = trans_b ? bs[0] : bs[1];
  if ((trans_b ? bs[1] : bs[0]) != k) return "A and B do not agree on K";
  if (graph.shape(y) != std::vector<int64_t>{m, n}) return "the output shape is not [M, N]";
  const std::vector<float> data = graph.floats(b);
  if (data.empty() && n * k != 0) return "B's data does not match its shape";
  const float alpha = GraphView::float_attribute(node, "alpha", 1.0f);
  gemm->m = m;
  gemm->n = n;
  gemm->k = k;
  gemm->beta = GraphView::float_attribute(node, "beta", 1.0f);
  gemm->weights.assign(static_cast<size_t>(n * k), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      gemm->weights[static_cast<size_t>(i * k + j)] =
          alpha * data[static_cast<size_t>(trans_b ? i * k + j : j * n + i)];
    }
  }
  return "";
}

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_ONNX_SEMANTICS_H_
