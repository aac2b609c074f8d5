// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/load_placer.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "plugrt/builtin_backends.h"
#include "plugrt/content_hash.h"
#include "plugrt/mapped_file.h"
#include "plugrt/placement/compile.h"
#include "plugrt/placement/cost_profile.h"
#include "plugrt/placement/method_graph.h"
#include "plugrt/plugrt_abi.h"

namespace plugrt::placement {

namespace {

/// Blobs from the program being placed again, then from the cache; lowered blobs go to
/// the cache.
class LoadBlobSource : public BlobSource {
 public:
  LoadBlobSource(const MethodContents& method, BlobCache* cache,
                 std::function<std::string(const PluginInfo&)> build_identity)
      : method_(method), cache_(cache), build_identity_(std::move(build_identity)) {}

  std::optional<FoundBlob> find(const RegisteredBackend& backend, std::string_view backend_name,
                                Span<const uint8_t> subgraph) override {
    const ContentHash graph = content_hash(subgraph);
    for (size_t d = 0; d < method_.delegates.size(); ++d) {
      const DelegateContents& delegate = method_.delegates[d];
      if (delegate.backend != backend_name || delegate.portable_graph.size() != subgraph.size()) continue;
      if (program_graph_hash(d) == graph) return FoundBlob{delegate.blob, nullptr, "program"};
    }
    // The portable backend's blob is the partition graph itself: nothing worth caching.
    if (cache_ == nullptr || backend_name == kPortableBackendName) return std::nullopt;
    return cache_->find(cache_key(backend, backend_name, graph));
  }

  void lowered(const RegisteredBackend& backend, std::string_view backend_name, Span<const uint8_t> subgraph,
               Span<const uint8_t> blob) override {
    if (cache_ == nullptr || backend_name == kPortableBackendName) return;
    const Status stored = cache_->store(cache_key(backend, backend_name, content_hash(subgraph)), blob);
    if (!stored.is_ok() && store_error_.empty()) store_error_ = stored.message();
  }

  /// The first failure to write an entry, if any (the load goes on without it).
  const std::string& store_error() const { return store_error_; }

 private:
  const ContentHash& program_graph_hash(size_t d) {
    if (program_hashes_.empty()) program_hashes_.resize(method_.delegates.size());
    if (!program_hashes_[d]) program_hashes_[d] = content_hash(method_.delegates[d].portable_graph);
    return *program_hashes_[d];
  }

  ContentHash cache_key(const RegisteredBackend& backend, std::string_view backend_name, const ContentHash& graph) {
    const PluginInfo& plugin = backend.plugin();
    ContentHasher key;
    key.add("plugrt blob").add(graph.high).add(graph.low).add(backend_name);
    key.add(plugin.name).add(plugin.version).add(build_identity_(plugin));
    key.add(static_cast<uint64_t>(plugin.abi_major)).add(static_cast<uint64_t>(plugin.abi_minor));
    key.add(static_cast<uint64_t>(PLUGRT_ABI_MAJOR)).add(static_cast<uint64_t>(PLUGRT_ABI_MINOR));
    key.add(static_cast<uint64_t>(0));  // compile specs: placement at load passes none
    return key.finish();
  }

  const MethodContents& method_;
  BlobCache* cache_;
  std::function<std::string(const PluginInfo&)> build_identity_;
  std::vector<std::optional<ContentHash>> program_hashes_;
  std::string store_error_;
};

bool is_allowed(const MethodOptions& options, const std::string& backend) {
  return options.allowed_backends.empty() || backend == kPortableBackendName ||
         std::find(options.allowed_backends.begin(), options.allowed_backends.end(), backend) !=
             options.allowed_backends.end();
}

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::string format_us(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", us);
  return text;
}

}  // namespace

LoadPlacer::LoadPlacer(LoadPlacerOptions options) {
  if (!options.cache_directory.empty()) {
    cache_ = std::make_unique<BlobCache>(options.cache_directory, options.cache_max_bytes);
  }
}

LoadPlacer::~LoadPlacer() = default;

std::string LoadPlacer::build_identity(const PluginInfo& plugin) {
  struct stat info {};
  if (plugin.origin.empty() || plugin.origin[0] != '/' || ::stat(plugin.origin.c_str(), &info) != 0) {
    return plugin.origin;  // built in: its name and version say it all
  }
  const std::string stat_key = std::to_string(info.st_size) + ":" + std::to_string(info.st_mtim.tv_sec) + "." +
                               std::to_string(info.st_mtim.tv_nsec) + ":" + std::to_string(info.st_ino);
  auto known = builds_.find(plugin.origin);
  if (known != builds_.end() && known->second.first == stat_key) return known->second.second;
  Result<MappedFile> file = MappedFile::open(plugin.origin);
  const std::string hash = file.is_ok() ? content_hash(file->bytes()).hex() : stat_key;
  builds_[plugin.origin] = {stat_key, hash};
  return hash;
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
  for (const DelegateContents& delegate : method.delegates) {
    if (delegate.backend == kPortableBackendName || !is_allowed(options, delegate.backend)) continue;
    const std::string& name = delegate.backend;
    if (std::find_if(skipped.begin(), skipped.end(),
                     [&](const std::string& s) { return s.rfind(name + " (", 0) == 0; }) != skipped.end()) {
      continue;
    }
    Result<RegisteredBackend> backend = registry.find_backend(name);
    if (!backend.is_ok()) {
      skipped.push_back(name + " (" + backend.status().message() + ")");
      continue;
    }
    const Availability availability = backend->is_available();
    if (!availability.available) {
      skipped.push_back(name + " (unavailable: " + availability.reason + ")");
    } else if (!backend->has_aot()) {
      return Status(Error::kNotSupported, "backend '" + name + "' (" + backend->plugin().origin +
                                              ") runs delegate '" + delegate.name +
                                              "' but has no ahead-of-time entries to place and lower with" +
                                              (backend->plugin().isolated ? " (it is isolated)" : ""));
    }
  }
  PLUGRT_ASSIGN_OR_RETURN(MethodGraph graph, method_graph(method));

  // The backends present, allowed and available now.
  CompileOptions compile;
  for (const std::string& name : default_backend_order(registry)) {
    if (name == kPortableBackendName || !is_allowed(options, name)) continue;
    Result<RegisteredBackend> backend = registry.find_backend(name);
    if (!backend.is_ok()) {
      skipped.push_back(name + " (" + backend.status().message() + ")");
      continue;
    }
    const Availability availability = backend->is_available();
    if (!availability.available) {
      skipped.push_back(name + " (unavailable: " + availability.reason + ")");
      continue;
    }
    compile.backends.push_back(name);
  }
  compile.backends.push_back(kPortableBackendName);
  compile.passes = false;  // the program's graph has been through them
  compile.producer = program.producer() + ", placed at load";

  std::string warning;
  CostProfile profile;
  if (cache_ != nullptr) {
    const std::string cpu = CostProfile::this_cpu();
    profile = CostProfile::load(CostProfile::file_for(default_cache_directory(), cpu), cpu, &warning);
    if (profile.size() > 0) compile.profile = &profile;
  }
  LoadBlobSource blobs(method, cache_.get(), [this](const PluginInfo& plugin) { return build_identity(plugin); });
  compile.blobs = &blobs;
  Result<CompiledModel> compiled = compile_graph(graph.bytes, registry, compile);
  if (cache_ != nullptr) cache_->save_counts();
  if (!compiled.is_ok()) return compiled.status().with_context("placing the method again");

  PLUGRT_ASSIGN_OR_RETURN(Program placed_program, Program::from_bytes(compiled->program, program.origin()));
  PlacedProgram placed{std::move(placed_program), {}, {}};
  const std::string considered = join(compiled->summary.backends);
  for (const PartitionSummary& partition : compiled->summary.partitions) {
    placed.blob_origins.push_back(partition.blob_origin);
    std::string reason =
        partition.backend == kPortableBackendName && compiled->summary.backends.size() > 1
            ? "no other backend present takes its nodes"
            : "lowest estimated cost over " + considered + ": " + format_us(partition.estimated_us) + " us";
    if (!skipped.empty()) reason += "; not considered: " + join(skipped);
    if (partition.blob_origin == "lowered" && !blobs.store_error().empty()) {
      reason += "; not cached: " + blobs.store_error();
    }
    placed.placement_reasons.push_back(std::move(reason));
  }
  return placed;
}

}  // namespace plugrt::placement
