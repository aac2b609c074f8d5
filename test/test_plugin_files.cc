// SPDX-License-Identifier: Apache-2.0
#include "test_plugin_files.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace plugrt::testing {

plugins::SearchPathOptions only(std::vector<std::string> directories) {
  plugins::SearchPathOptions options;
  options.application_directories = std::move(directories);
  options.use_environment = options.use_install_directory = options.use_executable_directory = false;
  return options;
}

std::string plugin_file(const std::string& name) {
  return std::string(PLUGRT_TEST_PLUGIN_DIR) + "/libplugrt_" + name + ".so";
}

TempDirectory::TempDirectory() {
  std::string pattern = ::testing::TempDir() + "plugrt_test_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << pattern;
  path_ = pattern;
}

TempDirectory::~TempDirectory() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDirectory::add_plugin(const std::string& name, const std::string& as_name) {
  const std::string target = path_ + "/libplugrt_" + (as_name.empty() ? name : as_name) + ".so";
  std::filesystem::copy_file(plugin_file(name), target, std::filesystem::copy_options::overwrite_existing);
  return target;
}

std::string TempDirectory::write(const std::string& file_name, const std::string& bytes) {
  const std::string target = path_ + "/" + file_name;
  std::ofstream(target, std::ios::binary) << bytes;
  return target;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

bool is_mapped(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);  // drop the reference RTLD_NOLOAD took
  return true;
}

LogCapture::LogCapture(HostEnvironment& environment) {
  environment.set_min_log_level(LogLevel::kDebug);
  environment.set_log_sink(
      [mutex = mutex_, lines = lines_](LogLevel, std::string_view source, std::string_view message) {
        std::lock_guard<std::mutex> lock(*mutex);
        lines->push_back(std::string(source) + ": " + std::string(message));
      });
}

std::vector<std::string> LogCapture::lines() const {
  std::lock_guard<std::mutex> lock(*mutex_);
  return *lines_;
}

bool LogCapture::contains(const std::string& text) const {
  for (const std::string& line : lines()) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

FloatTensor::FloatTensor(std::vector<float> values) : data(std::move(values)) {
  shape[0] = static_cast<int64_t>(data.size());
  tensor = DLTensor{data.data(), DLDevice{kDLCPU, 0}, 1, DLDataType{kDLFloat, 32, 1}, shape, nullptr, 0};
}

}  // namespace plugrt::testing
