// SPDX-License-Identifier: Apache-2.0
// The conversions at a partition's edges: the host's NCHW tensors to XNNPACK's NHWC
// and back. Nothing inside a partition changes layout.
#ifndef PLUGRT_BACKENDS_XNNPACK_SRC_LAYOUT_H_
#define PLUGRT_BACKENDS_XNNPACK_SRC_LAYOUT_H_

#include <cstddef>
#include <cstdint>

namespace plugrt::xnnpack {

/// dst[n][hw][c] = src[n][c][hw]
void nchw_to_nhwc(const float* src, float* dst, size_t batch, size_t channels, size_t spatial);
/// dst[n][c][hw] = src[n][hw][c]
void nhwc_to_nchw(const float* src, float* dst, size_t batch, size_t channels, size_t spatial);
/// The same for 8-bit elements (quantized values).
void nchw_to_nhwc(const uint8_t* src, uint8_t* dst, size_t batch, size_t channels, size_t spatial);
void nhwc_to_nchw(const uint8_t* src, uint8_t* dst, size_t batch, size_t channels, size_t spatial);

}  // namespace plugrt::xnnpack

#endif  // PLUGRT_BACKENDS_XNNPACK_SRC_LAYOUT_H_
