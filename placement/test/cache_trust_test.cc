// SPDX-License-Identifier: Apache-2.0
// The cache directory is data its user owns: what another local user could do to a cache
// that is shared or writable by others, or to files planted in it, ends in a refusal or a
// rebuilt entry, never in the attacker's data being used or their file being written.
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/placement/blob_cache.h"
#include "plugrt/placement/cost_profile.h"
#include "scratch_directory.h"

namespace plugrt::placement {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

ContentHash key_of(uint64_t n) {
  ContentHasher hasher;
  hasher.add(n);
  return hasher.finish();
}

std::vector<uint8_t> blob_of(uint8_t value) { return std::vector<uint8_t>(256, value); }

mode_t mode_of(const std::string& path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0 ? info.st_mode & 07777 : 0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(CacheTrust, DirectoriesAreMadePrivateAndEntriesToo) {
  testing::ScratchDirectory dir("cache_trust");
  const std::string root = dir.path() + "/cache";
  BlobCache cache(root);
  ASSERT_TRUE(cache.store(key_of(1), blob_of(7)).is_ok());
  EXPECT_EQ(mode_of(root), 0700u);
  EXPECT_EQ(mode_of(root + "/blobs"), 0700u);
  EXPECT_EQ(mode_of(root + "/key"), 0600u);
  EXPECT_EQ(mode_of(cache.entry_path(key_of(1))), 0600u);
  cache.find(key_of(2));
  cache.save_counts();
  EXPECT_EQ(mode_of(root + "/blobs/stats"), 0600u);

  // A cache made by an older version, readable by everyone, is narrowed.
  ASSERT_EQ(::chmod(root.c_str(), 0755), 0);
  BlobCache again(root);
  ASSERT_TRUE(again.find(key_of(1)));
  EXPECT_EQ(mode_of(root), 0700u);
}

TEST(CacheTrust, ADirectoryOthersCanWriteIsNotUsed) {
  testing::ScratchDirectory dir("cache_trust");
  const std::string shared = dir.path() + "/shared";
  ASSERT_TRUE(fs::create_directories(shared + "/cache"));
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);  // a parent anyone can write, no sticky bit
  BlobCache cache(shared + "/cache");
  EXPECT_THAT(cache.usable().message(), HasSubstr("/shared is writable by every user (mode 0777)"));
  const Status stored = cache.store(key_of(1), blob_of(1));
  EXPECT_FALSE(stored.is_ok());
  EXPECT_THAT(stored.message(), HasSubstr("the blob cache is not used"));
  EXPECT_FALSE(cache.find(key_of(1)));
  EXPECT_FALSE(fs::exists(shared + "/cache/blobs/" + key_of(1).hex() + ".blob"));
}

TEST(CacheTrust, NothingIsMadeInADirectoryOthersCanWrite) {
  testing::ScratchDirectory dir("cache_trust");
  const std::string shared = dir.path() + "/shared";
  ASSERT_TRUE(fs::create_directories(shared));
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  BlobCache cache(shared + "/cache");
  EXPECT_THAT(cache.usable().message(),
              HasSubstr("/shared: not trusted: the directory is writable by every user (mode 0777)"));
  EXPECT_FALSE(cache.store(key_of(1), blob_of(1)).is_ok());
  EXPECT_FALSE(fs::exists(shared + "/cache")) << "made in a directory another user could take it from";
  ASSERT_EQ(::chmod(shared.c_str(), 0700), 0);
}

TEST(CacheTrust, ADirectoryOwnedByAnotherUserIsNotUsed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  testing::ScratchDirectory dir("cache_trust");
  const std::string theirs = dir.path() + "/theirs";
  ASSERT_TRUE(fs::create_directories(theirs));
  ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  BlobCache cache(theirs);
  EXPECT_THAT(cache.usable().message(), HasSubstr("owned by uid 65534"));
  EXPECT_FALSE(cache.store(key_of(1), blob_of(1)).is_ok());
}

TEST(CacheTrust, AnEntryNotWrittenWithThisCachesKeyIsRejected) {
  testing::ScratchDirectory dir("cache_trust");
  BlobCache victim(dir.path() + "/victim"), attacker(dir.path() + "/attacker");
  ASSERT_TRUE(victim.store(key_of(1), blob_of(1)).is_ok());
  // The attacker writes an entry for the same key, valid in every way but the key it is
  // authenticated with (their own cache's), and puts it in place of the victim's.
  ASSERT_TRUE(attacker.store(key_of(1), blob_of(42)).is_ok());
  fs::copy_file(attacker.entry_path(key_of(1)), victim.entry_path(key_of(1)), fs::copy_options::overwrite_existing);
  EXPECT_FALSE(victim.find(key_of(1)));
  EXPECT_FALSE(fs::exists(victim.entry_path(key_of(1)))) << "removed, to be rebuilt";
  EXPECT_EQ(victim.stats().rejected, 0u);  // counted by this process until save_counts()
  victim.save_counts();
  EXPECT_EQ(victim.stats().rejected, 1u);
}

TEST(CacheTrust, LinksPlantedInTheCacheAreNotFollowed) {
  testing::ScratchDirectory dir("cache_trust");
  const std::string target = dir.path() + "/precious.txt";
  std::ofstream(target) << "keep me\n";
  BlobCache cache(dir.path() + "/cache");
  ASSERT_TRUE(cache.usable().is_ok());
  // A link where an entry would be, and one where the counts go.
  ASSERT_EQ(::symlink(target.c_str(), cache.entry_path(key_of(1)).c_str()), 0);
  ASSERT_EQ(::symlink(target.c_str(), (dir.path() + "/cache/blobs/stats").c_str()), 0);
  EXPECT_FALSE(cache.find(key_of(1)));
  cache.save_counts();
  EXPECT_EQ(read_text(target), "keep me\n");
  ASSERT_TRUE(cache.store(key_of(1), blob_of(3)).is_ok());  // replaces the link, not the file it names
  EXPECT_EQ(read_text(target), "keep me\n");
  EXPECT_TRUE(cache.find(key_of(1)));
}

TEST(CacheTrust, TheCostProfileIsPrivateAndNeverWrittenThroughALink) {
  testing::ScratchDirectory dir("cache_trust");
  const std::string target = dir.path() + "/precious.txt";
  std::ofstream(target) << "keep me\n";
  const std::string cache = dir.path() + "/cache";
  const std::string path = CostProfile::file_for(cache, "test cpu");
  CostProfile profile("test cpu");
  profile.set("onednn@onednn/1", "Relu:f32[1,8]", 1.5);
  ASSERT_TRUE(profile.save(path).is_ok());
  EXPECT_EQ(mode_of(path), 0600u);
  EXPECT_EQ(mode_of(cache), 0700u);
  // The temporary file's name was predictable once; now it is random and made with O_EXCL.
  for (int pid = 1; pid < 4; ++pid) {
    ::symlink(target.c_str(), (path + ".tmp" + std::to_string(pid)).c_str());
  }
  ASSERT_TRUE(profile.save(path).is_ok());
  EXPECT_EQ(read_text(target), "keep me\n");
  ASSERT_EQ(::chmod(cache.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  EXPECT_THAT(profile.save(path).message(), HasSubstr("writable by every user"));
  ASSERT_EQ(::chmod(dir.path().c_str(), 0700), 0);
}

}  // namespace
}  // namespace plugrt::placement
