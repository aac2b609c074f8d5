// SPDX-License-Identifier: Apache-2.0
// A program method's whole graph, read back from the program: the portable graph IR of
// each delegate (the portable blob itself, or a delegate's fallback), joined through the
// method's values. It is what placement at load time places again.
#ifndef PLUGRT_PLACEMENT_METHOD_GRAPH_H_
#define PLUGRT_PLACEMENT_METHOD_GRAPH_H_

#include <cstdint>
#include <vector>

#include "plugrt/program.h"
#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt::placement {

struct MethodGraph {
  /// The graph IR: a portable delegate's blob in the program itself when that one
  /// delegate is the whole method (no copy), else `storage`.
  Span<const uint8_t> bytes;
  std::vector<uint8_t> storage;
};

/// Errors: kNotSupported naming the delegate that keeps no portable graph (compiled
/// without fallbacks); kInvalidProgram when a delegate's portable graph is malformed or
/// does not match its instruction.
Result<MethodGraph> method_graph(const MethodContents& method);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_METHOD_GRAPH_H_
