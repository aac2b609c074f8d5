// SPDX-License-Identifier: Apache-2.0
#include "plugrt/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

namespace plugrt {
namespace {

std::string identity_of(const struct stat& info) {
  return std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino) + ":" + std::to_string(info.st_size) + ":" +
         std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec) + ":" +
         std::to_string(info.st_ctim.tv_sec) + "." + std::to_string(info.st_ctim.tv_nsec);
}

Status access_error(const std::string& path, std::string_view what) {
  std::string message = path;
  message += ": ";
  message += what;
  return Status(Error::kAccessFailed, std::move(message));
}

// Call right after the failing system call, before anything can change errno.
Status errno_error(const std::string& path, std::string_view action) {
  const int saved = errno;
  std::string what(action);
  what += ": ";
  what += std::strerror(saved);
  return access_error(path, what);
}

// Why a file that is not regular is refused, in the words of ls and file(1).
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISCHR(mode)) return "is a character device";
  if (S_ISBLK(mode)) return "is a block device";
  if (S_ISFIFO(mode)) return "is a FIFO";
  if (S_ISSOCK(mode)) return "is a socket";
  return "is not a regular file";
}

// Closes the descriptor on every return path; the mapping, if any, outlives it.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

MappedFile::MappedFile(std::string path, const uint8_t* data, size_t size, bool mapped, Buffer owned)
    : path_(std::move(path)), data_(data), size_(size), mapped_(mapped), owned_(std::move(owned)) {}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      identity_(std::move(other.identity_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, false)),
      owned_(std::move(other.owned_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    identity_ = std::move(other.identity_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, false);
    owned_ = std::move(other.owned_);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() {
  if (mapped_) ::munmap(const_cast<uint8_t*>(data_), size_);
  owned_.reset();
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
}

Result<std::string> file_identity(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) return errno_error(path, "cannot stat");
  return identity_of(info);
}

Result<MappedFile> MappedFile::open(const std::string& path) { return open_impl(path, true); }

Result<MappedFile> MappedFile::read(const std::string& path) { return open_impl(path, false); }

Result<MappedFile> MappedFile::open_impl(const std::string& path, bool allow_map) {
  // O_NONBLOCK so that opening a FIFO cannot block until a writer appears; such a file
  // is refused below, and the flag is cleared before a regular file is read.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return errno_error(path, "cannot open");

  struct stat info;
  if (::fstat(fd.get(), &info) != 0) return errno_error(path, "cannot stat");
  if (!S_ISREG(info.st_mode)) return access_error(path, file_kind(info.st_mode));
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return errno_error(path, "cannot set the file's flags");
  }

  const uint64_t file_size = static_cast<uint64_t>(info.st_size);
  if (info.st_size < 0 || file_size > std::numeric_limits<size_t>::max() / 2) {
    return Status(Error::kMemoryAllocationFailed,
                  path + ": file of " + std::to_string(info.st_size) + " bytes is too large for this address space");
  }

  const std::string identity = identity_of(info);
  if (allow_map && file_size > 0) {
    void* mapping = ::mmap(nullptr, static_cast<size_t>(file_size), PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (mapping != MAP_FAILED) {
      MappedFile file(path, static_cast<const uint8_t*>(mapping), static_cast<size_t>(file_size), /*mapped=*/true,
                      Buffer());
      file.identity_ = identity;
      return file;
    }
    // Some files cannot be mapped (certain file systems); reading them still works.
  }

  // Read until end of file rather than trusting st_size: the file may change size, and
  // some (in /proc, for example) report 0 yet have contents. One spare byte lets the
  // final read see the end of file without growing the buffer.
  size_t capacity = static_cast<size_t>(file_size) + 1;
  Buffer buffer(static_cast<uint8_t*>(std::malloc(capacity)));
  if (!buffer) {
    return Status(Error::kMemoryAllocationFailed,
                  path + ": cannot allocate " + std::to_string(capacity) + " bytes to read it");
  }
  size_t used = 0;
  for (;;) {
    if (used == capacity) {
      if (capacity > std::numeric_limits<size_t>::max() / 2) {
        return Status(Error::kMemoryAllocationFailed, path + ": file is too large to read");
      }
      const size_t grown = capacity * 2;
      auto* bigger = static_cast<uint8_t*>(std::realloc(buffer.get(), grown));
      if (bigger == nullptr) {
        return Status(Error::kMemoryAllocationFailed,
                      path + ": cannot allocate " + std::to_string(grown) + " bytes to read it");
      }
      (void)buffer.release();  // realloc took ownership of the old block
      buffer.reset(bigger);
      capacity = grown;
    }
    const ssize_t n = ::read(fd.get(), buffer.get() + used, capacity - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error(path, "read failed");
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  // Programs use their segments in place and promise 64-byte alignment, as a mapping
  // (page-aligned) gives; malloc and realloc promise only 16.
  if (reinterpret_cast<uintptr_t>(buffer.get()) % kBufferAlignment != 0) {
    const size_t aligned_size = (used / kBufferAlignment + 1) * kBufferAlignment;
    Buffer aligned(static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, aligned_size)));
    if (!aligned) {
      return Status(Error::kMemoryAllocationFailed,
                    path + ": cannot allocate " + std::to_string(aligned_size) + " bytes to read it");
    }
    std::memcpy(aligned.get(), buffer.get(), used);
    buffer = std::move(aligned);
  }
  const uint8_t* data = buffer.get();
  MappedFile file(path, data, used, /*mapped=*/false, std::move(buffer));
  file.identity_ = identity;
  return file;
}

}  // namespace plugrt
