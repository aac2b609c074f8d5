#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Quantizes torchvision's resnet50 and mobilenet_v2 with `plugrt quantize` and times the
float and int8 programs with `plugrt bench` at 1 and 2 threads.

    python3 bench/quantize_zoo.py [--plugrt build/bin/plugrt] [--work DIR] [--samples 8]
                                  [--iterations 20] [--repeats 3] [--observer minmax]
                                  [--pretrained] [--json FILE]

The models are exported with random weights (torchvision's constructors, seeded) unless
--pretrained is given and the weights can be downloaded; the calibration set is seeded
normal noise in the models' input shape, so the figures measure speed, not accuracy. The
cosine between the float and int8 outputs on a sample the calibration did not see is
printed too. Needs torch and torchvision in this Python.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["resnet50", "mobilenet_v2"]
SHAPE = (1, 3, 224, 224)


def run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr}")
    return done.stdout


def export(name, path, pretrained):
    import torch
    import torchvision
    torch.manual_seed(0)
    weights = "DEFAULT" if pretrained else None
    model = getattr(torchvision.models, name)(weights=weights).eval()
    torch.onnx.export(model, torch.zeros(SHAPE), path, input_names=["input"], output_names=["output"],
                      opset_version=13)


def write_samples(directory, count):
    os.makedirs(directory, exist_ok=True)
    for s in range(count + 1):  # the last one is the held-out check
        data = np.random.default_rng(100 + s).standard_normal(SHAPE).astype(np.float32)
        np.save(os.path.join(directory if s < count else os.path.dirname(directory), f"sample{s}.npy"), data)


def bench(plugrt, program, threads, iterations):
    out = run([plugrt, "bench", program, "--json", "--threads", str(threads), "--iterations", str(iterations),
               "--warmup", "5"])
    return json.loads(out)["median_ms"]


def timings(plugrt, programs, iterations, repeats):
    """Median of `repeats` medians per (kind, threads), the kinds taking turns so that a
    busy spell of the machine falls on both."""
    figures = {}
    for _ in range(repeats):
        for threads in (1, 2):
            for kind, program in programs.items():
                figures.setdefault(f"{kind}_ms_{threads}t", []).append(bench(plugrt, program, threads, iterations))
    return {key: float(np.median(values)) for key, values in figures.items()}


def output_of(plugrt, program, sample, directory):
    run([plugrt, "run", program, "--input", f"input={sample}", "--output-dir", directory])
    return np.load(os.path.join(directory, "output.npy")).ravel()


def measure(args, name, work):
    plugrt = args.plugrt
    onnx_path = os.path.join(work, f"{name}.onnx")
    int8_path = os.path.join(work, f"{name}.int8.onnx")
    export(name, onnx_path, args.pretrained)
    calibration = os.path.join(work, f"{name}_calibration", "samples")
    write_samples(calibration, args.samples)
    start = time.monotonic()
    run([plugrt, "quantize", onnx_path, "-o", int8_path, "--calibrate", calibration, "--observer", args.observer,
         "--report", os.path.join(work, f"{name}.report.tsv")])
    result = {"model": name, "pretrained": args.pretrained, "quantize_s": time.monotonic() - start}
    outputs, programs = {}, {}
    held_out = os.path.join(os.path.dirname(calibration), f"sample{args.samples}.npy")
    for kind, path in (("float", onnx_path), ("int8", int8_path)):
        programs[kind] = path + ".prt"
        summary = json.loads(run([plugrt, "compile", path, "-o", programs[kind], "--json"]))
        result[f"{kind}_partitions"] = [(p["backend"], p["nodes"]) for p in summary["partitions"]]
        outputs[kind] = output_of(plugrt, programs[kind], held_out, os.path.join(work, f"{name}_{kind}_out"))
    result.update(timings(plugrt, programs, args.iterations, args.repeats))
    a, b = outputs["float"], outputs["int8"]
    result["cosine"] = float(np.dot(a, b) / np.sqrt(np.dot(a, a) * np.dot(b, b)))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plugrt", default=os.path.join(REPO, "build", "bin", "plugrt"))
    parser.add_argument("--work", help="where models and programs go (default: a temporary directory)")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3, help="bench runs per figure (their median is kept)")
    parser.add_argument("--observer", default="minmax", choices=["minmax", "percentile", "entropy"])
    parser.add_argument("--pretrained", action="store_true", help="download torchvision's weights")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        work = args.work or temporary
        os.makedirs(work, exist_ok=True)
        results = [measure(args, name, work) for name in MODELS]
    print(f"{'model':14} {'float 1t':>9} {'int8 1t':>9} {'float 2t':>9} {'int8 2t':>9} {'cosine':>8} "
          f"{'quantize':>9}  (median ms; quantize in s)")
    for r in results:
        print(f"{r['model']:14} {r['float_ms_1t']:9.2f} {r['int8_ms_1t']:9.2f} {r['float_ms_2t']:9.2f} "
              f"{r['int8_ms_2t']:9.2f} {r['cosine']:8.4f} {r['quantize_s']:9.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
