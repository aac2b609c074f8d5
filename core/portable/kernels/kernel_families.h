// SPDX-License-Identifier: Apache-2.0
// The portable kernels, one family per file; kernel_table.cc gathers them.
#ifndef PLUGRT_PORTABLE_KERNELS_KERNEL_FAMILIES_H_
#define PLUGRT_PORTABLE_KERNELS_KERNEL_FAMILIES_H_

#include <vector>

#include "../kernel.h"

namespace plugrt::portable {

void add_elementwise_kernels(std::vector<KernelEntry>& table);         // elementwise.cc
void add_reduction_kernels(std::vector<KernelEntry>& table);           // reduction.cc
void add_normalization_kernels(std::vector<KernelEntry>& table);       // normalization.cc
void add_convolution_kernels(std::vector<KernelEntry>& table);         // convolution.cc
void add_matmul_kernels(std::vector<KernelEntry>& table);              // matmul.cc
void add_pooling_kernels(std::vector<KernelEntry>& table);             // pooling.cc
void add_layout_kernels(std::vector<KernelEntry>& table);              // layout.cc
void add_resize_kernels(std::vector<KernelEntry>& table);              // resize.cc
void add_recurrent_kernels(std::vector<KernelEntry>& table);           // recurrent.cc
void add_axis_normalization_kernels(std::vector<KernelEntry>& table);  // axis_normalization.cc
void add_einsum_kernels(std::vector<KernelEntry>& table);              // einsum.cc
void add_math_kernels(std::vector<KernelEntry>& table);                // math.cc
void add_logical_kernels(std::vector<KernelEntry>& table);             // logical.cc
void add_arithmetic_kernels(std::vector<KernelEntry>& table);          // arithmetic.cc
void add_indexing_kernels(std::vector<KernelEntry>& table);            // indexing.cc
void add_rearrange_kernels(std::vector<KernelEntry>& table);           // rearrange.cc
void add_loss_kernels(std::vector<KernelEntry>& table);                // loss.cc
void add_quantize_kernels(std::vector<KernelEntry>& table);            // quantize.cc
void add_quantized_kernels(std::vector<KernelEntry>& table);           // quantized.cc
void add_control_flow_kernels(std::vector<KernelEntry>& table);        // control_flow.cc
void add_detection_kernels(std::vector<KernelEntry>& table);           // detection.cc
void add_window_kernels(std::vector<KernelEntry>& table);              // window.cc
void add_lrn_kernels(std::vector<KernelEntry>& table);                 // lrn.cc
void add_determinant_kernels(std::vector<KernelEntry>& table);         // determinant.cc
void add_max_unpool_kernels(std::vector<KernelEntry>& table);          // max_unpool.cc
void add_grid_sample_kernels(std::vector<KernelEntry>& table);         // grid_sample.cc
void add_unique_kernels(std::vector<KernelEntry>& table);              // unique.cc
void add_tfidf_vectorizer_kernels(std::vector<KernelEntry>& table);    // tfidf_vectorizer.cc
void add_roi_align_kernels(std::vector<KernelEntry>& table);           // roi_align.cc
void add_spectral_kernels(std::vector<KernelEntry>& table);            // spectral.cc
void add_constant_of_shape_kernels(std::vector<KernelEntry>& table);   // constant_of_shape.cc
void add_mel_weight_matrix_kernels(std::vector<KernelEntry>& table);   // mel_weight_matrix.cc
void add_optimizer_kernels(std::vector<KernelEntry>& table);           // optimizer.cc

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_KERNELS_KERNEL_FAMILIES_H_
