// SPDX-License-Identifier: Apache-2.0
// The plugin's two exported symbols, its metadata record and its entry function, made by
// the SDK's export macro.
#include "plugrt/sdk/backend.h"
#include "src/xnnpack_backend.h"

#ifndef PLUGRT_XNNPACK_VERSION
#error "the build defines PLUGRT_XNNPACK_VERSION"
#endif

PLUGRT_SDK_EXPORT_PLUGIN(xnnpack, PLUGRT_XNNPACK_VERSION, plugrt::xnnpack::XnnpackBackend);
