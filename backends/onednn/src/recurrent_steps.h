// SPDX-License-Identifier: Apache-2.0
// The plan's LSTM step, for small batches: ONNX's LSTM with the default activations (no
// clip, peepholes or sequence lengths), written here rather than run on oneDNN's LSTM
// primitive, which at a batch of 1 spends most of its time outside its products (1.4x
// ONNX Runtime's whole tagger model at one thread). Each step's recurrent product reads
// the recurrent weights once, in rows, into accumulators held in registers; the input
// projection of every step is one such pass before the recurrence; the gates are
// computed in the same pass over a step's row. Directions run on threads of their own.
// The file is built with -ffp-contract=fast (see CMakeLists.txt): the products are
// fused multiply-adds.
#ifndef PLUGRT_BACKENDS_ONEDNN_SRC_RECURRENT_STEPS_H_
#define PLUGRT_BACKENDS_ONEDNN_SRC_RECURRENT_STEPS_H_

#include <cstddef>

#include "src/onednn_delegate.h"

namespace plugrt::onednn {

/// Direction by direction, `depth` rows of `gate_width` floats ([D, depth, 4, H]) in the
/// step's layout: the columns in panels, each [depth, panel width] and dense.
void pack_lstm_weights(const float* weights, int64_t directions, int64_t depth, int64_t gate_width, float* packed);

/// The floats of scratch a kLstm step of `shape` needs: every step's gates, per direction.
size_t lstm_scratch_floats(const LstmShape& shape);

/// Runs a kLstm step. Its operands are in `step.args`, plain, in the blob's layouts:
/// DNNL_ARG_SRC_LAYER x [T, N, K]; DNNL_ARG_WEIGHTS_LAYER [D, K, 4, H] and
/// DNNL_ARG_WEIGHTS_ITER [D, H, 4, H] (oneDNN's ldigo, gates i, f, c, o), packed by
/// pack_lstm_weights; DNNL_ARG_BIAS
/// [D, 4, H]; DNNL_ARG_SRC_ITER h0 and DNNL_ARG_SRC_ITER_C c0 [D, N, H], or absent for
/// zeros; DNNL_ARG_DST_LAYER y [T, N, D x H]; DNNL_ARG_DST_ITER and DNNL_ARG_DST_ITER_C
/// the last h and c [D, N, H]; DNNL_ARG_SCRATCHPAD lstm_scratch_floats(step.lstm).
void run_lstm_step(const Step& step);

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_RECURRENT_STEPS_H_
