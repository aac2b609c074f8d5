// SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include "kernel_families.h"

namespace plugrt::portable {

namespace {

std::vector<KernelEntry> build_table() {
  std::vector<KernelEntry> table;
  add_elementwise_kernels(table);
  add_reduction_kernels(table);
  add_normalization_kernels(table);
  add_convolution_kernels(table);
  add_matmul_kernels(table);
  add_pooling_kernels(table);
  add_layout_kernels(table);
  add_resize_kernels(table);
  add_recurrent_kernels(table);
  add_axis_normalization_kernels(table);
  add_einsum_kernels(table);
  add_math_kernels(table);
  add_logical_kernels(table);
  add_arithmetic_kernels(table);
  add_indexing_kernels(table);
  add_rearrange_kernels(table);
  add_loss_kernels(table);
  add_quantize_kernels(table);
  add_quantized_kernels(table);
  add_control_flow_kernels(table);
  add_detection_kernels(table);
  add_window_kernels(table);
  add_lrn_kernels(table);
  add_determinant_kernels(table);
  add_max_unpool_kernels(table);
  add_grid_sample_kernels(table);
  add_unique_kernels(table);
  add_tfidf_vectorizer_kernels(table);
  add_roi_align_kernels(table);
  add_spectral_kernels(table);
  add_constant_of_shape_kernels(table);
  add_mel_weight_matrix_kernels(table);
  add_optimizer_kernels(table);
  std::stable_sort(table.begin(), table.end(),
                   [](const KernelEntry& a, const KernelEntry& b) { return a.op_type < b.op_type; });
  return table;
}

const std::vector<KernelEntry>& kernel_table() {
  static const std::vector<KernelEntry> table = build_table();
  return table;
}

}  // namespace

PrepareFunction find_kernel(std::string_view op_type) {
  const std::vector<KernelEntry>& table = kernel_table();
  auto it = std::lower_bound(table.begin(), table.end(), op_type,
                             [](const KernelEntry& entry, std::string_view key) { return entry.op_type < key; });
  return it != table.end() && it->op_type == op_type ? it->prepare : nullptr;
}

std::vector<std::string_view> supported_op_types() {
  std::vector<std::string_view> names;
  for (const KernelEntry& entry : kernel_table()) names.push_back(entry.op_type);
  return names;
}

}  // namespace plugrt::portable
