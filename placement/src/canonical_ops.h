// SPDX-License-Identifier: Apache-2.0
// The graph pass that writes decomposed patterns as the single ONNX op naming them.
#ifndef PLUGRT_PLACEMENT_SRC_CANONICAL_OPS_H_
#define PLUGRT_PLACEMENT_SRC_CANONICAL_OPS_H_

#include <cstddef>

#include "editable_graph.h"

namespace plugrt::placement {

/// LayerNormalization from ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div (+ Mul, Add
/// by constants) from opset 17; Gelu from Div, Erf, Add, Mul, Mul from opset 20;
/// HardSwish from x * HardSigmoid(x) from opset 14. Returns the patterns replaced.
size_t name_decomposed_ops(EditableGraph& graph);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_SRC_CANONICAL_OPS_H_
