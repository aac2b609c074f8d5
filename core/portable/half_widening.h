// SPDX-License-Identifier: Apache-2.0
// float16 and bfloat16 nodes on float32 kernels. A node whose kernel takes float32 but
// not its half-precision dtype is prepared as the same node in float32, every float16
// or bfloat16 input and output widened, and runs as that kernel between conversions:
// each half input widened into scratch (constants once, when prepared), each half output
// computed in float32 there and rounded to its type, to nearest even. ONNX lets these
// ops compute in a wider type; the results are float32's, rounded once.
#ifndef PLUGRT_PORTABLE_HALF_WIDENING_H_
#define PLUGRT_PORTABLE_HALF_WIDENING_H_

#include "kernel.h"

namespace plugrt::portable {

/// The node prepared by `prepare` in float32 behind conversions, when it has float16 or
/// bfloat16 inputs or outputs and its float32 form prepares without values given at run
/// time; otherwise a null kernel (the caller keeps its own reason).
Prepared prepare_widened(PrepareFunction prepare, const NodeContext& node);

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_HALF_WIDENING_H_
