// SPDX-License-Identifier: Apache-2.0
// The plan's recurrent step (up to a batch of 16 on one thread, any on more; see
// kRecurrentStepMaxBatch in plan_builder.cc): ONNX's LSTM and GRU (either reset form)
// with their default activations (no clip, peepholes or sequence lengths), written here
// rather than run on oneDNN 2.x's RNN primitives. At a batch of 1 its LSTM spends most of
// its time outside its products (a bidirectional 128-unit tagger took 1.4x ONNX
// Runtime's whole model at one thread), and its only GRU kernel is the reference one.
// Here the input projection of every step is one pass over the weights before the
// recurrence; each step's recurrent product reads the recurrent weights once, in column
// panels laid out for it at init, into sums held in registers; the gates are computed
// row by row. Directions run on threads of their own. The file is built with
// -ffp-contract=fast (see CMakeLists.txt): the products are fused multiply-adds.
#ifndef PLUGRT_BACKENDS_ONEDNN_SRC_RECURRENT_STEPS_H_
#define PLUGRT_BACKENDS_ONEDNN_SRC_RECURRENT_STEPS_H_

#include <cstddef>

#include "src/onednn_delegate.h"

namespace plugrt::onednn {

/// The layer weights (`recurrent` false: [D, K, gates x H]) or recurrent weights (true:
/// [D, H, gates x H]) of `shape`, as the blob holds them (oneDNN's ldigo), in the step's
/// layout: each direction's columns in panels, each [rows, panel width] and dense; a
/// GRU's recurrent weights of its hidden gate (R_h, the last H columns) packed apart
/// when the reset comes before its product.
void pack_recurrent_weights(const float* weights, const RecurrentShape& shape, bool recurrent, float* packed);

/// The floats of scratch a kRecurrent step of `shape` needs.
size_t recurrent_scratch_floats(const RecurrentShape& shape);

/// Runs a kRecurrent step. Its operands are in `step.args`, plain, in the blob's layouts
/// (gate order i, f, c, o for an LSTM, z, r, h for a GRU): DNNL_ARG_SRC_LAYER x [T, N, K];
/// DNNL_ARG_WEIGHTS_LAYER and DNNL_ARG_WEIGHTS_ITER packed by pack_recurrent_weights;
/// DNNL_ARG_BIAS [D, bias_gates, H]; DNNL_ARG_SRC_ITER h0 and (LSTM) DNNL_ARG_SRC_ITER_C
/// c0 [D, N, H], or absent for zeros; DNNL_ARG_DST_LAYER y [T, N, D x H];
/// DNNL_ARG_DST_ITER the last h and (LSTM) DNNL_ARG_DST_ITER_C the last c [D, N, H];
/// DNNL_ARG_SCRATCHPAD recurrent_scratch_floats(step.recurrent).
void run_recurrent_step(const Step& step);

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_RECURRENT_STEPS_H_
