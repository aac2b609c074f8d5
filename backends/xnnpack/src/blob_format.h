// SPDX-License-Identifier: Apache-2.0
// The XNNPACK blob's format (see schema/xnnpack_blob.fbs and COMPATIBILITY.md): the SDK's
// versioned blob header, then the flatbuffer.
#ifndef PLUGRT_BACKENDS_XNNPACK_SRC_BLOB_FORMAT_H_
#define PLUGRT_BACKENDS_XNNPACK_SRC_BLOB_FORMAT_H_

#include <cstddef>

#include "plugrt/sdk/blob_header.h"

namespace plugrt::xnnpack {

/// Magic PRTXNNPK. This build writes version 4 (version 3 and the convert node) and
/// reads versions 1 to 4; COMPATIBILITY.md keeps the history.
inline constexpr sdk::BlobFormat kBlobFormat{"PRTXNNPK", "XNNPACK", /*version=*/4, /*oldest_readable=*/1};
/// Magic PRTXNNPV: a partition whose dimensions vary, kept as its graph IR and lowered
/// per shape at run time (plugrt/sdk/per_shape.h). Version 2 puts the graph at byte 64,
/// where a program shares it with the portable fallback; version 1 (graph at byte 16)
/// is still read.
inline constexpr sdk::BlobFormat kVaryingBlobFormat{"PRTXNNPV", "XNNPACK varying-shape", 2, 1};
/// Header bytes before the flatbuffer; a multiple of 16 so the flatbuffer's float data
/// stays aligned when the blob is.
inline constexpr size_t kBlobHeaderSize = sdk::BlobFormat::kHeaderSize;

}  // namespace plugrt::xnnpack

#endif  // PLUGRT_BACKENDS_XNNPACK_SRC_BLOB_FORMAT_H_
