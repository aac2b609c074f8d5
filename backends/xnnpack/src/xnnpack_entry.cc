// The plugin's two exported symbols: its metadata record and its entry function.
#include "plugrt/sdk/plugin_export.h"
#include "src/xnnpack_backend.h"

#ifndef PLUGRT_XNNPACK_VERSION
#error "the build defines PLUGRT_XNNPACK_VERSION"
#endif

PLUGRT_PLUGIN_METADATA("xnnpack", PLUGRT_XNNPACK_VERSION, 1, "xnnpack");

PLUGRT_PLUGIN_ENTRY(xnnpack) {
  (void)host;
  *descriptor = plugrt::xnnpack::plugin_descriptor(PLUGRT_XNNPACK_VERSION);
  return PLUGRT_STATUS_OK;
}
