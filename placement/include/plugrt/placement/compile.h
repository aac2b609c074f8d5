// SPDX-License-Identifier: Apache-2.0
// Compiling a graph into a program: graph IR -> graph passes -> placement over the chosen
// backends -> partitions -> each backend's blob (its `preprocess`, through the ABI, or
// one a BlobSource already has) plus the portable fallback of the same subgraph -> a
// program file (.prt). `plugrt compile` runs it ahead of time; loading with placement
// `auto` (load_placer.h) runs it again on the device.
#ifndef PLUGRT_PLACEMENT_COMPILE_H_
#define PLUGRT_PLACEMENT_COMPILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <memory>
#include <optional>

#include "plugrt/backend_options.h"
#include "plugrt/placement/cost_profile.h"
#include "plugrt/placement/tuner.h"
#include "plugrt/registry.h"
#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt::placement {

/// How nodes are given to backends.
enum class PlacementRule {
  /// The cost-based placer: the lowest estimated whole-graph latency (the default).
  kCost,
  /// Each node to the first backend in `backends` order that takes it (for comparisons,
  /// and to force a split between backends).
  kFirstTaker,
};

/// A blob that a BlobSource supplies: bytes kept alive by `owner` until compile_graph returns.
struct FoundBlob {
  Span<const uint8_t> bytes;
  std::shared_ptr<const void> owner;
  /// Where it came from, for reports ("program", "cache").
  std::string origin;
  /// It names the partition graph's constants (PLUGRT_BLOB_NAMES_CONSTANTS), so the
  /// program must keep that graph.
  bool names_constants = false;
};

/// Supplies partitions' blobs that were lowered before (a program's own blobs, a blob
/// cache), so that compile_graph calls `preprocess` only for the others.
class BlobSource {
 public:
  virtual ~BlobSource() = default;
  /// The blob `backend` lowered from exactly this partition graph, if the source has it.
  virtual std::optional<FoundBlob> find(const RegisteredBackend& backend, std::string_view backend_name,
                                        Span<const uint8_t> subgraph) = 0;
  /// A blob that `backend` has just lowered from `subgraph` (`names_constants`: it names
  /// the graph's constants, so it is of use only with that graph kept beside it).
  virtual void lowered(const RegisteredBackend& backend, std::string_view backend_name, Span<const uint8_t> subgraph,
                       Span<const uint8_t> blob, bool names_constants) = 0;
};

struct CompileOptions {
  /// The backends that may be used; "portable" takes whatever none of them takes, and may
  /// be named alone to put everything on it. Empty: default_backend_order(). The order
  /// breaks ties between equal costs and is the priority of PlacementRule::kFirstTaker.
  std::vector<std::string> backends;
  PlacementRule placement = PlacementRule::kCost;
  /// Run the graph passes (placement/passes.h) before placement.
  bool passes = true;
  /// Measured node costs, used instead of the estimate where they have a figure. Null:
  /// the estimate only (placement/README.md).
  CostProfile* profile = nullptr;
  /// First measure, into *profile, what it lacks for this graph (placement/tuner.h).
  bool tune = false;
  TuneOptions tune_options;
  /// Without `tune`: measure, into *profile, only the figures placement lacks to choose
  /// between backends (nodes that two or more backends besides portable take), in at most
  /// this many seconds, with tune_options' threads and progress and at most 3 timed runs.
  /// 0: never; the figures still missing then follow the policy for unmeasured backends
  /// (placement/README.md, "Backends nobody measured").
  double measure_seconds = 0;
  /// Write each partition's portable fallback blob (off: no fallback). With it, backends
  /// are offered the partition's constants by name, so each weight is stored once, in
  /// the fallback; without it, each blob holds its own copy.
  bool fallback = true;
  /// Recorded in the file.
  std::string producer = "plugrt compile";
  /// Asked for each partition's blob before its backend lowers it. Null: lower them all.
  BlobSource* blobs = nullptr;
  /// Compile specs, each for the backend it names (`--backend-option NAME.KEY=VALUE`):
  /// passed to that backend's partition and preprocess and stored with each of its
  /// delegates, for its init. Null: none. An option naming a backend not considered is
  /// kNotFound.
  const BackendOptions* compile_specs = nullptr;
};

struct PartitionSummary {
  std::string name;  ///< the delegate's label, "<backend>:<index>"
  std::string backend;
  std::map<std::string, size_t> op_counts;  ///< op type -> nodes
  size_t num_nodes = 0;
  uint64_t blob_size = 0;
  uint64_t fallback_size = 0;  ///< 0 when the partition is portable or fallback is off
  double estimated_us = 0;     ///< its nodes' costs (measured, else estimated) plus one delegate call
  /// Its nodes' measured costs when the profile has a figure for every one; else < 0.
  double measured_us = -1;
  /// Nodes it took that other backends competed for with no figure for this backend: its
  /// choice there was estimated, not measured.
  size_t unmeasured_choices = 0;
  /// "lowered" (its backend's preprocess ran), or the BlobSource's origin.
  std::string blob_origin = "lowered";
  /// The blob names the fallback graph's constants instead of holding copies.
  bool blob_names_constants = false;
};

struct CompileSummary {
  std::vector<std::string> backends;           ///< the backends considered, "portable" last
  std::string placement;                       ///< "cost" or "first"
  size_t num_nodes = 0;                        ///< after the graph passes
  size_t num_nodes_imported = 0;               ///< before them
  std::map<std::string, size_t> pass_changes;  ///< pass name -> nodes it changed or removed
  double estimated_us = 0;                     ///< the placer's estimate of the whole graph
  size_t measured_nodes = 0;                   ///< nodes whose cost came from the profile
  TuneReport tune;                             ///< what --tune or measure_seconds measured
  std::vector<PartitionSummary> partitions;
  /// Op types (with node counts) that no chosen backend other than portable took.
  std::map<std::string, size_t> untaken_ops;
  /// What the import changed that the user should know ("float16 computed in float32 ...").
  std::vector<std::string> notes;
};

struct CompiledModel {
  std::vector<uint8_t> program;  ///< the .prt file's bytes
  CompileSummary summary;
};

/// Every backend the registry (and its providers, whose plugins this loads) can supply
/// that has ahead-of-time entries, by name, then portable. No backend is preferred by
/// name: the placer decides.
std::vector<std::string> default_backend_order(Registry& registry);

/// Partitions and lowers one graph IR model. Deterministic: the same graph and
/// backends give the same bytes. Errors: kNotFound (a named backend does not exist),
/// kNotSupported (a backend has no ahead-of-time entries; a node no backend takes,
/// named with its op type and the portable backend's reason), the backends' own errors
/// from partition or preprocess.
Result<CompiledModel> compile_graph(Span<const uint8_t> graph, Registry& registry, const CompileOptions& options);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_COMPILE_H_
