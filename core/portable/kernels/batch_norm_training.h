// SPDX-License-Identifier: Apache-2.0
// BatchNormalization in training mode (opset 14 on, training_mode=1): normalization.cc
// hands such a node here.
#ifndef PLUGRT_PORTABLE_KERNELS_BATCH_NORM_TRAINING_H_
#define PLUGRT_PORTABLE_KERNELS_BATCH_NORM_TRAINING_H_

#include "../kernel.h"

namespace plugrt::portable {

Prepared prepare_batch_norm_training(const NodeContext& node);

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_KERNELS_BATCH_NORM_TRAINING_H_
