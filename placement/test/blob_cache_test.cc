// SPDX-License-Identifier: Apache-2.0
// The compiled-blob cache's files: entries round-trip, damaged ones are refused and
// removed, the size cap evicts the least recently used, counts add up across instances;
// a placed method's entry keeps its report lines and the backends left out as unavailable.
#include "plugrt/placement/blob_cache.h"

#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "placed_entry.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/program_builder.h"
#include "relu_program.h"
#include "scratch_directory.h"

namespace plugrt::placement {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> bytes_of(size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7);
  return bytes;
}

ContentHash key_of(uint64_t n) {
  ContentHasher hasher;
  hasher.add(n);
  return hasher.finish();
}

/// Sets an entry's last use `seconds_ago`, as the cache's eviction sees it.
void age(const std::string& path, int seconds_ago) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::seconds(seconds_ago));
}

TEST(BlobCacheTest, AStoredBlobIsFoundUnderItsKeyOnly) {
  testing::ScratchDirectory dir("blob_cache");
  BlobCache cache(dir.path());
  EXPECT_FALSE(cache.find(key_of(1)));
  const std::vector<uint8_t> blob = bytes_of(1000, 3);
  ASSERT_TRUE(cache.store(key_of(1), blob).is_ok());
  std::optional<FoundBlob> found = cache.find(key_of(1));
  ASSERT_TRUE(found);
  EXPECT_EQ(std::vector<uint8_t>(found->bytes.begin(), found->bytes.end()), blob);
  EXPECT_EQ(found->origin, "cache");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(found->bytes.data()) % 64, 0u);
  EXPECT_FALSE(cache.find(key_of(2)));
  // An empty blob is an entry too.
  ASSERT_TRUE(cache.store(key_of(3), {}).is_ok());
  ASSERT_TRUE(cache.find(key_of(3)));
  EXPECT_TRUE(cache.find(key_of(3))->bytes.empty());
}

TEST(BlobCacheTest, DamagedTruncatedForeignAndOtherFormatEntriesAreRemoved) {
  testing::ScratchDirectory dir("blob_cache");
  BlobCache cache(dir.path());
  auto stored = [&](uint64_t n) {
    EXPECT_TRUE(cache.store(key_of(n), bytes_of(500, static_cast<uint8_t>(n))).is_ok());
    return cache.entry_path(key_of(n));
  };
  auto patch = [](const std::string& path, std::streamoff offset, char byte) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(offset);
    file.put(byte);
  };
  const std::string damaged = stored(1);
  patch(damaged, 64 + 250, 0x7F);
  const std::string truncated = stored(2);
  fs::resize_file(truncated, 64 + 499);
  const std::string short_file = stored(3);
  fs::resize_file(short_file, 10);
  const std::string other_format = stored(4);
  patch(other_format, 8, 9);  // format version 9
  const std::string foreign = stored(5);
  fs::copy_file(stored(6), foreign, fs::copy_options::overwrite_existing);  // entry 6's bytes under key 5
  const std::string not_an_entry = stored(7);
  patch(not_an_entry, 0, 'X');

  for (uint64_t n : {1, 2, 3, 4, 5, 7}) {
    EXPECT_FALSE(cache.find(key_of(n))) << "entry " << n;
    EXPECT_FALSE(fs::exists(cache.entry_path(key_of(n)))) << "entry " << n << " is removed";
  }
  EXPECT_TRUE(cache.find(key_of(6)));
  cache.save_counts();
  const BlobCacheStats stats = cache.stats();
  EXPECT_EQ(stats.rejected, 6u);
  EXPECT_EQ(stats.misses, 6u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.entries, 1u);
}

TEST(BlobCacheTest, TheSizeCapEvictsTheLeastRecentlyUsed) {
  testing::ScratchDirectory dir("blob_cache");
  const uint64_t entry_bytes = 128 + 1000;  // header and payload
  BlobCache cache(dir.path(), 3 * entry_bytes);
  for (uint64_t n = 1; n <= 3; ++n) {
    ASSERT_TRUE(cache.store(key_of(n), bytes_of(1000, static_cast<uint8_t>(n))).is_ok());
    age(cache.entry_path(key_of(n)), 100 - static_cast<int>(n));  // 1 oldest
  }
  ASSERT_TRUE(cache.find(key_of(1)));  // now the most recently used
  ASSERT_TRUE(cache.store(key_of(4), bytes_of(1000, 4)).is_ok());
  EXPECT_TRUE(fs::exists(cache.entry_path(key_of(1))));
  EXPECT_FALSE(fs::exists(cache.entry_path(key_of(2)))) << "the least recently used goes first";
  EXPECT_TRUE(fs::exists(cache.entry_path(key_of(3))));
  EXPECT_TRUE(fs::exists(cache.entry_path(key_of(4))));
  EXPECT_LE(cache.stats().bytes, 3 * entry_bytes);
}

TEST(BlobCacheTest, CountsAddUpOverInstancesAndStaleTemporaryFilesGo) {
  testing::ScratchDirectory dir("blob_cache");
  {
    BlobCache writer(dir.path());
    ASSERT_TRUE(writer.store(key_of(1), bytes_of(10, 1)).is_ok());
    EXPECT_TRUE(writer.find(key_of(1)));
    EXPECT_FALSE(writer.find(key_of(2)));
    writer.save_counts();
  }
  BlobCache reader(dir.path());
  EXPECT_TRUE(reader.find(key_of(1)));
  reader.save_counts();
  BlobCacheStats stats = reader.stats();
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.directory, dir.path() + "/blobs");

  // A writer that died before renaming leaves a temporary file: ignored, then removed
  // once it is old.
  const std::string leftover = dir.path() + "/blobs/.tmp-1-0-dead";
  std::ofstream(leftover) << "partial";
  age(leftover, 2 * 3600);
  ASSERT_TRUE(reader.store(key_of(3), bytes_of(10, 3)).is_ok());
  EXPECT_FALSE(fs::exists(leftover));
  EXPECT_EQ(reader.stats().entries, 2u);
}

TEST(BlobCacheTest, AnUnwritableDirectoryIsAnErrorNamingIt) {
  testing::ScratchDirectory dir("blob_cache");
  const std::string file = dir.path() + "/a_file";
  std::ofstream(file) << "x";
  BlobCache cache(file);  // "<a file>/blobs" cannot be made
  const Status stored = cache.store(key_of(1), bytes_of(10, 1));
  ASSERT_FALSE(stored.is_ok());
  EXPECT_EQ(stored.code(), Error::kAccessFailed);
  EXPECT_NE(stored.message().find(file), std::string::npos) << stored.message();
  EXPECT_FALSE(cache.find(key_of(1)));
}

using testing::relu_program;

TEST(PlacedEntryTest, KeepsTheReportLinesAndTheBackendsLeftOutAsUnavailable) {
  const Program program = relu_program(8);
  PlacedProgram placed{program, {"program"}, {"placed over xnnpack, portable as the program is"}, {}, {}, {}};
  const std::vector<uint8_t> entry = placed_entry(placed, {}, {"gpu", "npu"});
  std::vector<std::string> unavailable;
  Result<PlacedProgram> read = read_placed_entry(entry, nullptr, program, &unavailable);
  ASSERT_TRUE(read.is_ok()) << read.status().to_string();
  EXPECT_EQ(read->blob_origins, std::vector<std::string>{"program"});
  EXPECT_EQ(read->placement_reasons, placed.placement_reasons);
  EXPECT_EQ(unavailable, (std::vector<std::string>{"gpu", "npu"}));

  // The backends left out come before the delegates' lines: one after them is damage.
  std::string lines = "program\tplaced\nunavailable\tgpu\n";
  std::vector<uint8_t> damaged(64, 0);
  const uint64_t size = lines.size();
  std::memcpy(damaged.data(), &size, 8);
  std::memcpy(damaged.data() + 8, lines.data(), lines.size());
  Result<PlacedProgram> refused = read_placed_entry(damaged, nullptr, program, &unavailable);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.code(), Error::kInvalidProgram);
  EXPECT_NE(refused.status().message().find("relu.prt"), std::string::npos) << refused.status().message();
}

}  // namespace
}  // namespace plugrt::placement
