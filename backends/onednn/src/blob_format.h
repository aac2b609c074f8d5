// The oneDNN blob's fixed header (see schema/onednn_blob.fbs and COMPATIBILITY.md).
#ifndef PLUGRT_BACKENDS_ONEDNN_SRC_BLOB_FORMAT_H_
#define PLUGRT_BACKENDS_ONEDNN_SRC_BLOB_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace plugrt::onednn {

/// The first 8 bytes of every blob.
inline constexpr char kBlobMagic[8] = {'P', 'R', 'T', 'O', 'N', 'D', 'N', 'N'};
/// The format version this build writes. It reads exactly the versions in
/// [kOldestReadableBlobVersion, kBlobVersion]; COMPATIBILITY.md keeps the history.
inline constexpr uint32_t kBlobVersion = 1;
inline constexpr uint32_t kOldestReadableBlobVersion = 1;
/// Header bytes before the flatbuffer; a multiple of 16 so the flatbuffer's float data
/// stays aligned when the blob is.
inline constexpr size_t kBlobHeaderSize = 16;

inline void write_blob_header(uint8_t* out) {
  std::memcpy(out, kBlobMagic, sizeof(kBlobMagic));
  const uint32_t version = kBlobVersion;
  for (int i = 0; i < 4; ++i) out[8 + i] = static_cast<uint8_t>(version >> (8 * i));
  std::memset(out + 12, 0, 4);
}

/// Whether `blob` starts with the magic; writes the header's version when it does.
inline bool read_blob_header(const void* blob, size_t size, uint32_t* version) {
  if (blob == nullptr || size < kBlobHeaderSize) return false;
  const auto* bytes = static_cast<const uint8_t*>(blob);
  if (std::memcmp(bytes, kBlobMagic, sizeof(kBlobMagic)) != 0) return false;
  *version = 0;
  for (int i = 0; i < 4; ++i) *version |= static_cast<uint32_t>(bytes[8 + i]) << (8 * i);
  return true;
}

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_BLOB_FORMAT_H_
