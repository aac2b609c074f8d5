// The plugin's two exported symbols: its metadata record and its entry function.
#include "plugrt/sdk/plugin_export.h"
#include "src/onednn_backend.h"

#ifndef PLUGRT_ONEDNN_VERSION
#error "the build defines PLUGRT_ONEDNN_VERSION"
#endif

PLUGRT_PLUGIN_METADATA("onednn", PLUGRT_ONEDNN_VERSION, 1, "onednn");

PLUGRT_PLUGIN_ENTRY(onednn) {
  (void)host;
  *descriptor = plugrt::onednn::plugin_descriptor(PLUGRT_ONEDNN_VERSION);
  return PLUGRT_STATUS_OK;
}
