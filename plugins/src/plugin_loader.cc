// SPDX-License-Identifier: Apache-2.0
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/plugins/plugin_trust.h"

#include <stdlib.h>

#include <algorithm>

#include "plugrt/names.h"
#include "plugrt/plugins/plugin_library.h"
#include "worker_spin.h"

namespace plugrt::plugins {
namespace {

// Files the application loads by path rank before everything discovered.
constexpr int64_t kFirstExplicitRank = -(int64_t{1} << 40);

std::string canonical(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return path;
  std::string result(resolved);
  free(resolved);
  return result;
}

// Opens `path` with its trust checked (ownership and permissions of the file and of
// every directory above it, the allow-list) on the descriptor it returns.
Result<FileDescriptor> open_trusted(const std::string& path, const SearchPathOptions& options,
                                    const std::optional<AllowList>& allow_list, const Status& allow_list_error) {
  PLUGRT_ASSIGN_OR_RETURN(FileDescriptor file, open_plugin_file(path, !options.allow_untrusted_files));
  if (!options.allow_list.empty()) {
    if (!allow_list) return Status(Error::kPluginInvalid, path + ": not trusted: " + allow_list_error.message());
    PLUGRT_ASSIGN_OR_RETURN(std::string digest, sha256_fd(file.get(), path));
    if (!allow_list->contains(digest)) {
      return Status(Error::kPluginInvalid, path + ": not trusted: its SHA-256 " + digest +
                                               " is not in the plugin allow-list " + options.allow_list);
    }
  }
  return file;
}

// Checks that need no plugin code: trust (open_trusted), the ELF file, its metadata, its
// ABI major and its entry symbol. Every message starts with the path.
Result<PluginMetadata> check_file(const std::string& path, const SearchPathOptions& options,
                                  const std::optional<AllowList>& allow_list, const Status& allow_list_error) {
  Result<FileDescriptor> trusted = open_trusted(path, options, allow_list, allow_list_error);
  if (!trusted.is_ok()) return trusted.status();
  PLUGRT_ASSIGN_OR_RETURN(PluginFileInfo info, inspect_plugin_file(path));
  const PluginMetadata& metadata = info.metadata;
  if (metadata.abi_major != PLUGRT_ABI_MAJOR) {
    return Status(Error::kPluginAbiMismatch, path + ": built for plugin ABI " + std::to_string(metadata.abi_major) +
                                                 "." + std::to_string(metadata.abi_minor) +
                                                 ", this host implements ABI " + std::to_string(PLUGRT_ABI_MAJOR) +
                                                 "." + std::to_string(PLUGRT_ABI_MINOR) + " (majors must match)");
  }
  if (!info.has_entry_symbol) {
    return Status(Error::kPluginInvalid, path + ": does not export its entry function " + PLUGRT_PLUGIN_ENTRY_SYMBOL);
  }
  return info.metadata;
}

}  // namespace

std::string_view to_string(PluginReport::State state) {
  switch (state) {
    case PluginReport::State::kAccepted: return "accepted";
    case PluginReport::State::kLoaded: return "loaded";
    case PluginReport::State::kRefused: return "refused";
  }
  return "unknown";
}

PluginLoader::PluginLoader(Registry& registry, SearchPathOptions options)
    : registry_(registry),
      options_(std::move(options)),
      search_path_(plugin_search_path(options_)),
      next_explicit_rank_(kFirstExplicitRank) {
  bound_worker_spinning();  // before any plugin's worker pool can start
  if (options_.isolation.backend_host.empty()) options_.isolation.backend_host = default_backend_host();
  options_.isolation.allow_untrusted_files = options_.allow_untrusted_files;
  options_.isolation.allow_list = options_.allow_list;
  registry_.add_provider(this);
}

bool PluginLoader::is_isolated_locked(const Candidate& candidate) const {
  if (!candidate.metadata) return false;
  for (const std::string& isolated : options_.isolated_backends) {
    if (isolated == "all") return true;
    for (const std::string& backend : candidate.metadata->backends) {
      if (backend == isolated) return true;
    }
  }
  return false;
}

Result<PluginId> PluginLoader::register_locked(Candidate& candidate) {
  if (is_isolated_locked(candidate)) {
    PLUGRT_ASSIGN_OR_RETURN(
        isolation::IsolatedRegistration registration,
        isolation::register_isolated_plugin(registry_, candidate.path, candidate.rank, options_.isolation));
    candidate.isolated = registration.plugin;
    return registration.id;
  }
  // Checked again on the descriptor that is loaded: the file may have been replaced, or a
  // directory above it swapped, since it was discovered.
  PLUGRT_ASSIGN_OR_RETURN(FileDescriptor file, open_trusted(candidate.path, options_, allow_list_, allow_list_error_));
  PLUGRT_ASSIGN_OR_RETURN(std::shared_ptr<PluginLibrary> library, PluginLibrary::open(candidate.path, file.get()));
  auto entry = reinterpret_cast<plugrt_plugin_entry_fn>(library->symbol(PLUGRT_PLUGIN_ENTRY_SYMBOL));
  if (entry == nullptr) {
    return Status(Error::kPluginInvalid,
                  candidate.path + ": " + PLUGRT_PLUGIN_ENTRY_SYMBOL + " not found after loading");
  }
  PluginSource source;
  source.origin = candidate.path;
  source.code = library;
  source.rank = candidate.rank;
  PLUGRT_ASSIGN_OR_RETURN(PluginId id, registry_.register_plugin(entry, std::move(source)));
  candidate.library = library;
  return id;
}

PluginLoader::~PluginLoader() { registry_.remove_provider(this); }

void PluginLoader::read_allow_list_locked() {
  allow_list_.reset();
  allow_list_error_ = Status::ok();
  if (options_.allow_list.empty()) return;
  Result<AllowList> list = AllowList::read(options_.allow_list);
  if (list.is_ok()) {
    allow_list_.emplace(std::move(list).value());
  } else {
    allow_list_error_ = list.status();
  }
}

PluginLoader::Candidate* PluginLoader::find_locked(const std::string& path) {
  for (const auto& candidate : candidates_) {
    if (candidate->path == path) return candidate.get();
  }
  return nullptr;
}

void PluginLoader::refuse_locked(Candidate& candidate, Status why) {
  registry_.environment().log(LogLevel::kInfo, "plugin loader", "refused " + why.message());
  candidate.refusal = std::move(why);
}

PluginLoader::Candidate& PluginLoader::add_candidate_locked(std::string path, std::string found_in, int64_t rank) {
  auto candidate = std::make_unique<Candidate>();
  candidate->path = std::move(path);
  candidate->found_in = std::move(found_in);
  candidate->rank = rank;
  Result<PluginMetadata> metadata = check_file(candidate->path, options_, allow_list_, allow_list_error_);
  if (metadata.is_ok()) {
    candidate->metadata = std::move(metadata).value();
  } else {
    refuse_locked(*candidate, metadata.status());
  }
  return insert_locked(std::move(candidate));
}

PluginLoader::Candidate& PluginLoader::insert_locked(std::unique_ptr<Candidate> owned) {
  Candidate& candidate = *owned;
  candidates_.insert(std::upper_bound(candidates_.begin(), candidates_.end(), owned,
                                      [](const auto& a, const auto& b) { return a->rank < b->rank; }),
                     std::move(owned));
  if (!candidate.refusal.is_ok() || !candidate.metadata) return candidate;
  for (const std::string& backend : candidate.metadata->backends) {
    std::vector<Candidate*>& offers = by_backend_[backend];
    offers.insert(std::upper_bound(offers.begin(), offers.end(), &candidate,
                                   [](const Candidate* a, const Candidate* b) { return a->rank < b->rank; }),
                  &candidate);
    if (offers.size() > 1) {
      registry_.environment().log(LogLevel::kWarning, "plugin loader",
                                  "backend '" + backend + "' is offered by both " + offers[0]->path + " and " +
                                      offers[1]->path + "; " + offers[0]->path +
                                      " comes first in the search order and wins");
    }
  }
  return candidate;
}

void PluginLoader::discover() {
  std::lock_guard<std::mutex> lock(mutex_);
  // Keep what is loaded or was loaded explicitly; reconsider everything else.
  std::vector<std::unique_ptr<Candidate>> kept;
  for (auto& candidate : candidates_) {
    if (candidate->id || candidate->found_in == "explicit") kept.push_back(std::move(candidate));
  }
  candidates_.clear();
  by_backend_.clear();
  search_path_ = plugin_search_path(options_);
  read_allow_list_locked();

  std::vector<std::unique_ptr<Candidate>> previous = std::move(kept);
  int64_t rank = 0;
  auto readd = [&](std::unique_ptr<Candidate> old) {
    // A loaded plugin keeps the verdict and metadata it was loaded with, even if its
    // file has since been replaced or removed: that is the code that runs.
    if (old->id) {
      insert_locked(std::move(old));
      return;
    }
    Candidate& fresh = add_candidate_locked(old->path, old->found_in, old->rank);
    fresh.library = old->library;
  };
  for (const SearchDirectory& directory : search_path_) {
    for (std::string& file : list_plugin_files(directory.path)) {
      std::string path = canonical(file);
      auto same = std::find_if(previous.begin(), previous.end(), [&](const auto& c) { return c && c->path == path; });
      if (same != previous.end()) {
        (*same)->rank = rank++;
        readd(std::move(*same));
      } else if (find_locked(path) == nullptr) {  // a file reached twice (links) counts once
        add_candidate_locked(std::move(path), directory.source, rank++);
      }
    }
  }
  for (auto& old : previous) {
    if (old) readd(std::move(old));
  }
}

Status PluginLoader::load_locked(Candidate& candidate) {
  if (candidate.id) return Status::ok();
  if (!candidate.refusal.is_ok()) return candidate.refusal;

  Result<PluginId> id = register_locked(candidate);
  if (!id.is_ok()) {
    refuse_locked(candidate, id.status());
    return candidate.refusal;
  }

  // What ran must match what the metadata promised, or listings would lie.
  std::vector<std::string> registered;
  std::string plugin_name;
  for (const PluginInfo& plugin : registry_.list_plugins()) {
    if (plugin.id == *id) plugin_name = plugin.name;
  }
  for (const BackendInfo& backend : registry_.list_backends()) {
    if (backend.plugin.id == *id) registered.push_back(backend.name);
  }
  std::vector<std::string> promised = candidate.metadata->backends;
  std::sort(promised.begin(), promised.end());
  if (registered != promised || plugin_name != candidate.metadata->name) {
    (void)registry_.unregister_plugin(*id);
    refuse_locked(candidate, Status(Error::kPluginInvalid,
                                    candidate.path + ": its metadata says plugin '" + candidate.metadata->name +
                                        "' with backends [" + join_names(promised) + "], its entry function says '" +
                                        plugin_name + "' with [" + join_names(registered) + "]"));
    return candidate.refusal;
  }
  candidate.id = *id;
  return Status::ok();
}

void PluginLoader::load_accepted() {
  for (const PluginReport& plugin : report()) {
    if (plugin.state == PluginReport::State::kAccepted) (void)load(plugin.path);
  }
}

Result<PluginId> PluginLoader::load(const std::string& path) {
  const std::string resolved = canonical(path);
  std::lock_guard<std::mutex> lock(mutex_);
  Candidate* candidate = find_locked(resolved);
  if (candidate == nullptr) {
    read_allow_list_locked();
    candidate = &add_candidate_locked(resolved, "explicit", next_explicit_rank_++);
  }
  PLUGRT_RETURN_IF_ERROR(load_locked(*candidate));
  return *candidate->id;
}

Status PluginLoader::unload(const std::string& path) {
  const std::string resolved = canonical(path);
  std::lock_guard<std::mutex> lock(mutex_);
  Candidate* candidate = find_locked(resolved);
  if (candidate == nullptr || !candidate->id) {
    return Status(Error::kNotFound, path + ": not loaded");
  }
  const PluginId id = *candidate->id;
  candidate->id.reset();
  return registry_.unregister_plugin(id);
}

std::vector<PluginReport> PluginLoader::report() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::vector<BackendInfo> registered = registry_.list_backends();
  std::vector<PluginReport> reports;
  for (const auto& candidate : candidates_) {
    PluginReport report;
    report.path = candidate->path;
    report.found_in = candidate->found_in;
    report.refusal = candidate->refusal;
    report.metadata = candidate->metadata;
    report.code_mapped = !candidate->library.expired();
    if (std::shared_ptr<isolation::IsolatedPlugin> isolated = candidate->isolated.lock()) {
      report.isolated = true;
      report.crashes = isolation::crash_records(*isolated);
    }
    report.state = !candidate->refusal.is_ok() ? PluginReport::State::kRefused
                   : candidate->id             ? PluginReport::State::kLoaded
                                               : PluginReport::State::kAccepted;
    if (candidate->metadata) {
      for (const std::string& backend : candidate->metadata->backends) {
        const Candidate* first = by_backend_.find(backend)->second.front();
        if (first != candidate.get()) report.shadowed_by.emplace_back(backend, first->path);
      }
    }
    for (const BackendInfo& backend : registered) {
      if (candidate->id && backend.plugin.id == *candidate->id && backend.init_failures.count > 0) {
        report.init_failures.emplace_back(backend.name, backend.init_failures);
      }
    }
    reports.push_back(std::move(report));
  }
  return reports;
}

std::optional<int64_t> PluginLoader::candidate_rank(std::string_view backend_name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = by_backend_.find(backend_name);
  if (found == by_backend_.end()) return std::nullopt;
  for (const Candidate* candidate : found->second) {
    // Loaded ones count too: the registry asks only when it has nothing as good, and
    // provide() then hands over the registered backend, or reloads it if it just went.
    if (candidate->refusal.is_ok()) return candidate->rank;
  }
  return std::nullopt;
}

std::vector<std::string> PluginLoader::candidate_backends() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, candidates] : by_backend_) {
    for (const Candidate* candidate : candidates) {
      if (candidate->refusal.is_ok()) {
        names.push_back(name);
        break;
      }
    }
  }
  return names;
}

std::optional<BackendSource> PluginLoader::candidate_source(std::string_view backend_name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = by_backend_.find(backend_name);
  if (found == by_backend_.end()) return std::nullopt;
  for (const Candidate* candidate : found->second) {  // the one candidate_rank() ranks
    if (candidate->refusal.is_ok()) return BackendSource{candidate->path, is_isolated_locked(*candidate)};
  }
  return std::nullopt;
}

std::optional<Status> PluginLoader::refusal(std::string_view backend_name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string file_name = "libplugrt_" + std::string(backend_name) + ".so";
  for (const auto& candidate : candidates_) {
    if (candidate->refusal.is_ok()) continue;
    const bool named =
        candidate->metadata && std::find(candidate->metadata->backends.begin(), candidate->metadata->backends.end(),
                                         backend_name) != candidate->metadata->backends.end();
    const size_t slash = candidate->path.rfind('/');
    if (named || candidate->path.substr(slash == std::string::npos ? 0 : slash + 1) == file_name) {
      return candidate->refusal;
    }
  }
  return std::nullopt;
}

Result<RegisteredBackend> PluginLoader::provide(std::string_view backend_name, Registry& registry) {
  if (&registry != &registry_) {
    return Status(Error::kInvalidArgument, "this plugin loader serves another registry");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = by_backend_.find(backend_name);
  if (found == by_backend_.end()) return registry_.find_registered_backend(backend_name);
  // The best-ranked candidate that loads wins; the refusals of better ones are kept.
  // Holding mutex_ keeps unload() away until the backend is in hand.
  Status first_failure;
  for (Candidate* candidate : found->second) {
    Status status = load_locked(*candidate);
    if (status.is_ok()) return registry_.find_registered_backend(backend_name);
    if (first_failure.is_ok()) first_failure = std::move(status);
  }
  return first_failure.with_context("no plugin offering backend '" + std::string(backend_name) + "' could be loaded");
}

}  // namespace plugrt::plugins
