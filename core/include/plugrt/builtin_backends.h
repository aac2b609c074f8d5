// The backends built into the core: today, "portable", the universal fallback.
#ifndef PLUGRT_BUILTIN_BACKENDS_H_
#define PLUGRT_BUILTIN_BACKENDS_H_

#include <vector>

#include "plugrt/backend.h"
#include "plugrt/registry.h"
#include "plugrt/status.h"

namespace plugrt {

/// The name of the built-in fallback backend.
inline constexpr char kPortableBackendName[] = "portable";

/// Registers the built-in backends into `registry`, through the same plugin entry
/// function and ABI table as any plugin. They rank before every plugin file, so a file
/// that also calls itself "portable" cannot replace the fallback (it is listed as shadowed).
Status register_builtin_backends(Registry& registry);

/// The built-in portable backend, for runs whose registry lacks one. Process-wide.
const Backend& builtin_portable_backend();

}  // namespace plugrt

#endif  // PLUGRT_BUILTIN_BACKENDS_H_
