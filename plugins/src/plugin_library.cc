// SPDX-License-Identifier: Apache-2.0
#include "plugrt/plugins/plugin_library.h"

#include <dlfcn.h>

#include <mutex>

namespace plugrt::plugins {
namespace {

// dlerror() is per thread on glibc, but dlopen/dlerror pairs from several threads are
// kept together so a message is never read after another call replaced it.
std::mutex& dl_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

Result<std::shared_ptr<PluginLibrary>> PluginLibrary::open(const std::string& path) {
  std::lock_guard<std::mutex> lock(dl_mutex());
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    return Status(Error::kPluginInvalid, path + ": dlopen failed: " + (reason != nullptr ? reason : "unknown reason"));
  }
  return std::shared_ptr<PluginLibrary>(new PluginLibrary(path, handle));
}

PluginLibrary::~PluginLibrary() {
  std::lock_guard<std::mutex> lock(dl_mutex());
  dlclose(handle_);
}

void* PluginLibrary::symbol(const char* name) const {
  std::lock_guard<std::mutex> lock(dl_mutex());
  return dlsym(handle_, name);
}

}  // namespace plugrt::plugins
