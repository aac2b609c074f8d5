// SPDX-License-Identifier: Apache-2.0
// Parameters given at run time: a node whose kernel needs the values of inputs that
// are not constants (Reshape's shape, Slice's starts, ReduceSum's axes, Resize's sizes,
// TopK's k...) is prepared when it runs, once those values are known.
//
// The output shapes were fixed when the graph was compiled (declared by the model, or
// inferred from the input shapes), so the kernel prepared for a call's values must
// produce exactly them: values that give other shapes fail the call, naming the node
// and both shapes. The kernels prepared for the last kMaxPreparedValues sets of values
// are kept: a call whose values were seen before allocates nothing; a call with new
// values prepares the node again, which allocates.
#ifndef PLUGRT_PORTABLE_RUN_TIME_PARAMETERS_H_
#define PLUGRT_PORTABLE_RUN_TIME_PARAMETERS_H_

#include <cstddef>

#include "kernel.h"

namespace plugrt::portable {

/// The sets of parameter values whose prepared kernels one node keeps.
inline constexpr size_t kMaxPreparedValues = 4;
/// The most bytes of parameters one node may take at run time.
inline constexpr size_t kMaxParameterBytes = 64 * 1024;

/// Prepares `node` with `prepare`. When that fails for want of the values of inputs
/// given at run time (NodeContext::values_wanted), returns instead a kernel that
/// prepares the node when it runs; when it fails on a float16 or bfloat16 node, the
/// node on its float32 kernel if that takes it (half_widening.h). The node (in its graph IR buffer) must outlive the
/// result; its TensorInfo are copied.
Prepared prepare_node(PrepareFunction prepare, const NodeContext& node);

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_RUN_TIME_PARAMETERS_H_
