// SPDX-License-Identifier: Apache-2.0
// Helpers for tests that use the plugin files built in test/plugins/.
#ifndef PLUGRT_TEST_TEST_PLUGIN_FILES_H_
#define PLUGRT_TEST_TEST_PLUGIN_FILES_H_

#include <dlpack/dlpack.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugrt/host_services.h"
#include "plugrt/plugins/search_path.h"

namespace plugrt::testing {

/// Search options that look only in `directories`: no PLUGRT_PLUGIN_PATH, install or
/// executable directory.
plugins::SearchPathOptions only(std::vector<std::string> directories);

/// The path of a built test plugin, e.g. plugin_file("good").
std::string plugin_file(const std::string& name);

/// A fresh directory under the test temp dir, removed with everything in it.
class TempDirectory {
 public:
  TempDirectory();
  ~TempDirectory();
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;

  const std::string& path() const { return path_; }
  /// Copies a built test plugin in, as libplugrt_<as_name>.so; returns the new path.
  std::string add_plugin(const std::string& name, const std::string& as_name = "");
  /// Writes `bytes` to a file called `file_name`; returns its path.
  std::string write(const std::string& file_name, const std::string& bytes);

 private:
  std::string path_;
};

std::string read_file(const std::string& path);

/// True when the dynamic loader has `path` mapped in this process.
bool is_mapped(const std::string& path);

/// Collects log lines instead of printing them.
class LogCapture {
 public:
  /// Installs itself as `environment`'s sink, at every level.
  explicit LogCapture(HostEnvironment& environment);
  std::vector<std::string> lines() const;
  bool contains(const std::string& text) const;

 private:
  std::shared_ptr<std::mutex> mutex_ = std::make_shared<std::mutex>();
  std::shared_ptr<std::vector<std::string>> lines_ = std::make_shared<std::vector<std::string>>();
};

/// A dense float32 DLTensor over a vector the caller keeps alive.
struct FloatTensor {
  explicit FloatTensor(std::vector<float> values);
  FloatTensor(const FloatTensor&) = delete;  // `tensor` points into this object
  FloatTensor& operator=(const FloatTensor&) = delete;
  std::vector<float> data;
  int64_t shape[1];
  DLTensor tensor;
};

}  // namespace plugrt::testing

#endif  // PLUGRT_TEST_TEST_PLUGIN_FILES_H_
