# SPDX-License-Identifier: Apache-2.0
# Writes, into the directory given, a model for the scale_shift example: y = x * scale +
# shift, x of shape [n, 4] with n an ONNX symbolic dimension, the constants named; and
# x.npy, y.npy at n = 5.
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
scale = np.array([0.5, -1.0, 2.0, 3.0], dtype=np.float32)
shift = np.array([1.0, 0.25, -2.0, 0.0], dtype=np.float32)
graph = helper.make_graph(
    [helper.make_node("Mul", ["x", "scale"], ["scaled"]), helper.make_node("Add", ["scaled", "shift"], ["y"])],
    "scale_shift",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])],
    [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(shift, "shift")])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/scale_shift.onnx")
x = np.arange(20, dtype=np.float32).reshape(5, 4) - 7
np.save(f"{out}/x.npy", x)
np.save(f"{out}/y.npy", x * scale + shift)
