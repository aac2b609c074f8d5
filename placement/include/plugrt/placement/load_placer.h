// SPDX-License-Identifier: Apache-2.0
// LoadPlacer: placement `auto` at load time (DESIGN.md, "Drop-in acceleration").
//
// It reads the method's whole graph back from the program (method_graph.h), places it
// with the same placer `plugrt compile` uses over the backends the registry has now
// (those with ahead-of-time entries, allowed by the method options and available),
// and compiles it again (compile.h), without portable fallbacks: when the placed method
// does not load, Method::load runs the program as compiled, fallbacks and all. Each
// partition's blob is taken, in order, from:
//   - the program, when it holds a blob of the same backend for exactly that partition
//     graph (a program compiled for this device is placed as it was, lowering nothing);
//   - the blob cache (blob_cache.h), keyed by the partition graph, the backend, its
//     plugin's name, version and build (the plugin file's identity: device, inode, size,
//     modification and change times, so a rebuilt or reinstalled plugin has another),
//     the plugin's ABI version and the host's;
//   - else the backend's preprocess, whose blob then goes into the cache.
// When every blob comes from the program, the program itself runs as compiled (with its
// fallbacks), and the cache keeps only that verdict.
// The whole placed method is cached too, keyed by the program file's identity (or, for a
// program in memory, its graph's contents), the method, and where every backend that could
// take part would come from (Registry::backend_source: its plugin file's identity, found
// without loading it), so that a second load places and lowers nothing and loads only the
// plugins the placed method uses: it maps the entry, checks it and loads it. A backend left
// out as unavailable then is asked again; if it has become available, the method is placed
// again.
// The backends considered are the registry's and its providers' (a PluginLoader's plugins
// found on the search path, which load as the placer asks for them). Measured costs in
// the profile directory's profile (cost_profile.h) are used, and what placement lacks to
// choose between backends for a node is measured first, within a time budget, and kept
// there; the load report lists what was measured. The placed method's key includes the
// profile's digest, so new figures place it again.
#ifndef PLUGRT_PLACEMENT_LOAD_PLACER_H_
#define PLUGRT_PLACEMENT_LOAD_PLACER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "plugrt/method.h"
#include "plugrt/placement/blob_cache.h"
#include "plugrt/placement/method_graph.h"

namespace plugrt::placement {

struct LoadPlacerOptions {
  /// The cache's directory ("<dir>/blobs" holds the blobs); empty: no blob cache.
  std::string cache_directory = default_cache_directory();
  uint64_t cache_max_bytes = BlobCache::default_max_bytes();
  /// Where the machine's cost profile is (cost_profile.h), read and written whether or not
  /// the blob cache is used. Unset: cache_directory; empty: no profile, the estimate alone.
  std::optional<std::string> profile_directory;
  /// Placement measures what the profile lacks to choose between backends for at most
  /// this many seconds (CompileOptions::measure_seconds); 0: never.
  double measure_seconds = 5;
};

/// Also keeps MethodOptions::verify's verdicts in the blob cache, one small entry each,
/// keyed by the blob, its fallback, the backend's build and this machine's CPU.
class LoadPlacer : public MethodPlacer, public VerificationStore {
 public:
  explicit LoadPlacer(LoadPlacerOptions options = {});
  ~LoadPlacer() override;

  Result<PlacedProgram> place(const Program& program, std::string_view method, Registry& registry,
                              const MethodOptions& options) override;
  /// Removes the cache entry the placed program came from.
  void rejected(const PlacedProgram& placed, const Status& why) override;

  std::optional<VerificationVerdict> find_verdict(const RegisteredBackend& backend, Span<const uint8_t> blob,
                                                  Span<const uint8_t> fallback) override;
  void keep_verdict(const RegisteredBackend& backend, Span<const uint8_t> blob, Span<const uint8_t> fallback,
                    const VerificationVerdict& verdict) override;

  /// Null when there is no cache directory.
  BlobCache* cache() { return cache_.get(); }

 private:
  /// What a cache key says of a backend: its name, its plugin's name, version, build and ABI.
  void add_backend_identity(ContentHasher& key, const RegisteredBackend& backend, std::string_view name);
  /// What the placed method's key says of a backend that could take part, found without
  /// loading it: its name, where it would come from (the plugin file's identity, or a
  /// built-in's version) and whether it would run isolated.
  static void add_source_identity(ContentHasher& key, Registry& registry, const std::string& name);
  /// The placed method cached under `key`, unless it is missing, damaged, or a backend
  /// left out then as unavailable is `available_now`.
  static ContentHash placed_method_key(std::string_view method_name, const std::string& program_identity,
                                       const std::optional<MethodGraph>& graph, Registry& registry,
                                       const MethodOptions& options, const std::string& profile_digest);
  ContentHash verdict_key(const RegisteredBackend& backend, Span<const uint8_t> blob, Span<const uint8_t> fallback);
  std::optional<PlacedProgram> find_placed(const ContentHash& key, const Program& program,
                                           const std::function<bool(const std::string&)>& available_now);

  std::string cache_directory_;
  std::string profile_directory_;
  double measure_seconds_ = 0;
  std::unique_ptr<BlobCache> cache_;
};

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_LOAD_PLACER_H_
