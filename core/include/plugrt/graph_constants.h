// SPDX-License-Identifier: Apache-2.0
// The constants of a graph IR buffer as the ABI lends them to a backend by name
// (plugrt_named_constant, ABI 1.4): how a blob that names its partition's constants
// finds the weights stored once, in the partition's portable graph.
#ifndef PLUGRT_GRAPH_CONSTANTS_H_
#define PLUGRT_GRAPH_CONSTANTS_H_

#include <vector>

#include "plugrt/plugrt_abi.h"
#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt {

/// Every constant of the graph's top level (values with data), in value order, each a
/// view of the buffer under its value name. Errors: kInvalidProgram when the buffer is
/// not a verifiable graph IR, or a constant has no name or shares its name with another
/// (such a graph cannot lend its constants by name).
Result<std::vector<plugrt_named_constant>> graph_constants(Span<const uint8_t> graph);

}  // namespace plugrt

#endif  // PLUGRT_GRAPH_CONSTANTS_H_
