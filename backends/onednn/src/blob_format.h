// SPDX-License-Identifier: Apache-2.0
// The oneDNN blob's format (see schema/onednn_blob.fbs and COMPATIBILITY.md): the SDK's
// versioned blob header, then the flatbuffer.
#ifndef PLUGRT_BACKENDS_ONEDNN_SRC_BLOB_FORMAT_H_
#define PLUGRT_BACKENDS_ONEDNN_SRC_BLOB_FORMAT_H_

#include <cstddef>

#include "plugrt/sdk/blob_header.h"

namespace plugrt::onednn {

/// Magic PRTONDNN. This build writes versions 3 to 10 (the oldest that reads a blob) and
/// reads versions 1 to 10; COMPATIBILITY.md keeps the history.
inline constexpr sdk::BlobFormat kBlobFormat{"PRTONDNN", "oneDNN", /*version=*/10, /*oldest_readable=*/1};
/// Magic PRTONDNV: a partition whose dimensions vary, kept as its graph IR and lowered
/// per shape at run time (plugrt/sdk/per_shape.h). Version 2 puts the graph at byte 64,
/// where a program shares it with the portable fallback; version 1 (graph at byte 16)
/// is still read.
inline constexpr sdk::BlobFormat kVaryingBlobFormat{"PRTONDNV", "oneDNN varying-shape", 2, 1};
/// Header bytes before the flatbuffer; a multiple of 16 so the flatbuffer's float data
/// stays aligned when the blob is.
inline constexpr size_t kBlobHeaderSize = sdk::BlobFormat::kHeaderSize;

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_BLOB_FORMAT_H_
