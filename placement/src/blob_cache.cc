// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/blob_cache.h"

#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <pwd.h>
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
#include "plugrt/trusted_path.h"
#include "private_files.h"

namespace plugrt::placement {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'P', 'R', 'T', 'B', 'L', 'O', 'B', '\0'};
constexpr uint32_t kFormatVersion = 2;  // 1 had a content hash anyone could recompute
constexpr size_t kHeaderSize = 128;
constexpr const char* kEntrySuffix = ".blob";
constexpr const char* kTemporaryPrefix = ".tmp-";

/// The fixed header of an entry file, little-endian (the host's order on every target).
/// `mac` is HMAC-SHA256, under the cache's secret key, of the header (with `mac` zero)
/// and the payload: only a process of the user who owns the cache can write an entry
/// that passes.
struct EntryHeader {
  char magic[8];
  uint32_t format_version;
  uint32_t header_size;
  uint64_t key_high, key_low;
  uint64_t payload_size;
  uint8_t mac[32];
  uint8_t reserved[56];
};
static_assert(sizeof(EntryHeader) == kHeaderSize, "the entry header is 128 bytes");

using Secret = std::array<uint8_t, 32>;

/// HMAC-SHA256 of `header` (its mac zeroed) and `payload` under `secret`.
std::array<uint8_t, 32> entry_mac(const Secret& secret, EntryHeader header, Span<const uint8_t> payload) {
  std::memset(header.mac, 0, sizeof(header.mac));
  std::array<uint8_t, 32> mac{};
  EVP_MAC* hmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  EVP_MAC_CTX* context = hmac != nullptr ? EVP_MAC_CTX_new(hmac) : nullptr;
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
  size_t size = 0;
  const bool done = context != nullptr && EVP_MAC_init(context, secret.data(), secret.size(), params) == 1 &&
                    EVP_MAC_update(context, reinterpret_cast<const uint8_t*>(&header), sizeof(header)) == 1 &&
                    EVP_MAC_update(context, payload.data(), payload.size()) == 1 &&
                    EVP_MAC_final(context, mac.data(), &size, mac.size()) == 1;
  EVP_MAC_CTX_free(context);
  EVP_MAC_free(hmac);
  if (!done) mac.fill(0);  // matches no entry: a miss, not a crash
  return mac;
}

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

/// Whether an entry whose header passed carries the keyed hash of its contents.
bool payload_matches(const Secret& secret, Span<const uint8_t> file) {
  EntryHeader header;
  std::memcpy(&header, file.data(), sizeof(header));
  const std::array<uint8_t, 32> expected =
      entry_mac(secret, header, file.subspan(kHeaderSize, file.size() - kHeaderSize));
  return CRYPTO_memcmp(expected.data(), header.mac, expected.size()) == 0;
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
  if (secure_execution()) {  // set-uid or set-gid: nothing from the environment names a path
    const struct passwd* user = getpwuid(geteuid());
    return user != nullptr && user->pw_dir != nullptr ? std::string(user->pw_dir) + "/.cache/plugrt" : std::string();
  }
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
    : root_(std::move(cache_directory)), directory_(root_ + "/blobs"), max_bytes_(max_bytes) {}

BlobCache::~BlobCache() = default;

const Status& BlobCache::usable() {
  std::call_once(prepared_, [this] {
    usable_ = prepare_private_directory(directory_);
    if (usable_.is_ok()) usable_ = prepare_private_directory(root_);
    if (usable_.is_ok()) {
      Result<Secret> key = cache_key(root_);
      if (key.is_ok()) {
        secret_ = std::make_unique<Secret>(*key);
      } else {
        usable_ = key.status();
      }
    }
    if (!usable_.is_ok()) usable_ = usable_.with_context("the blob cache is not used");
  });
  return usable_;
}

std::string BlobCache::entry_path(const ContentHash& key) const { return directory_ + "/" + key.hex() + kEntrySuffix; }

std::optional<FoundBlob> BlobCache::find(const ContentHash& key) {
  std::optional<FoundBlob> found = find_entry(key);
  if (found && !payload_matches(*secret_, static_cast<const MappedFile*>(found->owner.get())->bytes())) {
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
  const Secret* secret = secret_.get();
  std::future<bool> hashing;
  try {
    hashing = std::async(std::launch::async, [file, secret] { return payload_matches(*secret, file->bytes()); });
  } catch (const std::system_error&) {  // no thread to be had: check it now
    std::promise<bool> now;
    now.set_value(payload_matches(*secret, file->bytes()));
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
    return Status(Error::kInvalidProgram, path +
                                              ": damaged or not written by this user's cache (its keyed hash "
                                              "does not match)");
  };
  return found;
}

std::optional<FoundBlob> BlobCache::find_entry(const ContentHash& key) {
  const std::string path = entry_path(key);
  if (!usable().is_ok()) {
    ++misses_;
    return std::nullopt;
  }
  struct stat link_info;
  if (::lstat(path.c_str(), &link_info) != 0) {
    ++misses_;
    return std::nullopt;
  }
  // Opened without following a link, and only as a file of this user that only this user
  // can read (an entry holds weights); anything else in its place is removed.
  Result<FileDescriptor> checked = open_private_file(path);
  Result<MappedFile> file = checked.is_ok() ? MappedFile::open(path) : Result<MappedFile>(checked.status());
  if (!file.is_ok()) {
    reject(key);
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
  PLUGRT_RETURN_IF_ERROR(usable());
  EntryHeader header{};
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.format_version = kFormatVersion;
  header.header_size = kHeaderSize;
  header.key_high = key.high;
  header.key_low = key.low;
  header.payload_size = blob.size();
  const std::array<uint8_t, 32> mac = entry_mac(*secret_, header, blob);
  std::memcpy(header.mac, mac.data(), mac.size());
  PLUGRT_RETURN_IF_ERROR(write_private_file(
      entry_path(key), {Span<const uint8_t>(reinterpret_cast<const uint8_t*>(&header), sizeof(header)), blob}));
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
  if (!usable().is_ok()) return;
  const std::string path = directory_ + "/stats";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
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
  const int fd = ::open((directory_ + "/stats").c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
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
