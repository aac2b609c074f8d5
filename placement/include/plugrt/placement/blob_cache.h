// SPDX-License-Identifier: Apache-2.0
// The compiled-blob cache: blobs that backends lowered at load time, kept on disk so that
// the next load of the same partition on the same device lowers nothing.
//
// An entry is one file, "<directory>/blobs/<key>.blob": a 128-byte header (magic, format
// version, the key, the payload's size and an HMAC-SHA256 of header and payload under the
// cache's secret key, "<directory>/key") and the blob. The key is the caller's
// (load_placer.h: the partition's graph, the backend, its plugin's name and build, the
// compile specs, the ABI version). The cache is data its user owns: directories of mode
// 0700, entries of mode 0600 written as new files (O_EXCL, O_NOFOLLOW) and renamed, so a
// reader sees a whole entry or none and several processes of the user may share the
// directory; a directory that another user owns or can write, or any directory above it,
// is refused with a reason (usable()) and the caller runs without the cache. Every entry
// is verified before use like a program file: a short, damaged or foreign one (another
// key, another format, a keyed hash that does not match, a link, a file others can read)
// is removed and reported as a miss. The
// directory is kept under a size cap by removing the least recently used entries (a hit
// refreshes an entry's modification time). Hit and miss counts are kept in
// "<directory>/blobs/stats", updated under a lock.
#ifndef PLUGRT_PLACEMENT_BLOB_CACHE_H_
#define PLUGRT_PLACEMENT_BLOB_CACHE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "plugrt/content_hash.h"
#include "plugrt/placement/compile.h"
#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt::placement {

/// $PLUGRT_CACHE_DIR, else $XDG_CACHE_HOME/plugrt, else $HOME/.cache/plugrt; empty when
/// none is set. A set-uid or set-gid process reads none of them: its user's home
/// directory (from the password database), .cache/plugrt. Cost profiles (cost_profile.h)
/// and the blob cache live there.
std::string default_cache_directory();

struct BlobCacheStats {
  std::string directory;  ///< the entries' directory ("<cache directory>/blobs")
  uint64_t entries = 0;
  uint64_t bytes = 0;  ///< of all entry files
  uint64_t max_bytes = 0;
  uint64_t hits = 0;      ///< since the cache was created, by every process
  uint64_t misses = 0;    ///< lookups that found no usable entry
  uint64_t rejected = 0;  ///< entries found damaged or foreign, and removed
};

class BlobCache {
 public:
  /// 2 GiB by default, or $PLUGRT_CACHE_MAX_MB.
  static uint64_t default_max_bytes();

  /// A cache in "<cache_directory>/blobs" (made when the first entry is stored).
  explicit BlobCache(std::string cache_directory, uint64_t max_bytes = default_max_bytes());
  ~BlobCache();

  /// Whether the cache can be used: its directories made (mode 0700) and trusted, its key
  /// read or made. Checked once; when not ok, every find misses and store() says why.
  const Status& usable();

  /// The verified entry under `key`, mapped (FoundBlob::origin "cache"); nullopt when
  /// there is none, or it fails a check (it is then removed and counted as rejected).
  std::optional<FoundBlob> find(const ContentHash& key);
  /// Like find(), but the payload's content hash is checked on another thread while the
  /// caller goes on; `check` (set on success) waits for it and says whether the payload
  /// may be used (when it may not, the entry is removed). The header is checked at once.
  std::optional<FoundBlob> find_checking_later(const ContentHash& key, std::function<Status()>* check);
  /// Writes the entry atomically, then evicts least recently used entries over the cap.
  /// Errors: kAccessFailed naming the path (the caller goes on without the cache).
  Status store(const ContentHash& key, Span<const uint8_t> blob);
  /// Removes the entry under `key` and counts it as rejected (a caller found it unusable).
  void reject(const ContentHash& key);
  /// Adds this process's hits, misses and rejections since the last call to the stats file.
  void save_counts();

  BlobCacheStats stats() const;
  const std::string& directory() const { return directory_; }
  std::string entry_path(const ContentHash& key) const;

 private:
  /// The entry under `key` with its header checked, not yet its payload.
  std::optional<FoundBlob> find_entry(const ContentHash& key);
  void evict();
  std::string root_;       // the cache directory: the key, cost profiles
  std::string directory_;  // root_/blobs: the entries
  uint64_t max_bytes_;
  std::once_flag prepared_;
  Status usable_;
  std::unique_ptr<std::array<uint8_t, 32>> secret_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, rejected_{0};
};

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_BLOB_CACHE_H_
