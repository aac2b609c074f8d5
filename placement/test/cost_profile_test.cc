// SPDX-License-Identifier: Apache-2.0
// The cost profile file: round trip, location, and damaged or foreign files ignored.
#include "plugrt/placement/cost_profile.h"

#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scratch_directory.h"

namespace plugrt::placement {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

std::vector<uint8_t> text(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

TEST(CostProfile, SavesAndLoadsFigures) {
  testing::ScratchDirectory dir("profile");
  const std::string path = CostProfile::file_for(dir.path() + "/nested/cache", "Some CPU @ 3GHz");
  CostProfile profile("Some CPU @ 3GHz");
  profile.set("onednn@onednn/1.0.0", "Conv/17(1[1,3,8,8])->(1[1,4,8,8])#00", 12.5);
  profile.set("xnnpack@xnnpack/0.2.0", "Relu/17(1[4])->(1[4])#00", 0.25);
  ASSERT_TRUE(profile.save(path).is_ok());

  std::string warning;
  const CostProfile loaded = CostProfile::load(path, "Some CPU @ 3GHz", &warning);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(loaded.size(), 2u);
  EXPECT_THAT(loaded.find("onednn@onednn/1.0.0", "Conv/17(1[1,3,8,8])->(1[1,4,8,8])#00"), Optional(12.5));
  EXPECT_EQ(loaded.find("onednn@onednn/1.0.1", "Conv/17(1[1,3,8,8])->(1[1,4,8,8])#00"), std::nullopt);
}

TEST(CostProfile, AMissingFileIsAnEmptyProfile) {
  testing::ScratchDirectory dir("profile");
  std::string warning = "stale";
  EXPECT_EQ(CostProfile::load(dir.path() + "/none.tsv", "cpu", &warning).size(), 0u);
  EXPECT_EQ(warning, "");
}

TEST(CostProfile, IgnoresADamagedFileWithAWarning) {
  testing::ScratchDirectory dir("profile");
  struct Case {
    std::string content, why;
  } cases[] = {
      {"something else\n", "not a plugrt cost profile"},
      {"plugrt-cost-profile 1\ncpu\tother cpu\n", "written for another CPU"},
      {"plugrt-cost-profile 1\ncpu\tcpu\nb\tsig\t-3\n", "'-3' is not a time"},
      {"plugrt-cost-profile 1\ncpu\tcpu\nb\tsig\tnan\n", "'nan' is not a time"},
      {"plugrt-cost-profile 1\ncpu\tcpu\nb\tsig\t1.5\nb\tsig\t2\n", "a second figure"},
      {"plugrt-cost-profile 1\ncpu\tcpu\nb\tsig\n", "expected <backend build>"},
  };
  for (const Case& c : cases) {
    const std::string path = dir.write("bad.tsv", text(c.content));
    std::string warning;
    EXPECT_EQ(CostProfile::load(path, "cpu", &warning).size(), 0u) << c.content;
    EXPECT_THAT(warning, HasSubstr(path)) << c.content;
    EXPECT_THAT(warning, HasSubstr(c.why)) << c.content;
    EXPECT_THAT(warning, HasSubstr("the profile is ignored"));
  }
}

TEST(CostProfile, TheDirectoryFollowsTheEnvironment) {
  const char* saved_cache = std::getenv("PLUGRT_CACHE_DIR");
  const char* saved_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string cache = saved_cache ? saved_cache : "", xdg = saved_xdg ? saved_xdg : "";
  ::setenv("PLUGRT_CACHE_DIR", "/somewhere/plugrt", 1);
  EXPECT_EQ(CostProfile::default_directory(), "/somewhere/plugrt");
  ::unsetenv("PLUGRT_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(CostProfile::default_directory(), "/xdg/plugrt");
  saved_cache ? ::setenv("PLUGRT_CACHE_DIR", cache.c_str(), 1) : ::unsetenv("PLUGRT_CACHE_DIR");
  saved_xdg ? ::setenv("XDG_CACHE_HOME", xdg.c_str(), 1) : ::unsetenv("XDG_CACHE_HOME");
  // One file per CPU model.
  EXPECT_NE(CostProfile::file_for("/d", "cpu a"), CostProfile::file_for("/d", "cpu b"));
  EXPECT_FALSE(CostProfile::this_cpu().empty());
}

}  // namespace
}  // namespace plugrt::placement
