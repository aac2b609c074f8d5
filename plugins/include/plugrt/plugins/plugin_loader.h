// SPDX-License-Identifier: Apache-2.0
// The plugin loader: finds plugin files, reads their metadata without running their
// code, and loads a plugin (dlopen, entry function, registration) only when one of its
// backends is first looked up in the registry. It keeps a verdict on every file it
// considered, and the init failures of the backends it loaded, for `plugrt doctor`.
#ifndef PLUGRT_PLUGINS_PLUGIN_LOADER_H_
#define PLUGRT_PLUGINS_PLUGIN_LOADER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "plugrt/plugins/plugin_metadata.h"
#include "plugrt/plugins/plugin_trust.h"
#include "plugrt/plugins/search_path.h"
#include "plugrt/registry.h"
#include "plugrt/status.h"

namespace plugrt::plugins {

class PluginLibrary;

/// What the loader concluded about one file.
struct PluginReport {
  enum class State {
    kAccepted,  ///< Its metadata passed every check; not loaded yet.
    kLoaded,    ///< Loaded and registered.
    kRefused,   ///< Refused; `refusal` says why.
  };
  std::string path;
  /// Which search-path source found it ("application", "PLUGRT_PLUGIN_PATH", "install",
  /// "executable"), or "explicit" for a file the application loaded by path.
  std::string found_in;
  State state = State::kAccepted;
  Status refusal;
  std::optional<PluginMetadata> metadata;
  /// Backend names it offers that an earlier file already provides, each with that file.
  std::vector<std::pair<std::string, std::string>> shadowed_by;
  /// Whether its code is mapped: loaded, or unloaded but pinned by live handles.
  bool code_mapped = false;
  /// While it is loaded: each of its backends whose init has failed (a delegate that
  /// could not be created, or fell back), with how often and the last failure.
  std::vector<std::pair<std::string, InitFailures>> init_failures;
  /// Its backends run in plugrt-backend-host processes (SearchPathOptions::isolated_backends).
  bool isolated = false;
  /// While it is loaded isolated: each of its backends whose process crashed, was killed
  /// or timed out, with how often and the last message.
  std::vector<std::pair<std::string, isolation::CrashRecord>> crashes;
};

std::string_view to_string(PluginReport::State state);

class PluginLoader final : public BackendProvider {
 public:
  /// Attaches itself to `registry` as a provider; `registry` must outlive it.
  explicit PluginLoader(Registry& registry, SearchPathOptions options = {});
  ~PluginLoader() override;
  PluginLoader(const PluginLoader&) = delete;
  PluginLoader& operator=(const PluginLoader&) = delete;

  /// Scans the search path and checks every candidate file's metadata (no plugin code
  /// runs). Files already loaded keep their state; the others are considered afresh.
  void discover();

  /// Loads the plugin at `path` now, found or not by discovery. Loading a file that is
  /// already loaded returns its id. Errors start with the path and say why it was
  /// refused; the verdict is kept in the report.
  Result<PluginId> load(const std::string& path);
  /// Loads every plugin discovery accepted, so that the registry lists all their backends
  /// (what placement at load time considers). Refusals are kept in the report.
  void load_accepted();

  /// Unregisters a loaded plugin. Delegate handles already made from it keep working
  /// and keep its code mapped until they are destroyed. Errors: kNotFound.
  Status unload(const std::string& path);

  /// One entry per file considered, in search order (explicit loads first).
  std::vector<PluginReport> report() const;
  const std::vector<SearchDirectory>& search_path() const { return search_path_; }

  // BackendProvider: lazy loading on the first lookup of a backend name.
  std::optional<int64_t> candidate_rank(std::string_view backend_name) override;
  Result<RegisteredBackend> provide(std::string_view backend_name, Registry& registry) override;
  std::vector<std::string> candidate_backends() override;
  std::optional<BackendSource> candidate_source(std::string_view backend_name) override;
  std::optional<Status> refusal(std::string_view backend_name) override;

 private:
  struct Candidate {
    std::string path;
    std::string found_in;
    int64_t rank = 0;
    Status refusal;  // not ok: refused
    std::optional<PluginMetadata> metadata;
    std::optional<PluginId> id;  // set while registered
    std::weak_ptr<PluginLibrary> library;
    std::weak_ptr<isolation::IsolatedPlugin> isolated;  // set when loaded isolated
  };
  bool is_isolated_locked(const Candidate& candidate) const;
  /// Registers the candidate's plugin: dlopen and its entry function, or proxies for
  /// its backends in a backend host process when it is isolated.
  Result<PluginId> register_locked(Candidate& candidate);

  void read_allow_list_locked();
  /// Checks the file and inserts its candidate (indexed by backend unless refused).
  Candidate& add_candidate_locked(std::string path, std::string found_in, int64_t rank);
  Candidate& insert_locked(std::unique_ptr<Candidate> candidate);
  void refuse_locked(Candidate& candidate, Status why);
  Status load_locked(Candidate& candidate);
  Candidate* find_locked(const std::string& path);

  Registry& registry_;
  SearchPathOptions options_;
  std::vector<SearchDirectory> search_path_;
  /// options_.allow_list as last read (by discover() or an explicit load), or why it
  /// could not be read; unset without an allow-list.
  std::optional<AllowList> allow_list_;
  Status allow_list_error_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Candidate>> candidates_;  // in rank order
  std::map<std::string, std::vector<Candidate*>, std::less<>> by_backend_;
  int64_t next_explicit_rank_;
};

}  // namespace plugrt::plugins

#endif  // PLUGRT_PLUGINS_PLUGIN_LOADER_H_
