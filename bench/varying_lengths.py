#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Times a transformer encoder layer compiled once for a range of sequence lengths.

Exports models/export_models.py's EncoderLayer (d_model 256, 4 heads, feed-forward 1024,
random weights) twice: with its sequence length symbolic ("seq", compiled with
`--dim seq=1..MAX`) and with a static length MAX. Both are compiled with no other flag
(the default placement over every backend found) and run as compiled. In interleaved
rounds, `plugrt bench --json` times the varying program at each length asked for and the
static one at MAX. Each figure is the median over the rounds; ratios are printed against
the varying program at MAX and against the static program.

    /usr/bin/python3 bench/varying_lengths.py [--lengths 1,16,64,256] [--max 256]
        [--rounds 5] [--threads 1] [--build-dir build] [--work-dir build/zoo]
"""
import argparse
import os
import statistics
import subprocess
import sys

import numpy as np


def run_json(command):
    import json
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(" ".join(command) + ":\n" + result.stderr)
    return json.loads(result.stdout)


def export(work, max_length):
    """The varying and static encoder models in WORK; their paths."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
    import export_models

    class VaryingEncoderLayer(export_models.EncoderLayer):
        onnx_dynamic_axes = {"input": {1: "seq"}, "output": {1: "seq"}}

    paths = {}
    for name, make in (("encoder_layer_varying", VaryingEncoderLayer), ("encoder_layer_static", export_models.EncoderLayer)):
        path = os.path.join(work, f"{name}_{max_length}.onnx")
        if not os.path.exists(path):
            export_models.export_model(f"{name}_{max_length}", make, {"input": (1, max_length, 256)}, work)
        paths[name] = path
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default="1,16,64,256")
    parser.add_argument("--max", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=30, help="plugrt bench --iterations per round")
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--work-dir", default=None, help="default: BUILD/zoo")
    args = parser.parse_args()
    plugrt = os.path.join(args.build_dir, "bin", "plugrt")
    work = os.path.join(args.work_dir or os.path.join(args.build_dir, "zoo"), "varying_lengths")
    os.makedirs(work, exist_ok=True)
    lengths = [int(n) for n in args.lengths.split(",")]
    if any(n < 1 or n > args.max for n in lengths):
        parser.error(f"--lengths must lie in 1..{args.max}")

    models = export(work, args.max)
    varying = os.path.join(work, "varying.prt")
    static = os.path.join(work, "static.prt")
    for model, program, extra in ((models["encoder_layer_varying"], varying, ["--dim", f"seq=1..{args.max}"]),
                                  (models["encoder_layer_static"], static, [])):
        subprocess.run([plugrt, "compile", model, "-o", program] + extra, check=True, stdout=subprocess.DEVNULL)
    inputs = {}
    rng = np.random.default_rng(0)
    for n in lengths:
        inputs[n] = os.path.join(work, f"input_{n}.npy")
        np.save(inputs[n], rng.uniform(-1, 1, (1, n, 256)).astype(np.float32))

    bench = [plugrt, "bench", "--json", "--placement", "as-compiled", "--threads", str(args.threads),
             "--iterations", str(args.iterations)]
    times = {n: [] for n in lengths}
    static_times = []
    for _ in range(args.rounds):
        for n in lengths:
            times[n].append(run_json(bench + [varying, "--input", f"input={inputs[n]}"])["median_ms"])
        static_times.append(run_json(bench + [static])["median_ms"])

    placement = run_json([plugrt, "run", varying, "--json", "--placement", "as-compiled", "--input",
                          f"input={inputs[lengths[0]]}"])["placement"]
    print(f"encoder layer (d_model 256), compiled once for seq 1..{args.max}; {args.threads} thread(s), "
          f"{args.rounds} rounds, medians; varying program on "
          + ", ".join(sorted({delegate["backend"] for delegate in placement})))
    static_ms = statistics.median(static_times)
    at_max = statistics.median(times[args.max]) if args.max in times else None
    print(f"{'length':>8} {'varying ms':>11} {'/ at max':>9} {'/ static':>9}")
    for n in lengths:
        ms = statistics.median(times[n])
        ratio_max = f"{ms / at_max:9.3f}" if at_max else f"{'':>9}"
        print(f"{n:>8} {ms:11.3f} {ratio_max} {ms / static_ms:9.3f}")
    print(f"{'static':>8} {static_ms:11.3f}")


if __name__ == "__main__":
    main()
