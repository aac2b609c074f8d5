// The XNNPACK backend's ahead-of-time entries (left out when PLUGRT_XNNPACK_AOT is off).
#ifndef PLUGRT_BACKENDS_XNNPACK_AOT_XNNPACK_AOT_H_
#define PLUGRT_BACKENDS_XNNPACK_AOT_XNNPACK_AOT_H_

#include "plugrt/plugrt_abi.h"

namespace plugrt::xnnpack {

/// Takes each node that lowers to XNNPACK (aot/lowering.h); the others stay untaken.
plugrt_status partition(void* backend_context, const plugrt_host_services* host, plugrt_partition_args* args);
/// Lowers one partition to the blob that init reads (schema/xnnpack_blob.fbs).
plugrt_status preprocess(void* backend_context, const plugrt_host_services* host, plugrt_preprocess_args* args);

}  // namespace plugrt::xnnpack

#endif  // PLUGRT_BACKENDS_XNNPACK_AOT_XNNPACK_AOT_H_
