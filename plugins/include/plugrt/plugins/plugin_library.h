// SPDX-License-Identifier: Apache-2.0
// A plugin file opened with dlopen(RTLD_NOW | RTLD_LOCAL); closed when the last owner
// lets go, so a live delegate handle keeps its plugin's code mapped.
#ifndef PLUGRT_PLUGINS_PLUGIN_LIBRARY_H_
#define PLUGRT_PLUGINS_PLUGIN_LIBRARY_H_

#include <memory>
#include <string>

#include "plugrt/status.h"

namespace plugrt::plugins {

class PluginLibrary {
 public:
  /// dlopens `path`. RTLD_NOW surfaces unresolved symbols here rather than mid-run;
  /// RTLD_LOCAL keeps the plugin's symbols out of the global scope.
  /// Errors: kPluginInvalid with the dynamic loader's message.
  static Result<std::shared_ptr<PluginLibrary>> open(const std::string& path);
  /// dlopens the file open as `fd`, through a link to /proc/self/fd/<fd> of a name never
  /// used before (the dynamic loader takes a name it has seen for the object it loaded
  /// then), made in a private directory and removed at once; then checks that the object
  /// mapped is that file (its device and inode). So what runs is what was checked on
  /// `fd`, whatever `path` names by now. `path` names it in messages. Errors:
  /// kPluginInvalid.
  static Result<std::shared_ptr<PluginLibrary>> open(const std::string& path, int fd);

  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;
  ~PluginLibrary();

  /// The address of an exported symbol, or nullptr.
  void* symbol(const char* name) const;
  const std::string& path() const { return path_; }

 private:
  PluginLibrary(std::string path, void* handle) : path_(std::move(path)), handle_(handle) {}
  std::string path_;
  void* handle_;
};

}  // namespace plugrt::plugins

#endif  // PLUGRT_PLUGINS_PLUGIN_LIBRARY_H_
