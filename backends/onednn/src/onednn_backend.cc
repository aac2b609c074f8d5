// SPDX-License-Identifier: Apache-2.0
#include "src/onednn_backend.h"

#include <string>

#include <oneapi/dnnl/dnnl.hpp>

#include "plugrt/sdk/per_shape.h"
#include "src/blob_format.h"
#include "src/onednn_delegate.h"
#include "src/threading.h"

namespace plugrt::onednn {

sdk::Availability OnednnBackend::is_available(sdk::Host) {
  keep_onednn_loaded();
  try {
    if (dnnl::engine::get_count(dnnl::engine::kind::cpu) == 0) {
      return sdk::Availability::no("this oneDNN build has no CPU engine");
    }
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return sdk::Availability::yes();
  } catch (const dnnl::error& e) {
    return sdk::Availability::no(std::string("oneDNN could not create a CPU engine: ") + e.what());
  }
}

sdk::Expected<std::unique_ptr<sdk::Delegate>> OnednnBackend::init(const sdk::InitContext& context) {
#if PLUGRT_SDK_HAS_AOT
  // Lowered per shape: needs preprocess, so an on-device build refuses these blobs as
  // incompatible (OnednnDelegate's header check), and the host runs the fallback.
  if (sdk::PerShapeDelegate::is_blob(kVaryingBlobFormat, context)) {
    return sdk::PerShapeDelegate::create(*this, kVaryingBlobFormat, context);
  }
#endif
  return OnednnDelegate::create(context);
}

}  // namespace plugrt::onednn
