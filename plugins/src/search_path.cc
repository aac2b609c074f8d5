// SPDX-License-Identifier: Apache-2.0
#include "plugrt/plugins/search_path.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string_view>

namespace plugrt::plugins {
namespace {

constexpr std::string_view kPrefix = "libplugrt_";
constexpr std::string_view kSuffix = ".so";

bool is_candidate_name(std::string_view name) {
  return name.size() > kPrefix.size() + kSuffix.size() && name.substr(0, kPrefix.size()) == kPrefix &&
         name.substr(name.size() - kSuffix.size()) == kSuffix;
}

/// The directory of the shared library this code is linked into (libplugrt.so, in
/// <prefix>/lib); empty when it is linked into the executable.
std::string library_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&library_directory), &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string name = std::filesystem::path(info.dli_fname).filename().string();
  if (name.find(".so") == std::string::npos) return "";
  std::error_code error;
  const std::filesystem::path file = std::filesystem::canonical(info.dli_fname, error);
  return error ? "" : file.parent_path().string();
}

}  // namespace

std::string install_plugin_directory() {
  if (const std::string library = library_directory(); !library.empty()) {
    return std::filesystem::path(library + "/" PLUGRT_LIB_TO_PLUGIN_DIR).lexically_normal().string();
  }
  const std::string directory = executable_directory();
  if (directory.empty()) return "";
  return std::filesystem::path(directory + "/" PLUGRT_BIN_TO_PLUGIN_DIR).lexically_normal().string();
}

std::string executable_directory() {
  std::string buffer(4096, '\0');
  const ssize_t size = readlink("/proc/self/exe", buffer.data(), buffer.size());
  if (size <= 0 || static_cast<size_t>(size) >= buffer.size()) return "";
  buffer.resize(static_cast<size_t>(size));
  const size_t slash = buffer.rfind('/');
  return slash == std::string::npos ? "" : buffer.substr(0, slash);
}

std::string default_backend_host() {
  const std::string exe = executable_directory();
  const std::string install = install_plugin_directory();  // <prefix>/lib/plugrt/plugins
  std::vector<std::string> candidates;
  if (!exe.empty()) {
    candidates.push_back(exe + "/../lib/plugrt/plugrt-backend-host");
    candidates.push_back(exe + "/plugrt-backend-host");
  }
  candidates.push_back(install.substr(0, install.rfind('/') + 1) + "plugrt-backend-host");
  for (const std::string& candidate : candidates) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return candidates.back();
}

std::vector<SearchDirectory> plugin_search_path(const SearchPathOptions& options) {
  std::vector<SearchDirectory> path;
  std::set<std::string> seen;
  auto add = [&](std::string directory, const char* source) {
    while (directory.size() > 1 && directory.back() == '/') directory.pop_back();
    if (directory.empty() || !seen.insert(directory).second) return;
    path.push_back({std::move(directory), source});
  };
  for (const std::string& directory : options.application_directories) {
    add(directory, "application");
  }
  if (options.use_environment) {
    // secure_getenv returns NULL in a set-uid/set-gid program: no path injection there.
    if (const char* value = secure_getenv("PLUGRT_PLUGIN_PATH")) {
      std::string_view rest(value);
      while (!rest.empty()) {
        const size_t colon = rest.find(':');
        std::string entry(rest.substr(0, colon));
        // A relative entry would follow whatever directory the process is in when it
        // looks: it is fixed now, against today's, and the source says so (plugrt doctor).
        if (!entry.empty() && entry[0] != '/') {
          std::error_code error;
          const std::filesystem::path absolute = std::filesystem::absolute(entry, error);
          if (!error) add(absolute.lexically_normal().string(), "PLUGRT_PLUGIN_PATH (a relative entry, made absolute)");
        } else {
          add(std::move(entry), "PLUGRT_PLUGIN_PATH");
        }
        rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      }
    }
  }
  if (options.use_install_directory) add(install_plugin_directory(), "install");
  if (options.use_executable_directory) {
    const std::string directory = executable_directory();
    if (!directory.empty()) add(directory + "/plugins", "executable");
    // libplugrt.so in a build tree sits in bin/, next to the in-tree plugins.
    if (const std::string library = library_directory(); !library.empty()) add(library + "/plugins", "library");
  }
  return path;
}

std::vector<std::string> list_plugin_files(const std::string& directory) {
  std::vector<std::string> files;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(directory.c_str()), &closedir);
  if (dir == nullptr) return files;
  while (const dirent* entry = readdir(dir.get())) {
    if (!is_candidate_name(entry->d_name)) continue;
    std::string path = directory + "/" + entry->d_name;
    struct stat info;
    if (stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode)) files.push_back(std::move(path));
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace plugrt::plugins
