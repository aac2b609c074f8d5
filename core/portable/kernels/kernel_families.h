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

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_KERNELS_KERNEL_FAMILIES_H_
