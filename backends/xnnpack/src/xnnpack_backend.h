// The XNNPACK backend's ABI tables.
#ifndef PLUGRT_BACKENDS_XNNPACK_SRC_XNNPACK_BACKEND_H_
#define PLUGRT_BACKENDS_XNNPACK_SRC_XNNPACK_BACKEND_H_

#include "plugrt/plugrt_abi.h"

namespace plugrt::xnnpack {

inline constexpr char kBackendName[] = "xnnpack";

/// The plugin's descriptor: one backend, "xnnpack".
const plugrt_plugin_descriptor* plugin_descriptor(const char* plugin_version);

}  // namespace plugrt::xnnpack

#endif  // PLUGRT_BACKENDS_XNNPACK_SRC_XNNPACK_BACKEND_H_
