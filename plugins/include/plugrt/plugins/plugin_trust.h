// SPDX-License-Identifier: Apache-2.0
// Plugin trust: loading a plugin runs its code with the host's rights, so a file that
// someone else could have written, or that the application has not pinned, is refused.
//
//  - Ownership and permissions (as the dynamic loader judges files for secure
//    programs): the file and its directory must be owned by this user or root, and not
//    writable by others (other-writable, or group-writable by a group this process is
//    not in; a directory with the sticky bit may be other-writable). The application
//    may allow such files explicitly.
//  - An optional allow-list pins plugins by SHA-256: a file of lines
//    "<64 hex digits> <anything>" (the output of sha256sum works). Plugins whose digest
//    is not listed are refused.
#ifndef PLUGRT_PLUGINS_PLUGIN_TRUST_H_
#define PLUGRT_PLUGINS_PLUGIN_TRUST_H_

#include <set>
#include <string>

#include "plugrt/status.h"

namespace plugrt::plugins {

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

/// Refuses `path` when it or its directory is writable or owned by someone else.
/// Errors: kPluginInvalid (the reason names the file or directory, its owner and mode),
/// kAccessFailed (cannot stat it).
Status check_file_ownership(const std::string& path);

}  // namespace plugrt::plugins

#endif  // PLUGRT_PLUGINS_PLUGIN_TRUST_H_
