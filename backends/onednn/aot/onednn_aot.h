// The oneDNN backend's ahead-of-time entries (left out when PLUGRT_ONEDNN_AOT is off).
#ifndef PLUGRT_BACKENDS_ONEDNN_AOT_ONEDNN_AOT_H_
#define PLUGRT_BACKENDS_ONEDNN_AOT_ONEDNN_AOT_H_

#include "plugrt/plugrt_abi.h"

namespace plugrt::onednn {

/// Takes each node that lowers to oneDNN on its own (aot/lowering.h); the others stay untaken.
plugrt_status partition(void* backend_context, const plugrt_host_services* host, plugrt_partition_args* args);
/// Lowers one partition, with its fusions, to the blob that init reads (schema/onednn_blob.fbs).
plugrt_status preprocess(void* backend_context, const plugrt_host_services* host, plugrt_preprocess_args* args);

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_AOT_ONEDNN_AOT_H_
