// SPDX-License-Identifier: Apache-2.0
// The backend registry: every backend the process can use, by name.
//
// Built-in backends and plugins register the same way, through a plugin entry function
// (plugrt_plugin_entry_fn). The registry knows nothing of files or dlopen: a
// BackendProvider (the plugin loader in plugins/) can be attached to load plugins the
// first time one of their backends is looked up.
//
// Two providers of one backend name: the one with the lower rank wins, and at equal
// rank the one registered first. A warning naming both origins is logged when the second
// arrives. The plugin loader gives application-registered plugins the best ranks, then
// files in search-path order, so the rule is "first in the search order wins", as for
// PATH. Unregistering the winner makes the next one visible.
#ifndef PLUGRT_REGISTRY_H_
#define PLUGRT_REGISTRY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "plugrt/backend.h"
#include "plugrt/host_services.h"
#include "plugrt/plugrt_abi.h"
#include "plugrt/status.h"

namespace plugrt {

class Registry;

/// How a plugin reached the registry.
struct PluginSource {
  /// "built-in", or the path of the plugin file.
  std::string origin = "built-in";
  /// Keeps the plugin's code mapped while anything uses it (for a file: a handle whose
  /// deleter unloads it). Null for code linked into the program.
  std::shared_ptr<void> code;
  /// Lower wins when two plugins offer the same backend name.
  int64_t rank = 0;
  /// Its backends run in a separate process, behind proxy tables (plugrt/isolation/).
  bool isolated = false;
};

/// One registered backend, for listings.
struct BackendInfo {
  std::string name;
  std::string description;
  PluginInfo plugin;
  plugrt_backend_capabilities capabilities = 0;
  bool has_aot = false;
  /// Another provider of this name wins; this is its origin.
  std::optional<std::string> shadowed_by;
  /// Its init failures since the plugin was registered.
  InitFailures init_failures;
};

/// Supplies backends the registry does not have yet (the plugin loader does this).
/// Where a backend would be taken from, told without loading anything: what a cache key
/// needs to name it the same way before and after it loads.
struct BackendSource {
  std::string origin;     ///< "built-in", or the plugin file's path
  bool isolated = false;  ///< its backends would run in a backend host process
};

class BackendProvider {
 public:
  virtual ~BackendProvider() = default;
  /// The rank of the best candidate for `backend_name` this provider can supply,
  /// loaded or not, if any. Cheap, and runs no plugin code.
  virtual std::optional<int64_t> candidate_rank(std::string_view backend_name) = 0;
  /// Registers that candidate into `registry` and returns the backend it now provides
  /// under that name (taken while nothing can unload it). Errors say why it could not.
  virtual Result<RegisteredBackend> provide(std::string_view backend_name, Registry& registry) = 0;
  /// Every backend name it has a candidate for, loaded or not (no plugin code runs).
  virtual std::vector<std::string> candidate_backends() { return {}; }
  /// Where the candidate candidate_rank() ranks would come from (no plugin code runs);
  /// nullopt when there is none, or when the provider cannot tell.
  virtual std::optional<BackendSource> candidate_source(std::string_view /*backend_name*/) { return std::nullopt; }
  /// Why a file that would provide `backend_name` was refused (its metadata names the
  /// backend, or its file name is libplugrt_<name>.so), when there is one and nothing
  /// else provides it; nullopt otherwise. No plugin code runs.
  virtual std::optional<Status> refusal(std::string_view /*backend_name*/) { return std::nullopt; }
};

class Registry {
 public:
  /// A registry whose plugins log through `environment` (a default one when null).
  explicit Registry(std::shared_ptr<HostEnvironment> environment = nullptr);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  HostEnvironment& environment() const { return *environment_; }
  /// The same environment, shared (for objects that may outlive the registry).
  std::shared_ptr<HostEnvironment> shared_environment() const { return environment_; }

  /// Calls `entry`, validates what it returns and registers every backend it lists.
  /// Errors: the entry's own failure (its code, with its reported message),
  /// kPluginAbiMismatch, kPluginInvalid. All messages start with the origin.
  Result<PluginId> register_plugin(plugrt_plugin_entry_fn entry, PluginSource source);

  /// Removes a plugin's backends from lookups. Backends and handles already taken keep
  /// working; the plugin's code is released when the last of them goes.
  /// Errors: kNotFound for an unknown id.
  Status unregister_plugin(PluginId id);

  /// The backend called `name`, asking the attached providers first when one of them
  /// has a better-ranked candidate than what is registered. Errors: kNotFound (listing
  /// the names that exist), or the provider's error when loading the candidate failed.
  Result<RegisteredBackend> find_backend(std::string_view name);

  /// The registered backend called `name`, without consulting any provider.
  /// Errors: kNotFound, listing the names that exist.
  Result<RegisteredBackend> find_registered_backend(std::string_view name) const;

  /// Every registered backend, sorted by name, winners before the ones they shadow.
  std::vector<BackendInfo> list_backends() const;
  /// The name of every backend registered or that an attached provider could supply,
  /// sorted, once each. Loads nothing: find_backend() does, name by name.
  std::vector<std::string> backend_names() const;
  /// Where find_backend(name) would take the backend from: the registered plugin, or a
  /// provider's better-ranked candidate. Loads nothing; nullopt when the name is unknown
  /// or that provider cannot tell.
  std::optional<BackendSource> backend_source(std::string_view name) const;
  /// Every registered plugin, in registration order.
  std::vector<PluginInfo> list_plugins() const;

  /// Attaches a provider consulted by find_backend. It must outlive the registry or be
  /// removed first.
  void add_provider(BackendProvider* provider);
  void remove_provider(BackendProvider* provider);

 private:
  struct Entry;
  std::optional<RegisteredBackend> lookup_locked(std::string_view name, int64_t* rank) const;
  Status not_found_locked(std::string_view name) const;

  std::shared_ptr<HostEnvironment> environment_;
  mutable std::shared_mutex mutex_;
  std::map<std::string, std::vector<Entry>, std::less<>> by_name_;
  std::map<PluginId, std::shared_ptr<const internal::PluginRecord>> plugins_;
  std::vector<BackendProvider*> providers_;
  PluginId next_id_ = 1;
  uint64_t next_sequence_ = 0;
};

}  // namespace plugrt

#endif  // PLUGRT_REGISTRY_H_
