// SPDX-License-Identifier: Apache-2.0
// Which nodes of a graph one backend takes, and whether a compiled program runs
// entirely on it: what "through that backend only" means for the conformance runner
// (RunOptions::only_backend) and for plugrt-contract-test's --model and --conformance.
#ifndef PLUGRT_TOOLS_CONFORMANCE_BACKEND_COVERAGE_H_
#define PLUGRT_TOOLS_CONFORMANCE_BACKEND_COVERAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compiler.h"
#include "plugrt/registry.h"
#include "plugrt/span.h"

namespace plugrt::conformance {

struct Coverage {
  std::vector<std::string> taken;    ///< "node 'relu_0' (Relu)" for each node the backend takes, in order
  std::vector<std::string> refused;  ///< the same for the nodes it does not take
  /// "took 2 of 3 nodes; not: node 'g' (Gather), Shape" (the first 8 refused named).
  std::string describe() const;
};

/// Asks `backend`'s partition about every node of the graph IR buffer `graph` (as the
/// importer wrote it). Errors: kNotFound for a backend the registry lacks, kInvalidArgument
/// for a buffer that is not a graph IR, and what partition returns.
Result<Coverage> partition_coverage(Registry& registry, const std::string& backend, Span<const uint8_t> graph,
                                    Span<const plugrt_option> compile_specs = {});

/// Empty when every partition of `summary` is on `backend`; otherwise which ops the
/// program runs elsewhere ("Identity x1 on portable").
std::string placed_elsewhere(const compiler::CompileSummary& summary, const std::string& backend);

}  // namespace plugrt::conformance

#endif  // PLUGRT_TOOLS_CONFORMANCE_BACKEND_COVERAGE_H_
