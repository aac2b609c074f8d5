// SPDX-License-Identifier: Apache-2.0
#include "plugrt/plugins/plugin_library.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "worker_spin.h"

namespace plugrt::plugins {
namespace {

// dlerror() is per thread on glibc, but dlopen/dlerror pairs from several threads are
// kept together so a message is never read after another call replaced it.
std::mutex& dl_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

namespace {

Result<void*> load(const std::string& path, const std::string& file) {
  std::lock_guard<std::mutex> lock(dl_mutex());
  bound_worker_spinning();
  dlerror();
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    return Status(Error::kPluginInvalid, path + ": dlopen failed: " + (reason != nullptr ? reason : "unknown reason"));
  }
  return handle;
}

}  // namespace

Result<std::shared_ptr<PluginLibrary>> PluginLibrary::open(const std::string& path) {
  PLUGRT_ASSIGN_OR_RETURN(void* handle, load(path, path));
  return std::shared_ptr<PluginLibrary>(new PluginLibrary(path, handle));
}

namespace {

/// Whether the object `handle` is mapped from the file with `info`'s device and inode:
/// the mapping that holds its dynamic section, as /proc/self/maps lists it.
bool maps_file(void* handle, const struct stat& info) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return false;
  const uintptr_t address = reinterpret_cast<uintptr_t>(map->l_ld);
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return false;
  bool found = false;
  char line[1024];
  while (!found && std::fgets(line, sizeof(line), maps) != nullptr) {
    uintptr_t start = 0, end = 0;
    unsigned major_id = 0, minor_id = 0;
    unsigned long long inode = 0;
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %*s %x:%x %llu", &start, &end, &major_id, &minor_id, &inode) !=
        5) {
      continue;
    }
    if (address < start || address >= end) continue;
    found = true;
    if (major_id != major(info.st_dev) || minor_id != minor(info.st_dev) || inode != info.st_ino) {
      std::fclose(maps);
      return false;
    }
  }
  std::fclose(maps);
  return found;
}

}  // namespace

/// dlopen()s /proc/self/fd/<fd> under a name of its own: a link in a new private
/// directory (0700, in /tmp), named by this process's id and a count, removed after.
Result<void*> load_descriptor(const std::string& path, int fd) {
  static std::atomic<uint64_t> count{0};
  char directory[] = "/tmp/plugrt-load-XXXXXX";
  if (mkdtemp(directory) == nullptr) {
    return Status(Error::kPluginInvalid,
                  path + ": cannot make a private directory to load it from: " + std::strerror(errno));
  }
  const std::string link =
      std::string(directory) + "/" + std::to_string(getpid()) + "-" + std::to_string(count.fetch_add(1)) + ".so";
  if (symlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), link.c_str()) != 0) {
    const int error = errno;
    rmdir(directory);
    return Status(Error::kPluginInvalid, path + ": cannot link to its descriptor to load it: " + std::strerror(error));
  }
  Result<void*> handle = load(path, link);
  unlink(link.c_str());
  rmdir(directory);
  return handle;
}

Result<std::shared_ptr<PluginLibrary>> PluginLibrary::open(const std::string& path, int fd) {
  struct stat info;
  if (fstat(fd, &info) != 0) return Status(Error::kPluginInvalid, path + ": cannot stat its descriptor");
  PLUGRT_ASSIGN_OR_RETURN(void* handle, load_descriptor(path, fd));
  std::shared_ptr<PluginLibrary> library(new PluginLibrary(path, handle));
  if (!maps_file(handle, info)) {
    return Status(Error::kPluginInvalid, path + ": the dynamic loader mapped another file than the one checked");
  }
  return library;
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
