#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Times placement on large graphs: `plugrt compile` and a load with `--placement auto`.

Three shapes of float32 graph [1, 16], each of N nodes (written with python3-onnx):
  chain      Relu after Relu;
  branching  residual blocks: y = Add(Relu(x), Sigmoid(x)), then the next block on y;
  mixed      blocks whose middle op only the portable backend takes (Sign between Relus), so
             the placer weighs splitting the graph against keeping it on portable.
For each it prints the compile time (whole process), the load time of the compiled program
with placement auto and an empty cache (`plugrt run --json`'s load_ms) and the partitions.
Both run with `--measure-seconds 0`: measuring contested nodes is a cost paid once per
machine and signature, bounded by its own budget (bench/slow_plugin_placement.py times it),
and would otherwise land on whichever size runs first.

    /usr/bin/python3 bench/placement_scaling.py [--sizes 1000,10000,100000] [--build-dir build]
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import onnx
from onnx import TensorProto, helper


def write_graph(shape, n, path):
    nodes, value = [], "x"
    i = 0
    while len(nodes) < n:
        if shape == "chain":
            nodes.append(helper.make_node("Relu", [value], [f"v{i}"]))
            value = f"v{i}"
        elif shape == "branching":
            a, b, y = f"a{i}", f"b{i}", f"y{i}"
            nodes += [helper.make_node("Relu", [value], [a]), helper.make_node("Sigmoid", [value], [b]),
                      helper.make_node("Add", [a, b], [y])]
            value = y
        else:  # mixed
            a, b, y = f"a{i}", f"b{i}", f"y{i}"
            nodes += [helper.make_node("Relu", [value], [a]), helper.make_node("Sign", [a], [b]),
                      helper.make_node("Relu", [b], [y])]
            value = y
        i += 1
    graph = helper.make_graph(nodes, shape, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info(value, TensorProto.FLOAT, [1, 16])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return len(nodes)


def plugrt_command(command):
    ran = subprocess.run(command, capture_output=True, text=True)
    if ran.returncode != 0:
        raise SystemExit(f"{' '.join(command[:2])} failed ({ran.returncode}): {ran.stderr.strip()[-2000:]}")
    return ran


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--shapes", default="chain,branching,mixed")
    parser.add_argument("--build-dir", default="build")
    args = parser.parse_args()
    plugrt = os.path.join(args.build_dir, "bin", "plugrt")
    print("graph | nodes | compile s | load with --placement auto, ms | partitions")
    with tempfile.TemporaryDirectory(prefix="plugrt-placement-scaling-") as work:
        for shape in args.shapes.split(","):
            for size in (int(s) for s in args.sizes.split(",")):
                model = os.path.join(work, f"{shape}{size}.onnx")
                nodes = write_graph(shape, size, model)
                program = os.path.join(work, f"{shape}{size}.prt")
                start = time.monotonic()
                plugrt_command([plugrt, "compile", model, "-o", program, "--json", "--measure-seconds", "0"])
                compile_s = time.monotonic() - start
                ran = plugrt_command([plugrt, "run", program, "--json", "--no-cache", "--measure-seconds", "0"])
                result = json.loads(ran.stdout)
                print(f"{shape} | {nodes} | {compile_s:.2f} | {result['load_ms']:.0f} | {len(result['placement'])}",
                      flush=True)
                os.remove(model)
                os.remove(program)


if __name__ == "__main__":
    main()
