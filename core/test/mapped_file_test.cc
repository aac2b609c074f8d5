// SPDX-License-Identifier: Apache-2.0
#include "plugrt/mapped_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scratch_directory.h"

#include <stdlib.h>  // mkdtemp
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace plugrt {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<uint8_t> to_vector(Span<const uint8_t> bytes) { return std::vector<uint8_t>(bytes.begin(), bytes.end()); }

class MappedFileTest : public ::testing::Test {
 protected:
  // Writes `bytes` to a new file in the temporary directory and returns its path.
  std::string write(const std::string& name, const std::vector<uint8_t>& bytes) { return scratch_.write(name, bytes); }

  // Bytes that differ from page to page, over a few pages and a partial one.
  static std::vector<uint8_t> pattern_bytes() {
    std::vector<uint8_t> bytes(3 * 4096 + 123);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + i / 4096);
    return bytes;
  }

  testing::ScratchDirectory scratch_{"plugrt_mapped_file"};
  const std::string& dir_ = scratch_.path();
};

TEST_F(MappedFileTest, MapsARegularFile) {
  const auto expected = pattern_bytes();
  const std::string path = write("data.bin", expected);
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  EXPECT_TRUE(file->is_mapped());
  EXPECT_EQ(file->path(), path);
  EXPECT_EQ(to_vector(file->bytes()), expected);
}

TEST_F(MappedFileTest, ReadPathAndMapPathGiveIdenticalBytes) {
  const std::string path = write("data.bin", pattern_bytes());
  auto mapped = MappedFile::open(path);
  auto read = MappedFile::read(path);
  ASSERT_TRUE(mapped.is_ok()) << mapped.status().to_string();
  ASSERT_TRUE(read.is_ok()) << read.status().to_string();
  EXPECT_TRUE(mapped->is_mapped());
  EXPECT_FALSE(read->is_mapped());
  EXPECT_EQ(read->path(), path);
  EXPECT_EQ(to_vector(read->bytes()), to_vector(mapped->bytes()));
}

TEST_F(MappedFileTest, EmptyFileIsReadNotMapped) {
  const std::string path = write("empty.bin", {});
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  EXPECT_FALSE(file->is_mapped());
  EXPECT_TRUE(file->bytes().empty());
}

TEST_F(MappedFileTest, ReadsFilesThatReportSizeZero) {
  // Files in /proc say st_size 0 but have contents: they are read to the end.
  const std::string path = "/proc/self/status";
  if (::access(path.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << path;
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  EXPECT_FALSE(file->is_mapped());
  const auto bytes = file->bytes();
  EXPECT_THAT(std::string(bytes.begin(), bytes.end()), HasSubstr("Name:"));
}

TEST_F(MappedFileTest, MoveKeepsTheBytesInPlace) {
  const std::string path = write("data.bin", pattern_bytes());
  for (bool map : {true, false}) {
    auto opened = map ? MappedFile::open(path) : MappedFile::read(path);
    ASSERT_TRUE(opened.is_ok()) << opened.status().to_string();
    MappedFile first = std::move(opened).value();
    const uint8_t* data = first.bytes().data();
    MappedFile second = std::move(first);
    EXPECT_EQ(second.bytes().data(), data);
    EXPECT_EQ(second.is_mapped(), map);
    EXPECT_TRUE(first.bytes().empty());  // NOLINT(bugprone-use-after-move): documented state
    EXPECT_FALSE(first.is_mapped());

    auto other = MappedFile::read(path);
    ASSERT_TRUE(other.is_ok());
    MappedFile third = std::move(other).value();
    third = std::move(second);  // releases third's own buffer
    EXPECT_EQ(third.bytes().data(), data);
    EXPECT_EQ(to_vector(third.bytes()), pattern_bytes());
  }
}

TEST_F(MappedFileTest, DirectoryIsRefused) {
  for (auto open : {&MappedFile::open, &MappedFile::read}) {
    auto file = open(dir_);
    ASSERT_FALSE(file.is_ok());
    EXPECT_EQ(file.code(), Error::kAccessFailed);
    EXPECT_EQ(file.status().message(), dir_ + ": is a directory");
  }
}

TEST_F(MappedFileTest, MissingFileIsRefusedWithItsPath) {
  const std::string path = dir_ + "/missing.bin";
  auto file = MappedFile::open(path);
  ASSERT_FALSE(file.is_ok());
  EXPECT_EQ(file.code(), Error::kAccessFailed);
  EXPECT_EQ(file.status().message(), path + ": cannot open: " + std::strerror(ENOENT));
}

TEST_F(MappedFileTest, CharacterDeviceIsRefused) {
  auto file = MappedFile::open("/dev/null");
  ASSERT_FALSE(file.is_ok());
  EXPECT_EQ(file.code(), Error::kAccessFailed);
  EXPECT_EQ(file.status().message(), "/dev/null: is a character device");
}

TEST_F(MappedFileTest, FifoIsRefusedWithoutBlocking) {
  const std::string path = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  auto file = MappedFile::open(path);  // would block forever without O_NONBLOCK
  ASSERT_FALSE(file.is_ok());
  EXPECT_EQ(file.status().message(), path + ": is a FIFO");
}

TEST_F(MappedFileTest, UnreadableFileIsRefused) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  const std::string path = write("secret.bin", {1, 2, 3});
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  auto file = MappedFile::open(path);
  ASSERT_FALSE(file.is_ok());
  EXPECT_EQ(file.code(), Error::kAccessFailed);
  EXPECT_THAT(file.status().message(), StartsWith(path + ": cannot open: "));
}

}  // namespace
}  // namespace plugrt
