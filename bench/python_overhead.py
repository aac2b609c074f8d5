#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Python's cost per call over the C API: Session.run on a one-node model (Relu over 16
floats, on portable), median of 7 repeats of 20,000 calls; compare with BM_CApiRun of
build/bench/plugrt_api_overhead_bench in the same run. With a program, also its latency
from Python against `plugrt bench` on the same program, inputs, threads and iterations,
alternating the two three times (medians and p90 of each, and their ratio).

    PYTHONPATH=build/python bench/python_overhead.py [PROGRAM.prt [--threads N]]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
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


def python_latencies(program, threads, iterations, warmup=5):
    session = plugrt.Runtime(num_threads=threads).open(program)
    inputs = [np.random.default_rng(0).uniform(-1, 1, info.shape).astype(info.dtype) for info in session.inputs]
    for _ in range(warmup):
        session.run(inputs)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        session.run(inputs)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def compare_with_command(program, threads, iterations=200):
    command = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin", "plugrt")
    python_ms, command_ms = [], []
    for _ in range(3):
        python_ms += python_latencies(program, threads, iterations)
        report = subprocess.run([command, "bench", program, "--threads", str(threads), "--iterations",
                                 str(iterations), "--json"], check=True, capture_output=True, text=True)
        command_ms.append(json.loads(report.stdout)["median_ms"])
    python_median = statistics.median(python_ms)
    command_median = statistics.median(command_ms)
    print(f"{os.path.basename(program)}, {threads} threads: Python median {python_median:.3f} ms "
          f"(p90 {percentile(python_ms, 0.9):.3f}), plugrt bench median {command_median:.3f} ms "
          f"(medians of 3 runs: {', '.join(f'{m:.3f}' for m in command_ms)}); "
          f"ratio {python_median / command_median:.3f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("program", nargs="?")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
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
    if args.program:
        compare_with_command(args.program, args.threads)


if __name__ == "__main__":
    main()
