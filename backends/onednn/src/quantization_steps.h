// SPDX-License-Identifier: Apache-2.0
// The plan's quantization steps (QuantizeLinear, DequantizeLinear, and a residual Add of
// dequantized values): loops over a value's bytes, exact to ONNX's arithmetic. Their
// file is built with -fno-trapping-math so that GCC vectorizes the quantization's
// clamps, and -ffp-contract=off so that a product and a sum stay two roundings (see
// CMakeLists.txt); the results are the same.
#ifndef PLUGRT_BACKENDS_ONEDNN_SRC_QUANTIZATION_STEPS_H_
#define PLUGRT_BACKENDS_ONEDNN_SRC_QUANTIZATION_STEPS_H_

#include "src/onednn_delegate.h"

namespace plugrt::onednn {

/// Runs a step of kind kQuantizeU8, kQuantizeS8, kDequantizeU8, kDequantizeS8 or
/// kAddDequantized.
void run_quantization_step(const Step& step);

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_QUANTIZATION_STEPS_H_
