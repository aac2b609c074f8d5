// SPDX-License-Identifier: Apache-2.0
// The plugin's two exported symbols, its metadata record and its entry function, made by
// the SDK's export macro.
#include "plugrt/sdk/backend.h"
#include "src/onednn_backend.h"

#ifndef PLUGRT_ONEDNN_VERSION
#error "the build defines PLUGRT_ONEDNN_VERSION"
#endif

PLUGRT_SDK_EXPORT_PLUGIN(onednn, PLUGRT_ONEDNN_VERSION, plugrt::onednn::OnednnBackend);
