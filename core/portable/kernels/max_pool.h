// SPDX-License-Identifier: Apache-2.0
// MaxPool beyond pooling.cc's float32 kernel: its Indices output, and other dtypes.
#ifndef PLUGRT_PORTABLE_KERNELS_MAX_POOL_H_
#define PLUGRT_PORTABLE_KERNELS_MAX_POOL_H_

#include "../kernel.h"
#include "spatial.h"

namespace plugrt::portable {

/// The kernel of a MaxPool node whose window geometry pooling.cc has read into `g`.
Prepared prepare_max_pool_general(const NodeContext& node, const SpatialGeometry& g);

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_KERNELS_MAX_POOL_H_
