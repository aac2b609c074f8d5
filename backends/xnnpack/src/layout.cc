// SPDX-License-Identifier: Apache-2.0
#include "src/layout.h"

#include <algorithm>

namespace plugrt::xnnpack {

namespace {
// Tiles keep both the rows read and the rows written in cache.
constexpr size_t kTile = 32;

template <typename T>
void to_nhwc(const T* src, T* dst, size_t batch, size_t channels, size_t spatial) {
  for (size_t n = 0; n < batch; ++n) {
    const T* in = src + n * channels * spatial;
    T* out = dst + n * channels * spatial;
    for (size_t c0 = 0; c0 < channels; c0 += kTile) {
      const size_t c1 = std::min(channels, c0 + kTile);
      for (size_t s0 = 0; s0 < spatial; s0 += kTile) {
        const size_t s1 = std::min(spatial, s0 + kTile);
        for (size_t s = s0; s < s1; ++s) {
          for (size_t c = c0; c < c1; ++c) out[s * channels + c] = in[c * spatial + s];
        }
      }
    }
  }
}

template <typename T>
void to_nchw(const T* src, T* dst, size_t batch, size_t channels, size_t spatial) {
  for (size_t n = 0; n < batch; ++n) {
    const T* in = src + n * channels * spatial;
    T* out = dst + n * channels * spatial;
    for (size_t c0 = 0; c0 < channels; c0 += kTile) {
      const size_t c1 = std::min(channels, c0 + kTile);
      for (size_t s0 = 0; s0 < spatial; s0 += kTile) {
        const size_t s1 = std::min(spatial, s0 + kTile);
        for (size_t c = c0; c < c1; ++c) {
          for (size_t s = s0; s < s1; ++s) out[c * spatial + s] = in[s * channels + c];
        }
      }
    }
  }
}

}  // namespace

void nchw_to_nhwc(const float* src, float* dst, size_t batch, size_t channels, size_t spatial) {
  to_nhwc(src, dst, batch, channels, spatial);
}
void nhwc_to_nchw(const float* src, float* dst, size_t batch, size_t channels, size_t spatial) {
  to_nchw(src, dst, batch, channels, spatial);
}
void nchw_to_nhwc(const uint8_t* src, uint8_t* dst, size_t batch, size_t channels, size_t spatial) {
  to_nhwc(src, dst, batch, channels, spatial);
}
void nhwc_to_nchw(const uint8_t* src, uint8_t* dst, size_t batch, size_t channels, size_t spatial) {
  to_nchw(src, dst, batch, channels, spatial);
}

}  // namespace plugrt::xnnpack
