// SPDX-License-Identifier: Apache-2.0
#include "plugrt/plugins/plugin_trust.h"

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

/// Why `what` (a file or directory) could be changed by someone else, or "".
std::string untrusted_because(const struct stat& info, bool is_directory) {
  const uid_t me = geteuid();
  if (info.st_uid != me && info.st_uid != 0) {
    return "is owned by uid " + std::to_string(info.st_uid) + ", neither this user (" + std::to_string(me) +
           ") nor root";
  }
  const bool sticky = is_directory && (info.st_mode & S_ISVTX) != 0;
  if ((info.st_mode & S_IWOTH) != 0 && !sticky)
    return "is writable by every user (mode " + octal_mode(info.st_mode) + ")";
  if ((info.st_mode & S_IWGRP) != 0 && !in_group(info.st_gid)) {
    return "is writable by group " + std::to_string(info.st_gid) + ", which this process is not in (mode " +
           octal_mode(info.st_mode) + ")";
  }
  return {};
}

bool is_hex_digest(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

Result<std::string> sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Error::kAccessFailed, path + ": cannot open to hash it: " + std::strerror(errno));
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    return Status(Error::kInternal, "cannot start a SHA-256 digest");
  }
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(context.get(), buffer.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Status(Error::kAccessFailed, path + ": read failed while hashing it");
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

Status check_file_ownership(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    return Status(Error::kAccessFailed, path + ": cannot stat: " + std::strerror(errno));
  }
  if (std::string why = untrusted_because(info, false); !why.empty()) {
    return Status(Error::kPluginInvalid, path + ": not trusted: the file " + why);
  }
  const size_t slash = path.find_last_of('/');
  const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (stat(directory.c_str(), &info) != 0) {
    return Status(Error::kAccessFailed, directory + ": cannot stat: " + std::strerror(errno));
  }
  if (std::string why = untrusted_because(info, true); !why.empty()) {
    return Status(Error::kPluginInvalid, path + ": not trusted: its directory " + directory + " " + why);
  }
  return Status::ok();
}

}  // namespace plugrt::plugins
