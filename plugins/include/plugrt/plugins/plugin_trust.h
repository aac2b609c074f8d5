// SPDX-License-Identifier: Apache-2.0
// Plugin trust: loading a plugin runs its code with the host's rights, so a file that
// someone else could have written, or that the application has not pinned, is refused.
//
//  - Ownership and permissions (as the dynamic loader judges files for secure
//    programs, and sudo its configuration): the file and every directory from the root
//    down to it must be owned by this user or root, and not writable by others
//    (other-writable, or group-writable by a group this process is not in; a directory
//    with the sticky bit may be other-writable). The application may allow such files
//    explicitly.
//  - An optional allow-list pins plugins by SHA-256: a file of lines
//    "<64 hex digits> <anything>" (the output of sha256sum works). Plugins whose digest
//    is not listed are refused.
//
// What is checked is what is loaded: open_plugin_file() walks the path one directory at
// a time, checking each on the descriptor it opened (symbolic links are followed by the
// walk, inside directories already checked), the digest is taken from the file's
// descriptor, and that descriptor is what dlopen() maps (PluginLibrary::open). A user
// who can rename a directory above the file cannot swap another file in between.
#ifndef PLUGRT_PLUGINS_PLUGIN_TRUST_H_
#define PLUGRT_PLUGINS_PLUGIN_TRUST_H_

#include <set>
#include <string>

#include "plugrt/status.h"
#include "plugrt/trusted_path.h"

namespace plugrt::plugins {

/// Opens the plugin file `path` for reading. With `check_ownership`, the file and every
/// directory on the way to it, from the root, are checked on their open descriptors, and
/// symbolic links are resolved by the walk itself (at most 40). Errors: kPluginInvalid
/// naming the file or directory, its owner and mode; kAccessFailed (cannot open).
Result<FileDescriptor> open_plugin_file(const std::string& path, bool check_ownership);

/// The SHA-256 of an open file's contents (read from offset 0) as 64 lower-case hex
/// digits; `path` names it in errors. Errors: kAccessFailed.
Result<std::string> sha256_fd(int fd, const std::string& path);

/// The SHA-256 of a file's contents as 64 lower-case hex digits. Errors: kAccessFailed.
Result<std::string> sha256_file(const std::string& path);

/// The digests a plugin file may have.
class AllowList {
 public:
  /// Reads `path`. Errors: kAccessFailed (cannot read), kInvalidArgument (a line that is
  /// neither blank, a comment (#), nor a digest), each naming the file and line.
  static Result<AllowList> read(const std::string& path);
  bool contains(const std::string& digest) const { return digests_.count(digest) != 0; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::set<std::string> digests_;
};

}  // namespace plugrt::plugins

#endif  // PLUGRT_PLUGINS_PLUGIN_TRUST_H_
