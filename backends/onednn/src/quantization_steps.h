// SPDX-License-Identifier: Apache-2.0
// The plan's quantization steps (QuantizeLinear, DequantizeLinear): loops over a value's
// bytes, exact to ONNX's arithmetic. Their file is built with -fno-trapping-math so that
// GCC vectorizes the quantization's clamps (see CMakeLists.txt); the results are the same.
#ifndef PLUGRT_BACKENDS_ONEDNN_SRC_QUANTIZATION_STEPS_H_
#define PLUGRT_BACKENDS_ONEDNN_SRC_QUANTIZATION_STEPS_H_

#include "src/onednn_delegate.h"

namespace plugrt::onednn {

/// Runs a step of kind kQuantizeU8, kQuantizeS8, kDequantizeU8 or kDequantizeS8.
void run_quantization_step(const Step& step);

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_QUANTIZATION_STEPS_H_
