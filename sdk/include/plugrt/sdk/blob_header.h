// SPDX-License-Identifier: Apache-2.0
/// \file blob_header.h
/// The versioned header of the blob a backend's preprocess writes and its init reads:
/// 8 bytes of magic naming the format, the format version (uint32, little-endian) and 4
/// reserved zero bytes. 16 bytes in all, so what follows keeps the blob's alignment.
///
///   constexpr plugrt::sdk::BlobFormat kFormat{"PRTMYNPU", "my_npu", 2, 1};  // writes 2, reads 1 to 2
///   kFormat.write_header(out);                      // in preprocess, then the payload
///   PLUGRT_SDK_RETURN_IF_ERROR(kFormat.check_header(blob, size));   // first thing in init
///
/// check_header refuses another format or a version outside [oldest_readable, version]
/// with Status::incompatible_blob: the host then runs that part on the portable
/// fallback and says why, instead of failing the program. Raise the version whenever an
/// older reader would misread the payload.
#ifndef PLUGRT_SDK_BLOB_HEADER_H_
#define PLUGRT_SDK_BLOB_HEADER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "plugrt/sdk/status.h"

namespace plugrt::sdk {

class BlobFormat {
 public:
  static constexpr size_t kHeaderSize = 16;

  /// `magic`: exactly 8 characters. `name`: the format's name in messages.
  constexpr BlobFormat(const char (&magic)[9], const char* name, uint32_t version, uint32_t oldest_readable)
      : magic_(magic), name_(name), version_(version), oldest_readable_(oldest_readable) {}

  uint32_t version() const { return version_; }
  uint32_t oldest_readable() const { return oldest_readable_; }

  /// Writes the header with this version into out[0, kHeaderSize).
  void write_header(uint8_t* out) const { write_header(out, version_); }
  /// The same with an older `version` (within [oldest_readable, version]): a blob that
  /// uses nothing newer says so, and older readers still take it.
  void write_header(uint8_t* out, uint32_t version) const {
    std::memcpy(out, magic_, 8);
    for (int i = 0; i < 4; ++i) out[8 + i] = static_cast<uint8_t>(version >> (8 * i));
    std::memset(out + 12, 0, 4);
  }

  /// The version a blob's header gives (the blob holds at least kHeaderSize bytes).
  static uint32_t version_of(const void* blob) {
    const auto* bytes = static_cast<const uint8_t*>(blob);
    uint32_t version = 0;
    for (int i = 0; i < 4; ++i) version |= static_cast<uint32_t>(bytes[8 + i]) << (8 * i);
    return version;
  }

  /// Ok when `blob` starts with this format's magic and a version this build reads.
  Status check_header(const void* blob, size_t size) const {
    const auto* bytes = static_cast<const uint8_t*>(blob);
    if (bytes == nullptr || size < kHeaderSize || std::memcmp(bytes, magic_, 8) != 0) {
      return Status::incompatible_blob("the blob lacks the " + std::string(magic_, 8) + " header of " + name_ +
                                       " backend blobs");
    }
    const uint32_t version = version_of(blob);
    if (version < oldest_readable_ || version > version_) {
      return Status::incompatible_blob("the blob has " + std::string(name_) + " blob format version " +
                                       std::to_string(version) + "; this build reads versions " +
                                       std::to_string(oldest_readable_) + " to " + std::to_string(version_) +
                                       " (recompile the program with this plugin)");
    }
    return Status::ok();
  }

 private:
  const char* magic_;
  const char* name_;
  uint32_t version_;
  uint32_t oldest_readable_;
};

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_BLOB_HEADER_H_
