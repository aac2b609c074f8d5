// The oneDNN backend's ABI tables.
#ifndef PLUGRT_BACKENDS_ONEDNN_SRC_ONEDNN_BACKEND_H_
#define PLUGRT_BACKENDS_ONEDNN_SRC_ONEDNN_BACKEND_H_

#include "plugrt/plugrt_abi.h"

namespace plugrt::onednn {

inline constexpr char kBackendName[] = "onednn";

/// The plugin's descriptor: one backend, "onednn".
const plugrt_plugin_descriptor* plugin_descriptor(const char* plugin_version);

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_ONEDNN_BACKEND_H_
