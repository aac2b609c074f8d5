// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/load_placer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "placed_entry.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/common/graph_ir.h"
#include "plugrt/mapped_file.h"
#include "plugrt/names.h"
#include "plugrt/placement/compile.h"
#include "plugrt/placement/cost_profile.h"
#include "plugrt/placement/method_graph.h"
#include "plugrt/plugrt_abi.h"

namespace plugrt::placement {

namespace {

using BackendIdentity = std::function<void(ContentHasher&, const RegisteredBackend&, std::string_view)>;

/// Blobs from the program being placed again, then from the cache; lowered blobs go to
/// the cache.
class LoadBlobSource : public BlobSource {
 public:
  LoadBlobSource(const MethodContents& method, BlobCache* cache, BackendIdentity identity)
      : method_(method), cache_(cache), identity_(std::move(identity)) {}

  std::optional<FoundBlob> find(const RegisteredBackend& backend, std::string_view backend_name,
                                Span<const uint8_t> subgraph) override {
    const ContentHash graph = content_hash(subgraph);
    if (const DelegateContents* delegate = program_delegate(backend_name, graph)) {
      return FoundBlob{delegate->blob, nullptr, "program", delegate->blob_names_constants};
    }
    // The portable backend's blob is the partition graph itself: nothing worth caching.
    if (cache_ == nullptr || backend_name == kPortableBackendName) return std::nullopt;
    missed_ = {subgraph.data(), key(backend, backend_name, graph)};
    return cache_->find(missed_->second);
  }

  void lowered(const RegisteredBackend& backend, std::string_view backend_name, Span<const uint8_t> subgraph,
               Span<const uint8_t> blob, bool names_constants) override {
    // Cached blobs hold their constants: a cache hit has no graph of the program beside it.
    if (cache_ == nullptr || backend_name == kPortableBackendName || names_constants) return;
    // compile_graph lowers right after a miss: the key find() made for the same graph.
    const ContentHash entry = missed_ && missed_->first == subgraph.data()
                                  ? missed_->second
                                  : key(backend, backend_name, content_hash(subgraph));
    const Status stored = cache_->store(entry, blob);
    if (!stored.is_ok() && store_error_.empty()) store_error_ = stored.message();
  }

  /// The first failure to write an entry, if any (the load goes on without it).
  const std::string& store_error() const { return store_error_; }

 private:
  /// The program's first delegate on `backend_name` lowered from this graph, if any. The
  /// index is made on the first lookup, so that a program of thousands of partitions
  /// costs one pass over its graphs, not one per partition.
  const DelegateContents* program_delegate(std::string_view backend_name, const ContentHash& graph) {
    if (!indexed_) {
      for (size_t d = 0; d < method_.delegates.size(); ++d) {
        const DelegateContents& delegate = method_.delegates[d];
        const ContentHash hash = content_hash(delegate.portable_graph);
        program_delegates_.emplace(std::make_tuple(delegate.backend, hash.high, hash.low), d);
      }
      indexed_ = true;
    }
    const auto found = program_delegates_.find(std::make_tuple(std::string(backend_name), graph.high, graph.low));
    return found != program_delegates_.end() ? &method_.delegates[found->second] : nullptr;
  }

  ContentHash key(const RegisteredBackend& backend, std::string_view backend_name, const ContentHash& graph) {
    ContentHasher key;
    key.add("plugrt partition blob 1").add(graph.high).add(graph.low);
    identity_(key, backend, backend_name);
    key.add(static_cast<uint64_t>(0));  // compile specs: placement at load passes none
    return key.finish();
  }

  const MethodContents& method_;
  BlobCache* cache_;
  BackendIdentity identity_;
  bool indexed_ = false;
  std::map<std::tuple<std::string, uint64_t, uint64_t>, size_t> program_delegates_;  // backend, graph hash
  std::optional<std::pair<const uint8_t*, ContentHash>> missed_;                     // the last lookup that missed
  std::string store_error_;
};

bool is_allowed(const MethodOptions& options, const std::string& backend) {
  return options.allowed_backends.empty() || backend == kPortableBackendName ||
         std::find(options.allowed_backends.begin(), options.allowed_backends.end(), backend) !=
             options.allowed_backends.end();
}

std::string format_us(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", us);
  return text;
}

/// Why a partition went to its backend, saying whether the costs that chose it were measured.
std::string cost_reason(const PartitionSummary& partition, const std::string& backends) {
  if (partition.measured_us >= 0) {
    return "lowest cost over " + backends + ", its nodes measured: " + format_us(partition.measured_us) + " us";
  }
  std::string reason = "lowest estimated cost over " + backends + ": " + format_us(partition.estimated_us) + " us";
  if (partition.unmeasured_choices > 0) {
    reason += " (estimated, not measured: " + std::to_string(partition.unmeasured_choices) +
              " of its nodes other backends also take)";
  }
  return reason;
}

/// Saves the profile when placement measured something; returns what it measured, for
/// the load report.
std::string keep_measured(const TuneReport& tuned, const CostProfile& profile, const std::string& path) {
  if (tuned.measured == 0 && tuned.failed == 0 && tuned.skipped == 0 && tuned.settled == 0) return std::string();
  std::string note =
      "measured " + std::to_string(tuned.measured) + " figures in " + format_us(tuned.seconds * 1e3) + " ms";
  for (size_t i = 0; i < tuned.figures.size(); ++i) {
    const TunedFigure& figure = tuned.figures[i];
    note += (i == 0 ? ": " : ", ") + figure.op + " on " + figure.backend + " " + format_us(figure.us) + " us";
  }
  if (tuned.failed > 0) note += "; " + std::to_string(tuned.failed) + " failed";
  if (tuned.settled > 0) {
    note += "; " + std::to_string(tuned.settled) +
            " left on backends measured clearly slower on two nodes of the same op type";
  }
  if (tuned.skipped > 0) {
    note += "; " + std::to_string(tuned.skipped) + " left for lack of time (estimated, not measured)";
  }
  if (tuned.measured > 0) {
    const Status saved = profile.save(path);
    note += saved.is_ok() ? "; kept in the cost profile" : "; not kept: " + saved.message();
  }
  return note;
}

}  // namespace

LoadPlacer::LoadPlacer(LoadPlacerOptions options)
    : cache_directory_(options.cache_directory),
      profile_directory_(options.profile_directory.value_or(options.cache_directory)),
      measure_seconds_(options.measure_seconds) {
  if (!options.cache_directory.empty()) {
    cache_ = std::make_unique<BlobCache>(options.cache_directory, options.cache_max_bytes);
  }
}

LoadPlacer::~LoadPlacer() = default;

void LoadPlacer::add_backend_identity(ContentHasher& key, const RegisteredBackend& backend, std::string_view name) {
  const PluginInfo& plugin = backend.plugin();
  // Built in: its name and version say it all; a plugin file: its identity, which any
  // rebuild or reinstall changes.
  std::string build = plugin.origin;
  if (Result<std::string> identity = file_identity(plugin.origin); identity.is_ok()) build = *identity;
  key.add(name).add(plugin.name).add(plugin.version).add(build);
  key.add(static_cast<uint64_t>(plugin.abi_major)).add(static_cast<uint64_t>(plugin.abi_minor));
  key.add(static_cast<uint64_t>(PLUGRT_ABI_MAJOR)).add(static_cast<uint64_t>(PLUGRT_ABI_MINOR));
}

ContentHash LoadPlacer::verdict_key(const RegisteredBackend& backend, Span<const uint8_t> blob,
                                    Span<const uint8_t> fallback) {
  ContentHasher key;
  key.add("plugrt verification verdict 1").add(CostProfile::this_cpu());
  add_backend_identity(key, backend, backend.name());
  const ContentHash blob_hash = content_hash(blob), fallback_hash = content_hash(fallback);
  key.add(blob_hash.high).add(blob_hash.low).add(fallback_hash.high).add(fallback_hash.low);
  key.add(static_cast<uint64_t>(kVerificationTolerance * 1e9));
  return key.finish();
}

// A verdict entry's payload: "1" (agreed) or "0", a space, then its detail.
std::optional<VerificationVerdict> LoadPlacer::find_verdict(const RegisteredBackend& backend, Span<const uint8_t> blob,
                                                            Span<const uint8_t> fallback) {
  if (!cache_) return std::nullopt;
  std::optional<FoundBlob> found = cache_->find(verdict_key(backend, blob, fallback));
  if (!found || found->bytes.size() < 2 || (found->bytes[0] != '0' && found->bytes[0] != '1')) return std::nullopt;
  const char* text = reinterpret_cast<const char*>(found->bytes.data());
  return VerificationVerdict{text[0] == '1', std::string(text + 2, found->bytes.size() - 2)};
}

void LoadPlacer::keep_verdict(const RegisteredBackend& backend, Span<const uint8_t> blob, Span<const uint8_t> fallback,
                              const VerificationVerdict& verdict) {
  if (!cache_) return;
  const std::string payload = std::string(verdict.agreed ? "1 " : "0 ") + verdict.detail;
  (void)cache_->store(verdict_key(backend, blob, fallback),
                      Span<const uint8_t>(reinterpret_cast<const uint8_t*>(payload.data()), payload.size()));
}

void LoadPlacer::add_source_identity(ContentHasher& key, Registry& registry, const std::string& name) {
  std::optional<BackendSource> source = registry.backend_source(name);
  if (!source) {  // a provider that cannot tell without loading it
    if (Result<RegisteredBackend> backend = registry.find_backend(name); backend.is_ok()) {
      source = BackendSource{backend->plugin().origin, backend->plugin().isolated};
    }
  }
  key.add(name);
  if (!source) {
    key.add("absent");
    return;
  }
  // A plugin file: its identity, which any rebuild or reinstall changes; one built in:
  // its version.
  std::string build = source->origin;
  if (Result<std::string> identity = file_identity(source->origin); identity.is_ok()) {
    build = *identity;
  } else if (Result<RegisteredBackend> backend = registry.find_registered_backend(name); backend.is_ok()) {
    build += " " + backend->plugin().version;
  }
  key.add(source->origin).add(build).add(static_cast<uint64_t>(source->isolated));
}

std::optional<PlacedProgram> LoadPlacer::find_placed(const ContentHash& key, const Program& program,
                                                     const std::function<bool(const std::string&)>& available_now) {
  // The entry's contents are hashed on another thread while Method::load initialises
  // its backends from them; the method is used only once the check has passed.
  std::function<Status()> check;
  std::optional<FoundBlob> entry = cache_->find_checking_later(key, &check);
  if (!entry) return std::nullopt;
  std::vector<std::string> unavailable;
  Result<PlacedProgram> cached = read_placed_entry(entry->bytes, entry->owner, program, &unavailable);
  if (!cached.is_ok()) {
    if (check().is_ok()) cache_->reject(key);  // (a failed check has removed it)
    return std::nullopt;
  }
  // A backend left out as unavailable then that is available now: placed again (the
  // new placement replaces the entry).
  for (const std::string& name : unavailable) {
    if (available_now(name)) return std::nullopt;
  }
  cached->source = cache_->entry_path(key);
  BlobCache* cache = cache_.get();
  cached->check = [check, cache]() {
    Status checked = check();
    cache->save_counts();
    return checked;
  };
  return std::move(cached).value();
}

ContentHash LoadPlacer::placed_method_key(std::string_view method_name, const std::string& program_identity,
                                          const std::optional<MethodGraph>& graph, Registry& registry,
                                          const MethodOptions& options, const std::string& profile_digest) {
  // A program file is named by its identity (reading 100 MB of weights to hash them would
  // cost more than the rest of the load); one in memory, by its graph's contents.
  ContentHasher key;
  key.add("plugrt placed method 3").add(method_name);
  if (!program_identity.empty()) {
    key.add("file").add(program_identity);
  } else {
    const ContentHash graph_hash = content_hash(graph->bytes);
    key.add("graph").add(graph_hash.high).add(graph_hash.low);
  }
  size_t named = 0;
  for (const std::string& name : registry.backend_names()) {
    if (name == kPortableBackendName || !is_allowed(options, name)) continue;
    add_source_identity(key, registry, name);
    ++named;
  }
  key.add(static_cast<uint64_t>(named));
  key.add(static_cast<uint64_t>(PLUGRT_ABI_MAJOR)).add(static_cast<uint64_t>(PLUGRT_ABI_MINOR));
  key.add(profile_digest);  // the figures, and whether measuring was allowed
  return key.finish();
}

void LoadPlacer::rejected(const PlacedProgram& placed, const Status& /*why*/) {
  if (!placed.source.empty()) ::unlink(placed.source.c_str());
}

Result<PlacedProgram> LoadPlacer::place(const Program& program, std::string_view method_name, Registry& registry,
                                        const MethodOptions& options) {
  PLUGRT_ASSIGN_OR_RETURN(MethodContents method, program.contents(method_name));
  for (const DelegateContents& delegate : method.delegates) {
    if (delegate.has_compile_specs) {
      return Status(Error::kNotSupported, "delegate '" + delegate.name + "' (" + delegate.backend +
                                              ") has compile specs, which placement at load does not carry over");
    }
  }
  // The program's backends that cannot take part say why. One that is here but cannot
  // lower (an isolated one has no ahead-of-time entries) would be lost by placing again:
  // then the program's placement is kept.
  std::vector<std::string> skipped;
  std::vector<std::string> unavailable;  // the backends skipped as not available
  std::set<std::string> examined;
  // The backend called `name` when it is here and available; else why not goes to `skipped`.
  auto usable = [&](const std::string& name) -> std::optional<RegisteredBackend> {
    const bool first_time = examined.insert(name).second;
    Result<RegisteredBackend> backend = registry.find_backend(name);
    if (!backend.is_ok()) {
      if (first_time) skipped.push_back(name + " (" + backend.status().message() + ")");
      return std::nullopt;
    }
    const Availability availability = backend->is_available();
    if (!availability.available) {
      if (first_time) {
        skipped.push_back(name + " (unavailable: " + availability.reason + ")");
        unavailable.push_back(name);
      }
      return std::nullopt;
    }
    return *backend;
  };
  for (const DelegateContents& delegate : method.delegates) {
    if (delegate.backend == kPortableBackendName || !is_allowed(options, delegate.backend)) continue;
    const std::optional<RegisteredBackend> backend = usable(delegate.backend);
    if (backend && !backend->has_aot()) {
      return Status(Error::kNotSupported, "backend '" + delegate.backend + "' (" + backend->plugin().origin +
                                              ") runs delegate '" + delegate.name +
                                              "' but has no ahead-of-time entries to place and lower with" +
                                              (backend->plugin().isolated ? " (it is isolated)" : ""));
    }
  }
  // The whole graph: read at once for a program in memory (its key hashes it), else
  // only when the cache has no placed method for the program file.
  std::optional<MethodGraph> graph;
  const std::string program_identity = program.file_identity();
  if (program_identity.empty() || cache_ == nullptr) {
    PLUGRT_ASSIGN_OR_RETURN(graph, method_graph(method));
  }

  // The machine's measured costs: the same profile `plugrt compile` reads and writes.
  std::string profile_path, profile_warning;
  CostProfile profile;
  if (!profile_directory_.empty()) {
    const std::string cpu = CostProfile::this_cpu();
    profile_path = CostProfile::file_for(profile_directory_, cpu);
    profile = CostProfile::load(profile_path, cpu, &profile_warning);
  }

  // The whole placed method, when this graph was placed over these backends, with these
  // measured costs, before. The key names every backend that could take part by where it
  // would come from, which loads no plugin, so a hit loads only the plugins the placed
  // method uses.
  ContentHash method_key;
  if (cache_ != nullptr) {
    method_key = placed_method_key(method_name, program_identity, graph, registry, options,
                                   profile.digest() + (measure_seconds_ > 0 ? " measuring" : ""));
    const auto available_now = [&](const std::string& name) { return usable(name).has_value(); };
    if (std::optional<PlacedProgram> cached = find_placed(method_key, program, available_now)) {
      return std::move(*cached);
    }
  }

  // The backends present, allowed and available now.
  CompileOptions compile;
  std::vector<RegisteredBackend> considered;
  for (const std::string& name : registry.backend_names()) {                   // sorted, as compile's default order
    if (name == kPortableBackendName || !is_allowed(options, name)) continue;  // not loaded
    const std::optional<RegisteredBackend> backend = usable(name);
    if (backend && backend->has_aot()) {
      compile.backends.push_back(name);
      considered.push_back(*backend);
    }
  }
  compile.backends.push_back(kPortableBackendName);

  compile.passes = false;  // the program's graph has been through them
  // Method::load falls back to the program as compiled. A graph whose dimensions vary
  // keeps its fallbacks: a backend may refuse some call's shapes, which then run there.
  compile.fallback = common::has_symbols(graph->bytes.data(), graph->bytes.size());
  compile.producer = program.producer() + ", placed at load";
  if (!profile_path.empty()) {
    compile.profile = &profile;
    compile.measure_seconds = measure_seconds_;
  }
  LoadBlobSource blobs(method, cache_.get(),
                       [this](ContentHasher& key, const RegisteredBackend& backend, std::string_view name) {
                         add_backend_identity(key, backend, name);
                       });
  compile.blobs = &blobs;
  if (!graph) {
    Result<MethodGraph> read = method_graph(method);
    if (!read.is_ok()) {
      cache_->save_counts();
      return read.status();
    }
    graph = std::move(read).value();
  }
  Result<CompiledModel> compiled = compile_graph(graph->bytes, registry, compile);
  if (!compiled.is_ok()) {
    if (cache_ != nullptr) cache_->save_counts();
    return compiled.status().with_context("placing the method again");
  }
  std::string measured = keep_measured(compiled->summary.tune, profile, profile_path);
  if (!profile_warning.empty())
    measured = "read no figures: " + profile_warning + (measured.empty() ? "" : "; " + measured);
  if (cache_ != nullptr && compiled->summary.tune.measured > 0) {  // kept under what is known now
    method_key = placed_method_key(method_name, program_identity, graph, registry, options,
                                   profile.digest() + (measure_seconds_ > 0 ? " measuring" : ""));
  }

  // Placed as the program already is: the program runs as compiled, fallbacks and all.
  const std::vector<PartitionSummary>& partitions = compiled->summary.partitions;
  const bool as_compiled = partitions.size() == method.delegates.size() &&
                           std::all_of(partitions.begin(), partitions.end(),
                                       [](const PartitionSummary& p) { return p.blob_origin == "program"; });
  Result<Program> placed_program =
      as_compiled ? Result<Program>(program) : Program::from_bytes(compiled->program, program.origin());
  if (!placed_program.is_ok()) return placed_program.status();
  PlacedProgram placed{std::move(placed_program).value(), {}, {}, {}, {}, measured};
  const std::string backends = join_names(compiled->summary.backends);
  for (size_t d = 0; d < partitions.size(); ++d) {
    std::string reason;
    if (as_compiled) {
      placed.blob_origins.push_back("program");
      reason = "placed over " + backends + " as the program is";
    } else {
      placed.blob_origins.push_back(partitions[d].blob_origin);
      if (compiled->summary.backends.size() == 1) {
        reason = "the only backend present";
      } else if (partitions[d].backend == kPortableBackendName) {
        reason = "no other backend present takes its nodes";
      } else {
        reason = cost_reason(partitions[d], backends);
      }
    }
    if (!skipped.empty()) reason += "; not considered: " + join_names(skipped);
    placed.placement_reasons.push_back(std::move(reason));
  }
  if (cache_ != nullptr) {
    const Status stored = cache_->store(
        method_key, placed_entry(placed, as_compiled ? Span<const uint8_t>() : Span<const uint8_t>(compiled->program),
                                 unavailable));
    if (stored.is_ok()) placed.source = cache_->entry_path(method_key);  // removed if it does not load
    const std::string not_cached = !blobs.store_error().empty() ? blobs.store_error() : stored.message();
    if (!not_cached.empty()) {
      for (std::string& reason : placed.placement_reasons) reason += "; not cached: " + not_cached;
    }
    cache_->save_counts();
  }
  return placed;
}

}  // namespace plugrt::placement
