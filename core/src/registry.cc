// SPDX-License-Identifier: Apache-2.0
#include "plugrt/registry.h"

#include <algorithm>
#include <mutex>
#include <set>

#include "abi_validation.h"
#include "plugin_record.h"

namespace plugrt {

// One provider of one backend name.
struct Registry::Entry {
  int64_t rank;
  uint64_t sequence;  // registration order, the tie-breaker
  std::shared_ptr<const internal::PluginRecord> plugin;
  const internal::BackendTable* table;

  bool operator<(const Entry& other) const {
    return rank != other.rank ? rank < other.rank : sequence < other.sequence;
  }
};

Registry::Registry(std::shared_ptr<HostEnvironment> environment)
    : environment_(environment ? std::move(environment) : std::make_shared<HostEnvironment>()) {}

Registry::~Registry() = default;

Result<PluginId> Registry::register_plugin(plugrt_plugin_entry_fn entry, PluginSource source) {
  const std::string& origin = source.origin;
  if (entry == nullptr) return Status(Error::kInvalidArgument, origin + ": no entry function");

  auto record = std::make_shared<internal::PluginRecord>();
  record->code = std::move(source.code);
  // Until the descriptor names the plugin, its reports are attributed to its origin.
  record->host = std::make_unique<PluginHostServices>(environment_, origin);

  clear_reported_error();
  const plugrt_plugin_descriptor* descriptor = nullptr;
  const plugrt_status status = entry(record->host->table(), &descriptor);
  if (status != PLUGRT_STATUS_OK) {
    std::string message = origin + ": the plugin's entry function failed";
    if (std::optional<ReportedError> reported = take_reported_error()) {
      message += ": " + reported->message;
    } else {
      message += " with " + std::string(to_string(error_from_abi(status)));
    }
    const Error code = error_from_abi(status);
    return Status(code == Error::kOk ? Error::kInternal : code, std::move(message));
  }
  Result<internal::PluginDescription> description = internal::read_plugin_descriptor(descriptor);
  if (!description.is_ok()) return description.status().with_context(origin);

  record->info.name = description->name;
  record->info.version = description->version;
  record->info.abi_major = description->abi_major;
  record->info.abi_minor = description->abi_minor;
  record->info.origin = origin;
  record->info.isolated = source.isolated;
  record->backends = std::move(description->backends);
  // From here on, everything the plugin says is attributed to its own name. The table
  // itself stays the same: the plugin may keep the one its entry function received.
  record->host->set_source(record->info.name);

  std::vector<std::string> warnings;
  PluginId id;
  {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    id = next_id_++;
    record->info.id = id;
    std::shared_ptr<const internal::PluginRecord> shared = record;
    plugins_.emplace(id, shared);
    const uint64_t sequence = next_sequence_++;
    for (const internal::BackendTable& table : shared->backends) {
      std::vector<Entry>& entries = by_name_[table.name];
      Entry added{source.rank, sequence, shared, &table};
      if (!entries.empty()) {
        const Entry& winner = std::min(entries.front(), added);
        const Entry& loser = (&winner == &added) ? entries.front() : added;
        warnings.push_back("backend '" + table.name + "' is provided by both " + winner.plugin->info.origin + " and " +
                           loser.plugin->info.origin + "; using " + winner.plugin->info.origin +
                           " (lower rank, or registered first)");
      }
      entries.insert(std::upper_bound(entries.begin(), entries.end(), added), std::move(added));
    }
  }
  for (const std::string& warning : warnings) {
    environment_->log(LogLevel::kWarning, "registry", warning);
  }
  return id;
}

Status Registry::unregister_plugin(PluginId id) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto found = plugins_.find(id);
  if (found == plugins_.end()) {
    return Status(Error::kNotFound, "no registered plugin has id " + std::to_string(id));
  }
  for (auto it = by_name_.begin(); it != by_name_.end();) {
    std::vector<Entry>& entries = it->second;
    entries.erase(
        std::remove_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.plugin->info.id == id; }),
        entries.end());
    it = entries.empty() ? by_name_.erase(it) : std::next(it);
  }
  plugins_.erase(found);  // handles and Backends still hold the record
  return Status::ok();
}

std::optional<RegisteredBackend> Registry::lookup_locked(std::string_view name, int64_t* rank) const {
  auto found = by_name_.find(name);
  if (found == by_name_.end() || found->second.empty()) return std::nullopt;
  const Entry& winner = found->second.front();
  if (rank != nullptr) *rank = winner.rank;
  return RegisteredBackend(winner.plugin, winner.table);
}

Result<RegisteredBackend> Registry::find_backend(std::string_view name) {
  std::vector<BackendProvider*> providers;
  std::optional<RegisteredBackend> registered;
  int64_t registered_rank = 0;
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    providers = providers_;
    registered = lookup_locked(name, &registered_rank);
  }
  // Providers are asked without holding the registry lock: they register through it.
  Status load_error;
  for (BackendProvider* provider : providers) {
    std::optional<int64_t> rank = provider->candidate_rank(name);
    if (!rank || (registered && *rank >= registered_rank)) continue;
    Result<RegisteredBackend> provided = provider->provide(name, *this);
    if (provided.is_ok()) return provided;
    if (load_error.is_ok()) load_error = provided.status();
  }
  // What was found stays usable even if it was unregistered meanwhile: it is held.
  if (registered) return *std::move(registered);
  std::optional<Status> refused;
  for (BackendProvider* provider : providers) {
    if (!refused) refused = provider->refusal(name);
  }
  std::shared_lock<std::shared_mutex> lock(mutex_);
  if (std::optional<RegisteredBackend> backend = lookup_locked(name, nullptr)) return *std::move(backend);
  if (!load_error.is_ok()) return load_error;
  // A plugin that would provide it was refused: that, not "not installed", is the reason.
  if (refused) return refused->with_context("backend '" + std::string(name) + "' is not available");
  return not_found_locked(name);
}

Result<RegisteredBackend> Registry::find_registered_backend(std::string_view name) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  if (std::optional<RegisteredBackend> backend = lookup_locked(name, nullptr)) return *std::move(backend);
  return not_found_locked(name);
}

Status Registry::not_found_locked(std::string_view name) const {
  std::string known;
  for (const auto& [known_name, entries] : by_name_) {
    known += known.empty() ? "" : ", ";
    known += known_name;
  }
  return Status(Error::kNotFound, "no backend named '" + std::string(name) + "' is registered" +
                                      (known.empty() ? " (none are)" : " (known: " + known + ")"));
}

std::vector<std::string> Registry::backend_names() const {
  std::vector<BackendProvider*> providers;
  std::set<std::string> names;
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    providers = providers_;
    for (const auto& [name, entries] : by_name_) {
      if (!entries.empty()) names.insert(name);
    }
  }
  for (BackendProvider* provider : providers) {
    for (std::string& name : provider->candidate_backends()) names.insert(std::move(name));
  }
  return std::vector<std::string>(names.begin(), names.end());
}

std::optional<BackendSource> Registry::backend_source(std::string_view name) const {
  std::vector<BackendProvider*> providers;
  std::optional<BackendSource> registered;
  int64_t registered_rank = 0;
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    providers = providers_;
    auto found = by_name_.find(name);
    if (found != by_name_.end() && !found->second.empty()) {
      const Entry& winner = found->second.front();
      registered = BackendSource{winner.plugin->info.origin, winner.plugin->info.isolated};
      registered_rank = winner.rank;
    }
  }
  // The same choice find_backend() makes, without its loading.
  for (BackendProvider* provider : providers) {
    std::optional<int64_t> rank = provider->candidate_rank(name);
    if (!rank || (registered && *rank >= registered_rank)) continue;
    return provider->candidate_source(name);
  }
  return registered;
}

std::vector<BackendInfo> Registry::list_backends() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  std::vector<BackendInfo> list;
  for (const auto& [name, entries] : by_name_) {
    for (const Entry& entry : entries) {
      BackendInfo info;
      info.name = name;
      info.description = entry.table->description;
      info.plugin = entry.plugin->info;
      info.capabilities = entry.table->capabilities;
      info.has_aot = entry.table->partition != nullptr;
      info.init_failures = entry.plugin->init_failures(name);
      if (&entry != &entries.front()) info.shadowed_by = entries.front().plugin->info.origin;
      list.push_back(std::move(info));
    }
  }
  return list;
}

std::vector<PluginInfo> Registry::list_plugins() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  std::vector<PluginInfo> list;
  for (const auto& [id, record] : plugins_) list.push_back(record->info);
  return list;
}

void Registry::add_provider(BackendProvider* provider) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  providers_.push_back(provider);
}

void Registry::remove_provider(BackendProvider* provider) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  providers_.erase(std::remove(providers_.begin(), providers_.end(), provider), providers_.end());
}

}  // namespace plugrt
