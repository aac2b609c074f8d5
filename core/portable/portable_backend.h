// The portable backend's ABI tables: the reference interpreter of graph IR blobs that
// runs whatever no other backend can. The same tables serve the copy built into the
// core and the copy built as a plugin (portable_entry.cc).
#ifndef PLUGRT_PORTABLE_PORTABLE_BACKEND_H_
#define PLUGRT_PORTABLE_PORTABLE_BACKEND_H_

#include "plugrt/plugrt_abi.h"

namespace plugrt::portable {

inline constexpr char kBackendName[] = "portable";

/// The plugin descriptor listing the one "portable" backend. Static storage.
const plugrt_plugin_descriptor* plugin_descriptor(const char* plugin_version);

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_PORTABLE_BACKEND_H_
