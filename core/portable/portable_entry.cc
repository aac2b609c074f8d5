// The portable backend's entry point. Compiled twice: with PLUGRT_STATIC_PLUGIN into the
// core (as plugrt_static_entry_portable), and without it into libplugrt_portable.so.
#include "plugrt/sdk/plugin_export.h"
#include "portable_backend.h"

#ifndef PLUGRT_PORTABLE_VERSION
#error "the build defines PLUGRT_PORTABLE_VERSION"
#endif

PLUGRT_PLUGIN_METADATA("portable", PLUGRT_PORTABLE_VERSION, 1, "portable");

PLUGRT_PLUGIN_ENTRY(portable) {
  (void)host;
  *descriptor = plugrt::portable::plugin_descriptor(PLUGRT_PORTABLE_VERSION);
  return PLUGRT_STATUS_OK;
}
