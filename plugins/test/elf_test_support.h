// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the ELF image and plugin metadata tests: reading fixture files,
// patching copies of them, and a temporary directory removed at the end of each test.
#ifndef PLUGRT_PLUGINS_TEST_ELF_TEST_SUPPORT_H_
#define PLUGRT_PLUGINS_TEST_ELF_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <stdlib.h>  // mkdtemp

#include "plugrt/mapped_file.h"

namespace plugrt::plugins::test_support {

/// The whole file at `path`; fails the test when it cannot be read.
inline std::vector<uint8_t> read_bytes(const std::string& path) {
  auto file = MappedFile::read(path);
  EXPECT_TRUE(file.is_ok()) << file.status().to_string();
  if (!file.is_ok()) return {};
  const auto bytes = file->bytes();
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

/// Writes `bytes` to `path`, replacing it.
inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

/// Overwrites sizeof(T) bytes at `offset` with `value` (host byte order, like the file).
template <typename T>
void patch(std::vector<uint8_t>& bytes, size_t offset, T value) {
  ASSERT_LE(offset + sizeof(T), bytes.size());
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

/// Reads sizeof(T) bytes at `offset`.
template <typename T>
T peek(const std::vector<uint8_t>& bytes, size_t offset) {
  T value{};
  if (offset + sizeof(T) <= bytes.size()) std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

/// A test fixture with a fresh directory under ::testing::TempDir(), removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/plugrt_elf_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << "mkdtemp failed: " << std::strerror(errno);
    dir_ = pattern;
  }
  void TearDown() override {
    if (dir_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  /// A path inside the temporary directory.
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  /// Writes `bytes` to a new file in the temporary directory and returns its path.
  std::string write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string file = path(name);
    write_bytes(file, bytes);
    return file;
  }

  std::string dir_;
};

}  // namespace plugrt::plugins::test_support

#endif  // PLUGRT_PLUGINS_TEST_ELF_TEST_SUPPORT_H_
