// SPDX-License-Identifier: Apache-2.0
#include "src/xnnpack_backend.h"

#include <string>

#include <xnnpack.h>

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
  return XnnpackDelegate::create(context);
}

}  // namespace plugrt::xnnpack
