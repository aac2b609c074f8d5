// The ahead-of-time compiler: graph IR -> partitions over the chosen backends ->
// each backend's blob (its `preprocess`, through the ABI) plus the portable fallback
// of the same subgraph -> a program file (.prt).
#ifndef PLUGRT_TOOLS_COMPILER_COMPILER_H_
#define PLUGRT_TOOLS_COMPILER_COMPILER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "onnx_importer.h"
#include "plugrt/registry.h"
#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt::compiler {

struct CompileOptions {
  /// Backends in priority order; "portable" takes whatever none of them takes, and may
  /// be named alone to put everything on it. Empty: default_backend_order().
  std::vector<std::string> backends;
  /// Write each partition's portable fallback blob (off: smaller file, no fallback).
  bool fallback = true;
  /// Recorded in the file.
  std::string producer = "plugrt compile";
};

struct PartitionSummary {
  std::string name;     ///< the delegate's label, "<backend>:<index>"
  std::string backend;
  std::map<std::string, size_t> op_counts;  ///< op type -> nodes
  size_t num_nodes = 0;
  uint64_t blob_size = 0;
  uint64_t fallback_size = 0;  ///< 0 when the partition is portable or fallback is off
};

struct CompileSummary {
  std::vector<std::string> backends;  ///< the priority order used, "portable" last
  size_t num_nodes = 0;
  std::vector<PartitionSummary> partitions;
  /// Op types (with node counts) that no chosen backend other than portable took.
  std::map<std::string, size_t> untaken_ops;
};

struct CompiledModel {
  std::vector<uint8_t> program;  ///< the .prt file's bytes
  CompileSummary summary;
};

/// Every backend the registry (and its providers) can supply that has ahead-of-time
/// entries, in the default priority: xnnpack, onednn, then the others by name, then
/// portable.
std::vector<std::string> default_backend_order(Registry& registry);

/// Partitions and lowers one graph IR model. Deterministic: the same graph and
/// backends give the same bytes. Errors: kNotFound (a named backend does not exist),
/// kNotSupported (a backend has no ahead-of-time entries; a node no backend takes,
/// named with its op type and the portable backend's reason), the backends' own errors
/// from partition or preprocess.
Result<CompiledModel> compile_graph(Span<const uint8_t> graph, Registry& registry, const CompileOptions& options);

/// import_onnx_file() then compile_graph().
Result<CompiledModel> compile_onnx_file(const std::string& path, Registry& registry, const CompileOptions& options,
                                        const ImportOptions& import_options = {});

}  // namespace plugrt::compiler

#endif  // PLUGRT_TOOLS_COMPILER_COMPILER_H_
