// SPDX-License-Identifier: Apache-2.0
// The portable backend's entry point and metadata, made by the SDK's export macro.
// Compiled twice: with PLUGRT_STATIC_PLUGIN into the core (as plugrt_static_entry_portable),
// and without it into libplugrt_portable.so.
#include "plugrt/sdk/backend.h"
#include "portable_backend.h"

#ifndef PLUGRT_PORTABLE_VERSION
#error "the build defines PLUGRT_PORTABLE_VERSION"
#endif

PLUGRT_SDK_EXPORT_PLUGIN(portable, PLUGRT_PORTABLE_VERSION, plugrt::portable::PortableBackend);
