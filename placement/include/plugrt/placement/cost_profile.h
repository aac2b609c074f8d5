// SPDX-License-Identifier: Apache-2.0
// CostProfile: node costs measured on one machine (`plugrt compile --tune`), kept in a
// file per CPU model and read by later compiles instead of the estimate.
//
// File: "<cache directory>/costs-<16 hex digits: hash of the CPU model>.tsv", text:
//   plugrt-cost-profile 1
//   cpu<TAB><CPU model>
//   <backend build><TAB><op signature><TAB><microseconds>     (one line per figure)
// where the backend build is "<backend>@<plugin name>/<plugin version>" and the op
// signature is op_signature() (cost_model.h). A file that does not read back exactly so
// is ignored as a whole, with a warning: a figure is never trusted from a damaged file.
#ifndef PLUGRT_PLACEMENT_COST_PROFILE_H_
#define PLUGRT_PLACEMENT_COST_PROFILE_H_

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "plugrt/backend.h"
#include "plugrt/status.h"

namespace plugrt::placement {

class CostProfile {
 public:
  CostProfile() = default;
  explicit CostProfile(std::string cpu) : cpu_(std::move(cpu)) {}

  /// $PLUGRT_CACHE_DIR, else $XDG_CACHE_HOME/plugrt, else $HOME/.cache/plugrt; empty
  /// when none of them is set.
  static std::string default_directory();
  /// This machine's CPU model (the first "model name" of /proc/cpuinfo), or "unknown".
  static std::string this_cpu();
  /// The profile file of `cpu` in `directory`.
  static std::string file_for(const std::string& directory, const std::string& cpu);

  /// Reads the profile at `path` for `cpu`. A missing file gives an empty profile. A
  /// damaged one, or one written on another CPU, also gives an empty profile, and
  /// `warning` says which file and why (it is cleared otherwise).
  static CostProfile load(const std::string& path, const std::string& cpu, std::string* warning);
  /// Writes the profile (to a temporary file, then renamed over `path`), creating the
  /// directory. Errors: kAccessFailed naming the path.
  Status save(const std::string& path) const;

  std::optional<double> find(const std::string& backend_build, const std::string& signature) const;
  /// Records a figure; microseconds must be finite and >= 0 (others are ignored).
  void set(const std::string& backend_build, const std::string& signature, double microseconds);
  /// Whether it has any figure for this backend build.
  bool has_build(const std::string& backend_build) const;
  size_t size() const { return costs_.size(); }
  /// A digest of every figure, for cache keys that depend on what was measured.
  std::string digest() const;
  const std::string& cpu() const { return cpu_; }

 private:
  std::string cpu_;
  std::map<std::pair<std::string, std::string>, double> costs_;
};

/// "<backend>@<plugin name>/<plugin version>", then for a plugin file "#" and 16 hex digits
/// of its identity (device, inode, size, times: a rebuild or reinstall changes it): a
/// profile's figures hold for one build.
std::string backend_build(const RegisteredBackend& backend);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_COST_PROFILE_H_
