// SPDX-License-Identifier: Apache-2.0
#include "plugrt/trusted_path.h"

#include <fcntl.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace plugrt {

namespace {

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

bool in_group(gid_t gid) {
  if (gid == getegid()) return true;
  const int count = getgroups(0, nullptr);
  if (count <= 0) return false;
  std::vector<gid_t> groups(static_cast<size_t>(count));
  const int got = getgroups(count, groups.data());
  for (int i = 0; i < got; ++i) {
    if (groups[static_cast<size_t>(i)] == gid) return true;
  }
  return false;
}

}  // namespace

std::string untrusted_because(const struct stat& info, bool is_directory) {
  const uid_t me = geteuid();
  if (info.st_uid != me && info.st_uid != 0) {
    return "is owned by uid " + std::to_string(info.st_uid) + ", neither this user (" + std::to_string(me) +
           ") nor root";
  }
  // In a directory with the sticky bit (/tmp is root's, mode 1777) a writer can rename or
  // remove only entries of their own, whether they write it as "others" or as its group.
  const bool sticky = is_directory && (info.st_mode & S_ISVTX) != 0;
  if ((info.st_mode & S_IWOTH) != 0 && !sticky)
    return "is writable by every user (mode " + octal_mode(info.st_mode) + ")";
  if ((info.st_mode & S_IWGRP) != 0 && !sticky && !in_group(info.st_gid)) {
    return "is writable by group " + std::to_string(info.st_gid) + ", which this process is not in (mode " +
           octal_mode(info.st_mode) + ")";
  }
  return {};
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

int FileDescriptor::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

namespace {

/// The components of `path` (made absolute against the working directory), in order.
std::vector<std::string> components(const std::string& path) {
  std::string absolute = path;
  if (absolute.empty() || absolute[0] != '/') {
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd)) != nullptr) absolute = std::string(cwd) + "/" + path;
  }
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= absolute.size()) {
    const size_t slash = std::min(absolute.find('/', start), absolute.size());
    if (slash > start) parts.push_back(absolute.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

/// The walk's state: the directory reached (checked), its path for messages, and the
/// components still to resolve (front first).
struct Walk {
  FileDescriptor directory;
  std::string where;
  std::vector<std::string> pending;  // reversed: back() is next
};

Status restart_at_root(Walk* walk, const std::string& path) {
  walk->directory = FileDescriptor(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  walk->where = "/";
  struct stat info;
  if (walk->directory.get() < 0 || fstat(walk->directory.get(), &info) != 0) {
    return Status(Error::kAccessFailed, path + ": cannot open / : " + std::strerror(errno));
  }
  if (std::string why = untrusted_because(info, true); !why.empty()) {
    return Status(Error::kPluginInvalid, path + ": not trusted: the directory / " + why);
  }
  return Status::ok();
}

std::string joined(const std::string& directory, const std::string& name) {
  return directory == "/" ? "/" + name : directory + "/" + name;
}

}  // namespace

Result<FileDescriptor> open_trusted_path(const std::string& path, PathKind kind) {
  Walk walk;
  std::vector<std::string> parts = components(path);
  walk.pending.assign(parts.rbegin(), parts.rend());
  PLUGRT_RETURN_IF_ERROR(restart_at_root(&walk, path));
  for (int links = 0; !walk.pending.empty();) {
    const std::string name = walk.pending.back();
    walk.pending.pop_back();
    if (name == ".") continue;
    const std::string here = joined(walk.where, name);
    struct stat info;
    if (fstatat(walk.directory.get(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
      return Status(Error::kAccessFailed, path + ": cannot stat " + here + ": " + std::strerror(errno));
    }
    if (S_ISLNK(info.st_mode)) {  // its directory is checked, so whoever wrote the link is trusted
      if (++links > 40) return Status(Error::kAccessFailed, path + ": too many symbolic links");
      char target[4096];
      const ssize_t size = readlinkat(walk.directory.get(), name.c_str(), target, sizeof(target) - 1);
      if (size < 0) return Status(Error::kAccessFailed, path + ": cannot read the link " + here);
      const std::string text(target, static_cast<size_t>(size));
      std::vector<std::string> more = components(text[0] == '/' ? text : "/" + text);
      walk.pending.insert(walk.pending.end(), more.rbegin(), more.rend());
      if (text[0] == '/') PLUGRT_RETURN_IF_ERROR(restart_at_root(&walk, path));
      continue;
    }
    const bool last = walk.pending.empty();
    FileDescriptor next(
        openat(walk.directory.get(), name.c_str(),
               (last && kind == PathKind::kFile ? O_RDONLY : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0 || fstat(next.get(), &info) != 0) {
      return Status(Error::kAccessFailed, path + ": cannot open " + here + ": " + std::strerror(errno));
    }
    if (std::string why = untrusted_because(info, !last || kind == PathKind::kDirectory); !why.empty()) {
      return Status(Error::kPluginInvalid, path + ": not trusted: " +
                                               (!last                     ? "its directory " + here + " "
                                                : kind == PathKind::kFile ? "the file "
                                                                          : "the directory ") +
                                               why);
    }
    if (last) {
      if (kind == PathKind::kFile && !S_ISREG(info.st_mode)) {
        return Status(Error::kPluginInvalid, path + ": not a regular file");
      }
      return next;
    }
    walk.directory = std::move(next);
    walk.where = here;
  }
  return Status(Error::kAccessFailed, path + ": names no file");
}

bool secure_execution() { return getauxval(AT_SECURE) != 0; }

}  // namespace plugrt
