#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Python's cost per call over the C API: Session.run on a one-node model (Relu over 16
floats, on portable), median of 7 repeats of 20,000 calls; compare with BM_CApiRun of
build/bench/plugrt_api_overhead_bench in the same run.

    PYTHONPATH=build/python bench/python_overhead.py
"""
import os
import statistics
import tempfile
import timeit

import numpy as np
import onnx
from onnx import TensorProto, helper

import plugrt


def one_node_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def main():
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "relu.onnx")
        one_node_model(path)
        session = plugrt.Runtime(placement="as-compiled", num_threads=1, backends="portable").open(path)
    x = np.full(16, -0.5, dtype=np.float32)
    calls = 20000
    times = timeit.repeat(lambda: session.run([x]), number=calls, repeat=7)
    per_call = [t / calls * 1e6 for t in times]
    print(f"Session.run, one-node model: median {statistics.median(per_call):.2f} us, "
          f"min {min(per_call):.2f} us per call")


if __name__ == "__main__":
    main()
