// SPDX-License-Identifier: Apache-2.0
#include "src/xnnpack_backend.h"

#include <string>

#include <xnnpack.h>

#include "plugrt/sdk/per_shape.h"
#include "src/blob_format.h"
#include "src/threadpool.h"
#include "src/xnnpack_delegate.h"

namespace plugrt::xnnpack {

/// xnn_initialize only probes the CPU (once per process) and allocates no lasting
/// resource, so it is cheap enough to ask here.
sdk::Availability XnnpackBackend::is_available(sdk::Host) {
  keep_cpuinfo_loaded();
  const xnn_status status = xnn_initialize(nullptr);
  if (status == xnn_status_success) return sdk::Availability::yes();
  return sdk::Availability::no(
      "xnn_initialize failed with status " + std::to_string(static_cast<int>(status)) +
      (status == xnn_status_unsupported_hardware ? " (this CPU lacks what XNNPACK's kernels need)" : ""));
}

sdk::Expected<std::unique_ptr<sdk::Delegate>> XnnpackBackend::init(const sdk::InitContext& context) {
#if PLUGRT_SDK_HAS_AOT
  // Lowered per shape: needs preprocess, so an on-device build refuses these blobs as
  // incompatible (XnnpackDelegate's header check), and the host runs the fallback.
  if (sdk::PerShapeDelegate::is_blob(kVaryingBlobFormat, context)) {
    return sdk::PerShapeDelegate::create(*this, kVaryingBlobFormat, context);
  }
#endif
  return XnnpackDelegate::create(context);
}

}  // namespace plugrt::xnnpack
