// SPDX-License-Identifier: Apache-2.0
#include "private_files.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace plugrt::placement {

namespace {

Status failure(const std::string& path, const std::string& what) {
  return Status(Error::kAccessFailed, path + ": " + what + ": " + std::strerror(errno));
}

std::string random_suffix() {
  uint64_t value = 0;
  if (getrandom(&value, sizeof(value), 0) != sizeof(value)) value ^= static_cast<uint64_t>(getpid()) << 32;
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

bool write_all(int fd, Span<const uint8_t> bytes) {
  const uint8_t* data = bytes.data();
  size_t size = bytes.size();
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

/// A new file of mode 0600 beside `path` holding `parts`; its name, or an error.
Result<std::string> write_temporary(const std::string& path, const std::vector<Span<const uint8_t>>& parts) {
  const size_t slash = path.rfind('/');
  const std::string temporary =
      (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + ".tmp-" + random_suffix();
  FileDescriptor file(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (file.get() < 0) return failure(temporary, "cannot create");
  for (Span<const uint8_t> part : parts) {
    if (!write_all(file.get(), part)) {
      const Status status = failure(temporary, "cannot write");
      ::unlink(temporary.c_str());
      return status;
    }
  }
  if (::close(file.release()) != 0) {
    const Status status = failure(temporary, "cannot write");
    ::unlink(temporary.c_str());
    return status;
  }
  return temporary;
}

}  // namespace

Status prepare_private_directory(const std::string& directory) {
  // A missing directory is made only inside a trusted one: nothing is left in another
  // user's directory, and the reason for a refusal is whose it is, not a failed mkdir.
  std::string parent;
  for (size_t slash = directory.find('/', 1);; slash = directory.find('/', slash + 1)) {
    const std::string prefix = directory.substr(0, slash);
    struct stat existing;
    if (!prefix.empty() && ::lstat(prefix.c_str(), &existing) != 0) {
      if (errno != ENOENT) return failure(prefix, "cannot stat");
      if (!parent.empty()) {
        Result<FileDescriptor> above = open_trusted_path(parent, PathKind::kDirectory);
        if (!above.is_ok()) return Status(Error::kAccessFailed, above.status().message());
      }
      if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return failure(prefix, "cannot create the directory");
    }
    if (!prefix.empty()) parent = prefix;
    if (slash == std::string::npos) break;
  }
  Result<FileDescriptor> opened = open_trusted_path(directory, PathKind::kDirectory);
  if (!opened.is_ok()) return Status(Error::kAccessFailed, opened.status().message());
  struct stat info;
  if (fstat(opened->get(), &info) != 0) return failure(directory, "cannot stat");
  if (info.st_uid != geteuid()) {
    return Status(Error::kAccessFailed, directory + ": owned by uid " + std::to_string(info.st_uid) +
                                            ", not by this user (" + std::to_string(geteuid()) + ")");
  }
  // The path is trusted all the way down now, so naming it again reaches the same directory.
  if ((info.st_mode & 077) != 0 && ::chmod(directory.c_str(), 0700) != 0) {
    return failure(directory, "cannot make it private (mode 0700)");
  }
  return Status::ok();
}

Status write_private_file(const std::string& path, const std::vector<Span<const uint8_t>>& parts) {
  PLUGRT_ASSIGN_OR_RETURN(std::string temporary, write_temporary(path, parts));
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const Status status = failure(path, "cannot replace");
    ::unlink(temporary.c_str());
    return status;
  }
  return Status::ok();
}

Result<FileDescriptor> open_private_file(const std::string& path) {
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (file.get() < 0) return failure(path, "cannot open");
  struct stat info;
  if (fstat(file.get(), &info) != 0) return failure(path, "cannot stat");
  if (!S_ISREG(info.st_mode) || info.st_uid != geteuid() || (info.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return Status(Error::kAccessFailed, path + ": not a private file of this user (owner uid " +
                                            std::to_string(info.st_uid) + ", mode " + mode + ")");
  }
  return file;
}

Result<std::array<uint8_t, 32>> cache_key(const std::string& directory) {
  const std::string path = directory + "/key";
  std::array<uint8_t, 32> key{};
  for (int attempt = 0; attempt < 2; ++attempt) {
    struct stat info;
    if (::lstat(path.c_str(), &info) == 0 || errno != ENOENT) {
      PLUGRT_ASSIGN_OR_RETURN(FileDescriptor file, open_private_file(path));
      if (::pread(file.get(), key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
        return Status(Error::kAccessFailed, path + ": not a cache key (32 bytes)");
      }
      return key;
    }
    // None yet: a new one, linked into place only if no other process made one meanwhile.
    if (getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
      return failure(path, "no random bytes for a new key");
    }
    PLUGRT_ASSIGN_OR_RETURN(std::string temporary,
                            write_temporary(path, {Span<const uint8_t>(key.data(), key.size())}));
    const bool linked = ::link(temporary.c_str(), path.c_str()) == 0;
    ::unlink(temporary.c_str());
    if (linked) return key;
  }
  return Status(Error::kAccessFailed, path + ": cannot make or read the cache key");
}

}  // namespace plugrt::placement
