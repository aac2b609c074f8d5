// SPDX-License-Identifier: Apache-2.0
// Plugin trust: files others could have written are refused unless the application
// allows them, and an allow-list pins plugins by SHA-256. Real plugin files, real modes.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/plugins/plugin_trust.h"
#include "test_plugin_files.h"

namespace plugrt::testing {
namespace {

using plugins::PluginLoader;
using plugins::SearchPathOptions;
using ::testing::HasSubstr;

TEST(PluginTrust, AFileEveryoneCanWriteIsRefusedUnlessAllowed) {
  TempDirectory dir;
  const std::string path = dir.add_plugin("good");
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);
  Registry registry;
  PluginLoader loader(registry, only({dir.path()}));
  Result<PluginId> refused = loader.load(path);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.code(), Error::kPluginInvalid);
  EXPECT_THAT(refused.status().message(), HasSubstr("not trusted: the file is writable by every user (mode 0666)"));

  SearchPathOptions allowing = only({dir.path()});
  allowing.allow_untrusted_files = true;
  Registry registry2;
  PluginLoader trusting(registry2, allowing);
  EXPECT_TRUE(trusting.load(path).is_ok());
}

TEST(PluginTrust, ADirectoryEveryoneCanWriteIsRefused) {
  TempDirectory dir;
  const std::string path = dir.add_plugin("good");
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  Registry registry;
  PluginLoader loader(registry, only({dir.path()}));
  loader.discover();
  std::vector<plugins::PluginReport> report = loader.report();
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].state, plugins::PluginReport::State::kRefused);
  EXPECT_THAT(report[0].refusal.message(), HasSubstr("its directory " + dir.path() + " is writable by every user"));
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
}

TEST(PluginTrust, AFileOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  TempDirectory dir;
  const std::string path = dir.add_plugin("good");
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  Registry registry;
  PluginLoader loader(registry, only({dir.path()}));
  Result<PluginId> refused = loader.load(path);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("is owned by uid 65534, neither this user"));
}

TEST(PluginTrust, TheAllowListPinsPluginsBySha256) {
  TempDirectory dir;
  const std::string good = dir.add_plugin("good");
  const std::string other = dir.add_plugin("private_a");
  Result<std::string> digest = plugins::sha256_file(good);
  ASSERT_TRUE(digest.is_ok());
  const std::string list = dir.write("allowed.txt", "# pinned plugins\n" + *digest + "  libplugrt_good.so\n");

  SearchPathOptions options = only({dir.path()});
  options.allow_list = list;
  Registry registry;
  PluginLoader loader(registry, options);
  EXPECT_TRUE(loader.load(good).is_ok());
  Result<PluginId> refused = loader.load(other);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("is not in the plugin allow-list " + list));
}

TEST(PluginTrust, AMissingOrMalformedAllowListRefusesEverything) {
  TempDirectory dir;
  const std::string good = dir.add_plugin("good");
  SearchPathOptions options = only({dir.path()});
  options.allow_list = dir.path() + "/missing.txt";
  Registry registry;
  PluginLoader loader(registry, options);
  Result<PluginId> refused = loader.load(good);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("not trusted: plugin allow-list " + options.allow_list));

  options.allow_list = dir.write("bad.txt", "not-a-digest libplugrt_good.so\n");
  Registry registry2;
  PluginLoader loader2(registry2, options);
  Result<PluginId> malformed = loader2.load(good);
  ASSERT_FALSE(malformed.is_ok());
  EXPECT_THAT(malformed.status().message(), HasSubstr("bad.txt:1: expected a SHA-256 in hex"));
}

TEST(PluginTrust, ADirectoryAboveOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  TempDirectory dir;
  const std::string upper = dir.path() + "/upper", lower = upper + "/lower";
  ASSERT_TRUE(std::filesystem::create_directories(lower));
  const std::string path = lower + "/libplugrt_good.so";
  std::filesystem::copy_file(plugin_file("good"), path);
  ASSERT_EQ(chown(upper.c_str(), 65534, 65534), 0);  // the plugin's own directory stays ours
  Registry registry;
  PluginLoader loader(registry, only({lower}));
  Result<PluginId> refused = loader.load(path);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("not trusted: its directory " + upper + " is owned by uid 65534, neither this user"));
}

/// The attack on a plugin directory whose parent another user can write: after the
/// plugin was checked, that user swaps the directory for one of theirs holding a file of
/// the same name (renameat2 RENAME_EXCHANGE). Here the allow-list pins the real plugin;
/// "private_a" stands for the attacker's file (its backend registering would mean its
/// code ran).
class DirectorySwap : public ::testing::Test {
 protected:
  void SetUp() override {
    plugins_ = base_.path() + "/plugins";
    theirs_ = base_.path() + "/theirs";
    ASSERT_TRUE(std::filesystem::create_directories(plugins_));
    ASSERT_TRUE(std::filesystem::create_directories(theirs_));
    std::filesystem::copy_file(plugin_file("good"), plugins_ + "/libplugrt_good.so");
    std::filesystem::copy_file(plugin_file("private_a"), theirs_ + "/libplugrt_good.so");
    Result<std::string> digest = plugins::sha256_file(plugins_ + "/libplugrt_good.so");
    ASSERT_TRUE(digest.is_ok());
    options_ = only({plugins_});
    options_.allow_list = base_.write("allowed.txt", *digest + "  libplugrt_good.so\n");
  }
  bool swap() const { return renameat2(AT_FDCWD, plugins_.c_str(), AT_FDCWD, theirs_.c_str(), RENAME_EXCHANGE) == 0; }

  TempDirectory base_;
  std::string plugins_, theirs_;
  SearchPathOptions options_;
};

// Swapped after discovery: loading checks the file again, on the descriptor it maps.
TEST_F(DirectorySwap, AfterDiscoveryTheSwappedFileIsRefused) {
  Registry registry;
  PluginLoader loader(registry, options_);
  loader.discover();
  ASSERT_EQ(loader.report().at(0).state, plugins::PluginReport::State::kAccepted);
  ASSERT_TRUE(swap());
  Result<RegisteredBackend> offset = registry.find_backend("offset");  // loads the plugin: refused
  ASSERT_FALSE(offset.is_ok());
  EXPECT_THAT(offset.status().message(), HasSubstr("is not in the plugin allow-list"));
  EXPECT_FALSE(registry.find_backend("private_a").is_ok());
}

// Flipping all the while, so some swaps land between the check and dlopen (before the
// descriptor was what dlopen mapped, the other file's code ran in a few of 200 tries).
TEST_F(DirectorySwap, WhileItFlipsOnlyTheCheckedFileEverRuns) {
  std::atomic<bool> done{false};
  std::thread attacker([&] {
    while (!done) swap();
  });
  int loaded = 0, theirs = 0;
  for (int i = 0; i < 200; ++i) {
    Registry registry;
    PluginLoader loader(registry, options_);
    loader.discover();
    if (registry.find_backend("offset").is_ok()) ++loaded;
    if (registry.find_backend("private_a").is_ok()) ++theirs;
  }
  done = true;
  attacker.join();
  std::cout << "of 200 tries, the checked plugin loaded in " << loaded << ", the other file in " << theirs << "\n";
  EXPECT_EQ(theirs, 0) << "the other file's code ran";
}

TEST(PluginTrust, Sha256MatchesAKnownDigest) {
  TempDirectory dir;
  const std::string path = dir.write("abc.txt", "abc");
  Result<std::string> digest = plugins::sha256_file(path);
  ASSERT_TRUE(digest.is_ok());
  EXPECT_EQ(*digest, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace plugrt::testing
