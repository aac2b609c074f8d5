// SPDX-License-Identifier: Apache-2.0
// What makes a file or directory one that only this user or root can change.
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/trusted_path.h"

namespace plugrt {
namespace {

using ::testing::HasSubstr;

struct stat attributes(uid_t uid, gid_t gid, mode_t mode) {
  struct stat info {};
  info.st_uid = uid;
  info.st_gid = gid;
  info.st_mode = mode;
  return info;
}

// A group this process is not in: the root group for another user, else one past its own.
gid_t foreign_group() { return geteuid() == 0 ? getegid() + 54321 : 0; }

TEST(TrustedPath, ADirectoryWithTheStickyBitMayBeWritableByAll) {
  // /tmp: root's, mode 1777. Writable by "others" and by a group most users are not in.
  EXPECT_EQ(untrusted_because(attributes(0, foreign_group(), S_IFDIR | 01777), true), "");
  EXPECT_EQ(untrusted_because(attributes(0, foreign_group(), S_IFDIR | 01770), true), "");
}

TEST(TrustedPath, WithoutTheStickyBitOthersAndForeignGroupsMayNotWrite) {
  EXPECT_THAT(untrusted_because(attributes(0, foreign_group(), S_IFDIR | 0777), true),
              HasSubstr("is writable by every user (mode 0777)"));
  EXPECT_THAT(untrusted_because(attributes(0, foreign_group(), S_IFDIR | 0775), true),
              HasSubstr("is writable by group " + std::to_string(foreign_group()) + ", which this process is not in"));
  // The sticky bit means nothing on a file.
  EXPECT_THAT(untrusted_because(attributes(0, foreign_group(), S_IFREG | 01775), false),
              HasSubstr("is writable by group"));
  EXPECT_EQ(untrusted_because(attributes(geteuid(), getegid(), S_IFDIR | 0775), true), "");
}

TEST(TrustedPath, AnotherUsersFileIsNotTrustedEvenWithTheStickyBit) {
  const uid_t other = geteuid() + 54321;
  EXPECT_THAT(untrusted_because(attributes(other, getegid(), S_IFDIR | 01755), true),
              HasSubstr("is owned by uid " + std::to_string(other) + ", neither this user"));
}

}  // namespace
}  // namespace plugrt
