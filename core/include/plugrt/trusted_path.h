// SPDX-License-Identifier: Apache-2.0
// Files and directories only this user (or root) can change: what plugin loading and the
// blob cache trust. A path is trusted when the target and every directory on the way to
// it, from the root, are owned by this user or root and not writable by others (neither
// other-writable nor group-writable by a group this process is not in, unless a directory
// with the sticky bit, such as /tmp), as the dynamic loader judges files for secure programs and
// sudo its configuration. The walk opens one component at a time and checks each on the
// descriptor it opened, following symbolic links itself (at most 40), so what it returns
// is what it checked, whatever the path names by then.
#ifndef PLUGRT_TRUSTED_PATH_H_
#define PLUGRT_TRUSTED_PATH_H_

#include <sys/stat.h>

#include <string>

#include "plugrt/status.h"

namespace plugrt {

/// An open file descriptor, closed when it goes away.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();
  int get() const { return fd_; }
  int release();

 private:
  int fd_;
};

/// Why a file or directory with these attributes could be changed by someone other than
/// this user or root ("is owned by uid 1001, neither this user (1000) nor root"); empty
/// when it cannot.
std::string untrusted_because(const struct stat& info, bool is_directory);

enum class PathKind { kFile, kDirectory };

/// Opens `path` (a regular file for reading, or a directory as O_PATH) after checking it
/// and every directory above it. Errors: kPluginInvalid naming `path` and the file or
/// directory that is not trusted, its owner and mode ("not trusted: its directory /a is
/// writable by every user (mode 0777)"); kAccessFailed (it cannot be opened).
Result<FileDescriptor> open_trusted_path(const std::string& path, PathKind kind);

/// Whether this process runs set-uid or set-gid (the kernel's AT_SECURE): then every
/// PLUGRT_* variable that names a path is ignored, as the dynamic loader ignores its own.
bool secure_execution();

}  // namespace plugrt

#endif  // PLUGRT_TRUSTED_PATH_H_
