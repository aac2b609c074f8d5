// SPDX-License-Identifier: Apache-2.0
#include "src/onednn_backend.h"

#include <string>

#include <oneapi/dnnl/dnnl.hpp>

#include "src/onednn_delegate.h"
#if PLUGRT_SDK_HAS_AOT
#include "aot/varying_delegate.h"
#endif
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
  if (kVaryingBlobFormat.check_header(context.blob, context.blob_size).is_ok()) {
    return VaryingDelegate::create(context);
  }
#endif
  return OnednnDelegate::create(context);
}

}  // namespace plugrt::onednn
