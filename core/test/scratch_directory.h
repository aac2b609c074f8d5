// SPDX-License-Identifier: Apache-2.0
// ScratchDirectory: a fresh directory under the test temp dir for files a test writes,
// removed with everything in it.
#ifndef PLUGRT_CORE_TEST_SCRATCH_DIRECTORY_H_
#define PLUGRT_CORE_TEST_SCRATCH_DIRECTORY_H_

#include <stdlib.h>  // mkdtemp

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace plugrt::testing {

class ScratchDirectory {
 public:
  explicit ScratchDirectory(const std::string& prefix) {
    std::string pattern = ::testing::TempDir() + "/" + prefix + "_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp: " << std::strerror(errno);
      return;
    }
    path_ = pattern;
  }
  ~ScratchDirectory() {
    if (path_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::string& path() const { return path_; }

  /// Writes `bytes` to a new file called `name` in the directory; returns its path.
  std::string write(const std::string& name, const std::vector<uint8_t>& bytes) const {
    const std::string file = path_ + "/" + name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    EXPECT_TRUE(out.good()) << "cannot write " << file;
    return file;
  }

 private:
  std::string path_;
};

}  // namespace plugrt::testing

#endif  // PLUGRT_CORE_TEST_SCRATCH_DIRECTORY_H_
