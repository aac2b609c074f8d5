// SPDX-License-Identifier: Apache-2.0
#include "plugrt/plugins/plugin_trust.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

namespace plugrt::plugins {

namespace {

bool is_hex_digest(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

Result<std::string> sha256_fd(int fd, const std::string& path) {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    return Status(Error::kInternal, "cannot start a SHA-256 digest");
  }
  std::vector<char> buffer(1 << 16);
  for (off_t offset = 0;;) {
    const ssize_t got = pread(fd, buffer.data(), buffer.size(), offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Status(Error::kAccessFailed, path + ": read failed while hashing it: " + std::strerror(errno));
    if (got == 0) break;
    EVP_DigestUpdate(context.get(), buffer.data(), static_cast<size_t>(got));
    offset += got;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context.get(), digest, &length);
  std::string hex;
  char byte[3];
  for (unsigned int i = 0; i < length; ++i) {
    std::snprintf(byte, sizeof(byte), "%02x", digest[i]);
    hex += byte;
  }
  return hex;
}

Result<std::string> sha256_file(const std::string& path) {
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) return Status(Error::kAccessFailed, path + ": cannot open to hash it: " + std::strerror(errno));
  return sha256_fd(file.get(), path);
}

Result<AllowList> AllowList::read(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(Error::kAccessFailed, "plugin allow-list " + path + ": cannot open: " + std::strerror(errno));
  AllowList list;
  list.path_ = path;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    std::string digest = line.substr(start, line.find_first_of(" \t", start) - start);
    for (char& c : digest) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!is_hex_digest(digest)) {
      return Status(Error::kInvalidArgument,
                    "plugin allow-list " + path + ":" + std::to_string(number) + ": expected a SHA-256 in hex");
    }
    list.digests_.insert(digest);
  }
  return list;
}

Result<FileDescriptor> open_plugin_file(const std::string& path, bool check_ownership) {
  if (check_ownership) return open_trusted_path(path, PathKind::kFile);
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) return Status(Error::kAccessFailed, path + ": cannot open: " + std::strerror(errno));
  return file;
}

}  // namespace plugrt::plugins
