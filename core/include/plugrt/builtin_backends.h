// SPDX-License-Identifier: Apache-2.0
// The backends built into the core: today, "portable", the universal fallback.
#ifndef PLUGRT_BUILTIN_BACKENDS_H_
#define PLUGRT_BUILTIN_BACKENDS_H_

#include <string>
#include <vector>

#include "plugrt/backend.h"
#include "plugrt/registry.h"
#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt {

/// The name of the built-in fallback backend.
inline constexpr char kPortableBackendName[] = "portable";

/// Registers the built-in backends into `registry`, through the same plugin entry
/// function and ABI table as any plugin. They rank before every plugin file, so a file
/// that also calls itself "portable" cannot replace the fallback (it is listed as shadowed).
Status register_builtin_backends(Registry& registry);

/// The built-in portable backend, for runs whose registry lacks one. Process-wide.
const RegisteredBackend& builtin_portable_backend();

/// For each node of a graph IR buffer, why the portable backend cannot run it (empty
/// when it can): what the ABI's partition answers with a yes or no, with the reason.
/// Errors: kInvalidArgument, saying what is wrong with the graph.
Result<std::vector<std::string>> portable_node_support(Span<const uint8_t> graph);

}  // namespace plugrt

#endif  // PLUGRT_BUILTIN_BACKENDS_H_
