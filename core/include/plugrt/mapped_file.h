// SPDX-License-Identifier: Apache-2.0
// MappedFile: the read-only bytes of a whole file, memory-mapped when possible and read
// into an owned buffer otherwise. Used to inspect plugin files without loading them and
// to hold program files whose blobs backends use in place.
#ifndef PLUGRT_MAPPED_FILE_H_
#define PLUGRT_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt {

/// The contents of one regular file, read-only, valid and unmoved in memory for as long
/// as the MappedFile lives (moving the MappedFile keeps the bytes where they are).
///
/// Caveat of mapping: if another process truncates the file while it is mapped, touching
/// the lost pages raises SIGBUS. Files plugrt maps are installed artefacts (plugins,
/// programs) that are replaced, not rewritten in place.
class MappedFile {
 public:
  /// Opens `path` and maps it (PROT_READ, MAP_PRIVATE). When the file is empty or mmap
  /// fails, reads the whole file into an owned buffer instead.
  /// Errors: kAccessFailed, with a message that names the path and the reason, when the
  /// file cannot be opened, is not a regular file ("is a directory", ...) or cannot be
  /// read; kMemoryAllocationFailed when it is too large for this address space.
  [[nodiscard]] static Result<MappedFile> open(const std::string& path);

  /// Like open(), but always reads the file into an owned buffer and never maps it.
  /// Same errors. For tests, and for callers that must not see later changes to the file.
  [[nodiscard]] static Result<MappedFile> read(const std::string& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  /// Alignment of bytes().data() (a mapping is page-aligned; a read buffer is aligned to this).
  static constexpr size_t kBufferAlignment = 64;

  /// The file's bytes; empty for an empty file (or a moved-from MappedFile).
  Span<const uint8_t> bytes() const { return Span<const uint8_t>(data_, size_); }
  /// The file as it was opened: device, inode, size, and modification and status-change
  /// times to the nanosecond. Another file, or this one rewritten, has another identity
  /// (the status-change time cannot be set back), so it names contents without reading them.
  const std::string& identity() const { return identity_; }
  /// The path as given to open() or read().
  const std::string& path() const { return path_; }
  /// True when the bytes are a memory mapping, false when they are an owned buffer.
  bool is_mapped() const { return mapped_; }

 private:
  struct FreeDeleter {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  using Buffer = std::unique_ptr<uint8_t, FreeDeleter>;

  MappedFile(std::string path, const uint8_t* data, size_t size, bool mapped, Buffer owned);
  [[nodiscard]] static Result<MappedFile> open_impl(const std::string& path, bool allow_map);
  void release();

  std::string path_;
  std::string identity_;
  const uint8_t* data_ = nullptr;  // the mapping, or owned_.get()
  size_t size_ = 0;
  bool mapped_ = false;
  // The read path's copy. malloc'd, not a std::vector, so that running out of memory is
  // an error Status rather than an exception.
  Buffer owned_;
};

/// What MappedFile::identity() would say of the file at `path` now, without opening it.
/// Errors: kAccessFailed naming the path.
Result<std::string> file_identity(const std::string& path);

}  // namespace plugrt

#endif  // PLUGRT_MAPPED_FILE_H_
