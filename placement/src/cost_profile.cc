// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/cost_profile.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "plugrt/content_hash.h"
#include "plugrt/mapped_file.h"
#include "plugrt/placement/blob_cache.h"
#include "private_files.h"

namespace plugrt::placement {

namespace {

constexpr char kHeader[] = "plugrt-cost-profile 1";
constexpr double kMaxMicroseconds = 1e9;  // a figure above 1000 s is damage, not a measurement

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab = line.find('\t'); tab != std::string::npos; tab = line.find('\t', start)) {
    fields.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
  fields.push_back(line.substr(start));
  return fields;
}

}  // namespace

std::string CostProfile::default_directory() { return default_cache_directory(); }

std::string CostProfile::this_cpu() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "unknown";
}

std::string CostProfile::file_for(const std::string& directory, const std::string& cpu) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a: stable across runs and builds
  for (unsigned char c : cpu) hash = (hash ^ c) * 1099511628211ull;
  char hex[17];
  for (int d = 0; d < 16; ++d) hex[d] = "0123456789abcdef"[(hash >> (60 - 4 * d)) & 0xf];
  hex[16] = '\0';
  return directory + "/costs-" + hex + ".tsv";
}

CostProfile CostProfile::load(const std::string& path, const std::string& cpu, std::string* warning) {
  warning->clear();
  CostProfile profile(cpu);
  std::ifstream in(path);
  if (!in) return profile;  // none yet
  auto reject = [&](size_t line_number, const std::string& why) {
    *warning = path + ":" + std::to_string(line_number) + ": " + why + "; the profile is ignored";
    return CostProfile(cpu);
  };
  std::string line;
  if (!std::getline(in, line) || line != kHeader) return reject(1, "not a plugrt cost profile (version 1)");
  if (!std::getline(in, line) || line != "cpu\t" + cpu) {
    return reject(2, "written for another CPU than '" + cpu + "'");
  }
  for (size_t number = 3; std::getline(in, line); ++number) {
    const std::vector<std::string> fields = split_tabs(line);
    if (fields.size() != 3 || fields[0].empty() || fields[1].empty()) {
      return reject(number, "expected <backend build> TAB <op signature> TAB <microseconds>");
    }
    char* end = nullptr;
    const double us = std::strtod(fields[2].c_str(), &end);
    if (end == fields[2].c_str() || *end != '\0' || !std::isfinite(us) || us < 0 || us > kMaxMicroseconds) {
      return reject(number, "'" + fields[2] + "' is not a time in microseconds");
    }
    if (!profile.costs_.emplace(std::make_pair(fields[0], fields[1]), us).second) {
      return reject(number, "a second figure for the same backend and op signature");
    }
  }
  if (in.bad()) return reject(0, "cannot be read");
  return profile;
}

Status CostProfile::save(const std::string& path) const {
  // The profile steers placement: it lives in a directory only this user can change
  // (private_files.h), written as a new file renamed into place.
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) PLUGRT_RETURN_IF_ERROR(prepare_private_directory(path.substr(0, slash)));
  std::ostringstream out;
  out << kHeader << "\ncpu\t" << cpu_ << "\n";
  out.precision(6);
  for (const auto& [key, us] : costs_) out << key.first << "\t" << key.second << "\t" << std::fixed << us << "\n";
  const std::string text = out.str();
  return write_private_file(path, {Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size())})
      .with_context("the cost profile");
}

std::optional<double> CostProfile::find(const std::string& build, const std::string& signature) const {
  auto it = costs_.find({build, signature});
  if (it == costs_.end()) return std::nullopt;
  return it->second;
}

void CostProfile::set(const std::string& build, const std::string& signature, double microseconds) {
  // Tabs and newlines would break the file's lines; signatures and names never hold them.
  if (!std::isfinite(microseconds) || microseconds < 0 || microseconds > kMaxMicroseconds) return;
  if (build.find_first_of("\t\n") != std::string::npos || signature.find_first_of("\t\n") != std::string::npos) {
    return;
  }
  costs_[{build, signature}] = microseconds;
}

bool CostProfile::has_build(const std::string& build) const {
  const auto first = costs_.lower_bound({build, std::string()});
  return first != costs_.end() && first->first.first == build;
}

std::string CostProfile::digest() const {
  ContentHasher hasher;
  hasher.add(cpu_).add(static_cast<uint64_t>(costs_.size()));
  for (const auto& [key, us] : costs_) {
    uint64_t bits = 0;
    std::memcpy(&bits, &us, sizeof(bits));
    hasher.add(key.first).add(key.second).add(bits);
  }
  return hasher.finish().hex();
}

std::string backend_build(const RegisteredBackend& backend) {
  std::string build = backend.name() + "@" + backend.plugin().name + "/" + backend.plugin().version;
  if (Result<std::string> identity = file_identity(backend.plugin().origin); identity.is_ok()) {
    ContentHasher hasher;
    build += "#" + hasher.add(*identity).finish().hex().substr(0, 16);
  }
  return build;
}

}  // namespace plugrt::placement
