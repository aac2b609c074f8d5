// SPDX-License-Identifier: Apache-2.0
// Concatenations that copy nothing. A DenseNet block concatenates its input and every
// layer's new channels again before each layer: [x0], [x0, n1], [x0, n1, n2]... Each
// such copy moves every earlier feature map once more. When the concatenations of a
// block all take a prefix of one list of values, one buffer can hold that whole list in
// oneDNN's nChw16c layout, each value written at its channel offset by its producer, and
// every concatenation is then a prefix of that buffer: with a batch of 1 and channel
// counts that are multiples of 16, a prefix of 16-channel blocks is itself a dense
// nChw16c tensor (a channel-last buffer would need strided views, which oneDNN 2.6
// computes only with its reference kernels).
#ifndef PLUGRT_BACKENDS_ONEDNN_SRC_CONCAT_IN_PLACE_H_
#define PLUGRT_BACKENDS_ONEDNN_SRC_CONCAT_IN_PLACE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "onednn_blob_generated.h"

namespace plugrt::onednn {

/// Which concatenations of a blob read one shared buffer, and where their inputs live.
struct ConcatGroups {
  struct Member {
    size_t group = 0;
    int64_t channel = 0;  // the first channel the value occupies in its group's buffer
  };
  /// Per group, the dims of its buffer: [1, channels, spatial...].
  std::vector<dnnl::memory::dims> groups;
  /// Values that live in a group's buffer.
  std::unordered_map<int32_t, Member> members;
  /// Concatenation outputs that are a prefix of a group's buffer.
  std::unordered_map<int32_t, size_t> prefixes;
};

/// The concatenations of `blob` that can run in place: float32, along the channels of
/// 4-D tensors with a batch of 1, every input of 16-multiple channels written by an op
/// of the blob (`written`), nothing a partition output, and their input lists prefixes
/// of the longest one. `dims` gives each tensor's dims.
ConcatGroups find_concat_groups(const blob::Blob& blob, const std::vector<dnnl::memory::dims>& dims,
                                const std::function<bool(int32_t)>& written);

/// The nChw16c layout of `dims` (4-D).
dnnl::memory::desc blocked16(const dnnl::memory::dims& dims);

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_CONCAT_IN_PLACE_H_
