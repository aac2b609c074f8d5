// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/blob_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>
#include <sstream>
#include <system_error>
#include <vector>

#include "plugrt/mapped_file.h"

namespace plugrt::placement {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'P', 'R', 'T', 'B', 'L', 'O', 'B', '\0'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderSize = 64;
constexpr const char* kEntrySuffix = ".blob";
constexpr const char* kTemporaryPrefix = ".tmp-";

/// The fixed header of an entry file, little-endian (the host's order on every target).
struct EntryHeader {
  char magic[8];
  uint32_t format_version;
  uint32_t header_size;
  uint64_t key_high, key_low;
  uint64_t payload_size;
  uint64_t payload_hash_high, payload_hash_low;
  uint64_t reserved;
};
static_assert(sizeof(EntryHeader) == kHeaderSize, "the entry header is 64 bytes");

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

/// Why an entry's header cannot be used; empty when it can.
std::string check_header(Span<const uint8_t> file, const ContentHash& key) {
  if (file.size() < kHeaderSize) return "shorter than its header";
  EntryHeader header;
  std::memcpy(&header, file.data(), sizeof(header));
  if (std::memcmp(header.magic, kMagic, sizeof(kMagic)) != 0) return "not a blob cache entry";
  if (header.format_version != kFormatVersion || header.header_size != kHeaderSize) {
    return "entry format " + std::to_string(header.format_version) + ", not " + std::to_string(kFormatVersion);
  }
  if (header.key_high != key.high || header.key_low != key.low) return "stored under another key";
  if (header.payload_size != file.size() - kHeaderSize) return "truncated or extended";
  return std::string();
}

/// Whether the payload of an entry whose header passed has the content hash it records.
bool payload_matches(Span<const uint8_t> file) {
  EntryHeader header;
  std::memcpy(&header, file.data(), sizeof(header));
  const ContentHash payload = content_hash(file.subspan(kHeaderSize, file.size() - kHeaderSize));
  return payload.high == header.payload_hash_high && payload.low == header.payload_hash_low;
}

struct Counts {
  uint64_t hits = 0, misses = 0, rejected = 0;
};

Counts parse_counts(const std::string& text) {
  Counts counts;
  std::istringstream lines(text);
  std::string name;
  uint64_t value = 0;
  while (lines >> name >> value) {
    if (name == "hits") counts.hits = value;
    if (name == "misses") counts.misses = value;
    if (name == "rejected") counts.rejected = value;
  }
  return counts;
}

std::string read_small_file(int fd) {
  std::string text;
  char buffer[256];
  for (ssize_t n; (n = ::pread(fd, buffer, sizeof(buffer), static_cast<off_t>(text.size()))) > 0;) {
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > 4096) break;  // not ours: the counts are a few lines
  }
  return text;
}

struct EntryFile {
  fs::file_time_type used;  // its modification time: a hit refreshes it
  uint64_t size;
  fs::path path;
};

/// The entry files in `directory`. A temporary file an hour old is a writer that died
/// before its rename (a live one finishes within seconds): removed when asked.
std::vector<EntryFile> entry_files(const std::string& directory, bool remove_stale_temporaries) {
  std::vector<EntryFile> entries;
  const auto now = fs::file_time_type::clock::now();
  std::error_code error;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code entry_error;
    const fs::file_time_type used = it->last_write_time(entry_error);
    const uint64_t size = it->file_size(entry_error);
    if (entry_error) continue;  // removed by another process meanwhile
    if (name.rfind(kTemporaryPrefix, 0) == 0) {
      if (remove_stale_temporaries && now - used > std::chrono::hours(1)) fs::remove(it->path(), entry_error);
      continue;
    }
    const size_t suffix = std::strlen(kEntrySuffix);
    if (name.size() > suffix && name.compare(name.size() - suffix, suffix, kEntrySuffix) == 0) {
      entries.push_back({used, size, it->path()});
    }
  }
  return entries;
}

}  // namespace

std::string default_cache_directory() {
  if (std::string dir = environment("PLUGRT_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string dir = environment("XDG_CACHE_HOME"); !dir.empty()) return dir + "/plugrt";
  if (std::string home = environment("HOME"); !home.empty()) return home + "/.cache/plugrt";
  return std::string();
}

uint64_t BlobCache::default_max_bytes() {
  const std::string megabytes = environment("PLUGRT_CACHE_MAX_MB");
  char* end = nullptr;
  const unsigned long long value = std::strtoull(megabytes.c_str(), &end, 10);
  if (!megabytes.empty() && end != nullptr && *end == '\0' && value > 0 && value < (1ull << 40)) return value << 20;
  return 2ull << 30;
}

BlobCache::BlobCache(std::string cache_directory, uint64_t max_bytes)
    : directory_(std::move(cache_directory) + "/blobs"), max_bytes_(max_bytes) {}

std::string BlobCache::entry_path(const ContentHash& key) const { return directory_ + "/" + key.hex() + kEntrySuffix; }

std::optional<FoundBlob> BlobCache::find(const ContentHash& key) {
  std::optional<FoundBlob> found = find_entry(key);
  if (found && !payload_matches(static_cast<const MappedFile*>(found->owner.get())->bytes())) {
    reject(key);
    return std::nullopt;
  }
  if (found) ++hits_;
  return found;
}

std::optional<FoundBlob> BlobCache::find_checking_later(const ContentHash& key, std::function<Status()>* check) {
  std::optional<FoundBlob> found = find_entry(key);
  if (!found) return std::nullopt;
  auto file = std::static_pointer_cast<const MappedFile>(found->owner);
  std::future<bool> hashing;
  try {
    hashing = std::async(std::launch::async, [file] { return payload_matches(file->bytes()); });
  } catch (const std::system_error&) {  // no thread to be had: check it now
    std::promise<bool> now;
    now.set_value(payload_matches(file->bytes()));
    hashing = now.get_future();
  }
  const std::shared_future<bool> matches = hashing.share();  // the check may be asked twice
  const std::string path = entry_path(key);
  *check = [this, matches, key, path]() -> Status {
    if (matches.get()) {
      ++hits_;
      return Status::ok();
    }
    reject(key);
    return Status(Error::kInvalidProgram, path + ": damaged (its contents do not match their hash)");
  };
  return found;
}

std::optional<FoundBlob> BlobCache::find_entry(const ContentHash& key) {
  const std::string path = entry_path(key);
  Result<MappedFile> file = MappedFile::open(path);
  if (!file.is_ok()) {
    ++misses_;
    return std::nullopt;
  }
  auto mapped = std::make_shared<MappedFile>(std::move(file).value());
  if (!check_header(mapped->bytes(), key).empty()) {
    reject(key);
    return std::nullopt;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // most recently used
  FoundBlob found;
  found.bytes = mapped->bytes().subspan(kHeaderSize, mapped->bytes().size() - kHeaderSize);
  found.owner = std::move(mapped);
  found.origin = "cache";
  return found;
}

void BlobCache::reject(const ContentHash& key) {
  ::unlink(entry_path(key).c_str());  // rebuilt by the caller's store()
  ++rejected_;
  ++misses_;
}

Status BlobCache::store(const ContentHash& key, Span<const uint8_t> blob) {
  std::error_code error;
  fs::create_directories(directory_, error);
  if (error) return Status(Error::kAccessFailed, directory_ + ": cannot create the directory: " + error.message());
  static std::atomic<uint64_t> sequence{0};
  const std::string temporary = directory_ + "/" + kTemporaryPrefix + std::to_string(::getpid()) + "-" +
                                std::to_string(sequence.fetch_add(1)) + "-" + key.hex();
  EntryHeader header{};
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.format_version = kFormatVersion;
  header.header_size = kHeaderSize;
  header.key_high = key.high;
  header.key_low = key.low;
  header.payload_size = blob.size();
  const ContentHash payload = content_hash(blob);
  header.payload_hash_high = payload.high;
  header.payload_hash_low = payload.low;

  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status(Error::kAccessFailed, temporary + ": cannot create: " + std::strerror(errno));
  auto write_all = [fd](const void* data, size_t size) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd, bytes, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  };
  const bool written = write_all(&header, sizeof(header)) && write_all(blob.data(), blob.size());
  const int saved_errno = errno;
  if (::close(fd) != 0 || !written) {
    ::unlink(temporary.c_str());
    return Status(Error::kAccessFailed, temporary + ": cannot write: " + std::strerror(saved_errno));
  }
  const std::string path = entry_path(key);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    return Status(Error::kAccessFailed, path + ": cannot replace: " + reason);
  }
  evict();
  return Status::ok();
}

void BlobCache::evict() {
  std::vector<EntryFile> entries = entry_files(directory_, /*remove_stale_temporaries=*/true);
  uint64_t total = 0;
  for (const EntryFile& entry : entries) total += entry.size;
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const EntryFile& a, const EntryFile& b) { return a.used < b.used; });
  for (const EntryFile& entry : entries) {
    if (total <= max_bytes_) break;
    std::error_code remove_error;
    fs::remove(entry.path, remove_error);
    total -= entry.size;
  }
}

void BlobCache::save_counts() {
  if (hits_ == 0 && misses_ == 0 && rejected_ == 0) return;
  std::error_code error;
  fs::create_directories(directory_, error);
  const std::string path = directory_ + "/stats";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;  // counts are for reports only
  if (::flock(fd, LOCK_EX) == 0) {
    Counts counts = parse_counts(read_small_file(fd));
    counts.hits += hits_;
    counts.misses += misses_;
    counts.rejected += rejected_;
    const std::string text = "hits " + std::to_string(counts.hits) + "\nmisses " + std::to_string(counts.misses) +
                             "\nrejected " + std::to_string(counts.rejected) + "\n";
    if (::ftruncate(fd, 0) == 0 && ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size())) {
      hits_ = misses_ = rejected_ = 0;
    }
    ::flock(fd, LOCK_UN);
  }
  ::close(fd);
}

BlobCacheStats BlobCache::stats() const {
  BlobCacheStats stats;
  stats.directory = directory_;
  stats.max_bytes = max_bytes_;
  for (const EntryFile& entry : entry_files(directory_, /*remove_stale_temporaries=*/false)) {
    ++stats.entries;
    stats.bytes += entry.size;
  }
  const int fd = ::open((directory_ + "/stats").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const Counts counts = parse_counts(read_small_file(fd));
    ::close(fd);
    stats.hits = counts.hits;
    stats.misses = counts.misses;
    stats.rejected = counts.rejected;
  }
  return stats;
}

}  // namespace plugrt::placement
