// SPDX-License-Identifier: Apache-2.0
// Where plugin files are looked for, in order (DESIGN.md, "Finding and loading plugins"):
//   1. directories the application registers,
//   2. PLUGRT_PLUGIN_PATH (colon-separated; read with secure_getenv, so a set-uid or
//      set-gid program ignores it),
//   3. the install directory, <prefix>/lib/plugrt/plugins, where <prefix> is the one the
//      running executable is installed in (found from /proc/self/exe, like ld.so's $ORIGIN),
//   4. the "plugins" directory next to the running executable.
// In each directory, files named libplugrt_<name>.so are candidates, in name order.
#ifndef PLUGRT_PLUGINS_SEARCH_PATH_H_
#define PLUGRT_PLUGINS_SEARCH_PATH_H_

#include <string>
#include <vector>

#include "plugrt/isolation/isolated_plugin.h"

namespace plugrt::plugins {

struct SearchPathOptions {
  /// No directory at all: only the files given to PluginLoader::load (tests, tools that
  /// name their plugins).
  static SearchPathOptions explicit_files_only() {
    SearchPathOptions options;
    options.use_environment = options.use_install_directory = options.use_executable_directory = false;
    return options;
  }

  std::vector<std::string> application_directories;
  bool use_environment = true;
  bool use_install_directory = true;
  /// <executable dir>/plugins, and <runtime library dir>/plugins when the runtime is
  /// libplugrt.so (a build tree keeps both in bin/).
  bool use_executable_directory = true;
  /// Load plugin files that this user does not own, or that others could write (see
  /// plugin_trust.h). Off by default: such files are refused.
  bool allow_untrusted_files = false;
  /// When set, a file of SHA-256 digests: only plugins whose digest it lists load.
  std::string allow_list;

  // Load options beyond the search path.
  /// Backends to run isolated: a plugin offering one of them runs in plugrt-backend-host
  /// processes (plugrt/isolation/isolated_plugin.h); "all" isolates every plugin.
  /// Isolated backends have no ahead-of-time entries: compile with them in process.
  std::vector<std::string> isolated_backends;
  /// Time limits and the backend host's path for isolated backends.
  isolation::IsolationOptions isolation;
};

/// One directory of the search path and which of the sources above gave it.
struct SearchDirectory {
  std::string path;
  std::string source;  // "application", "PLUGRT_PLUGIN_PATH", "install", "executable", "library"
};

/// The directories to search, in order, without duplicates. Directories that do not
/// exist are kept (a report says they were empty).
std::vector<SearchDirectory> plugin_search_path(const SearchPathOptions& options);

/// The plugin candidates in `directory` (libplugrt_*.so, regular files or links to
/// them), full paths sorted by file name. A missing or unreadable directory gives none.
std::vector<std::string> list_plugin_files(const std::string& directory);

/// <prefix>/lib/plugrt/plugins for the prefix the runtime is in: when this code is in
/// libplugrt.so (<prefix>/lib), its directory joined with the configured path from lib
/// to the plugin directory; else the running executable's directory (<prefix>/bin)
/// joined with the path from bin. A moved install still finds its plugins. "" when
/// /proc/self/exe cannot be read.
std::string install_plugin_directory();

/// Where plugrt-backend-host (isolated backends) is looked for: <exe>/../lib/plugrt/,
/// then <exe>/ (a build tree), then <prefix>/lib/plugrt/; the first that is there, else
/// the last.
std::string default_backend_host();

/// The directory of the running executable, or "" when it cannot be found.
std::string executable_directory();

}  // namespace plugrt::plugins

#endif  // PLUGRT_PLUGINS_SEARCH_PATH_H_
