#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Placement by measurement against a slow plugin that sorts first by name.

The test plugin "blas" (test/plugins/naive_plugin.cc: plain loops for Gemm, MatMul, Conv,
Add, Mul, Relu) is dropped into a plugin directory next to the built-in backends. For each
zoo model (exported by bench/compare_runtimes.py into WORK/models) the script compiles a
program for the portable backend only, as shipped to any device, and then, interleaved in
rounds:
  - the oneDNN-only latency: `plugrt bench --backends onednn` with placement auto;
  - the latency with every backend and the slow plugin present, placement auto, placed by
    a first load with an empty cache and no cost profile (the figures it measures are kept);
  - that first load's time, and the same load with `--measure-seconds 0` (nothing measured),
    so their difference is what measuring costs, given per partition of the placed method.
Each figure is the median over the rounds. The target: auto / oneDNN-only at most 1.1x.

    /usr/bin/python3 bench/slow_plugin_placement.py [--models mlp3,resnet18,mobilenet_v2]
        [--rounds 3] [--threads 1] [--build-dir build] [--work-dir build/zoo] [--json FILE]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run_json(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(" ".join(command) + ":\n" + result.stderr)
    return json.loads(result.stdout)


def first_load(plugrt, program, plugin_dir, cache, threads, measure_seconds):
    """One `plugrt run` with an empty cache: its load time, placement and what it measured."""
    shutil.rmtree(cache, ignore_errors=True)
    report = run_json([plugrt, "run", program, "--json", "--plugin-dir", plugin_dir, "--cache-dir", cache,
                       "--measure-seconds", str(measure_seconds)] + threads)
    return report["load_ms"], [d["backend"] for d in report["placement"]], report.get("placement_measured", "")


def time_model(plugrt, onnx_path, plugin_dir, scratch, args):
    program = os.path.join(scratch, "program.prt")
    subprocess.run([plugrt, "compile", onnx_path, "-o", program, "--backends", "portable"], check=True,
                   capture_output=True)
    threads = ["--threads", str(args.threads)]
    bench = [plugrt, "bench", program, "--json", "--iterations", str(args.iterations), "--warmup", "3"] + threads
    figures = {name: [] for name in ("onednn_only_ms", "auto_ms", "first_load_ms", "unmeasured_load_ms")}
    placed, measured = [], ""
    for _ in range(args.rounds):
        cache = os.path.join(scratch, "cache")
        load_ms, placed, measured = first_load(plugrt, program, plugin_dir, cache, threads, args.measure_seconds)
        figures["first_load_ms"].append(load_ms)
        figures["auto_ms"].append(run_json(bench + ["--plugin-dir", plugin_dir, "--cache-dir", cache])["median_ms"])
        onednn_cache = os.path.join(scratch, "onednn-cache")
        figures["onednn_only_ms"].append(
            run_json(bench + ["--backends", "onednn", "--cache-dir", onednn_cache])["median_ms"])
        figures["unmeasured_load_ms"].append(
            first_load(plugrt, program, plugin_dir, os.path.join(scratch, "cache0"), threads, 0)[0])
    medians = {name: statistics.median(values) for name, values in figures.items()}
    medians["placement"] = placed
    medians["measured"] = measured.split(":")[0]
    medians["measuring_ms_per_partition"] = (medians["first_load_ms"] - medians["unmeasured_load_ms"]) / max(
        1, len(placed))
    return medians


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="mlp3,resnet18,mobilenet_v2,squeezenet1_1,encoder_layer")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=20, help="plugrt bench --iterations per round")
    parser.add_argument("--measure-seconds", type=float, default=5, help="the first load's measuring budget")
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--work-dir", default=None, help="default: BUILD/zoo")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    plugrt = os.path.join(args.build_dir, "bin", "plugrt")
    plugin = os.path.join(args.build_dir, "test", "plugins", "files", "libplugrt_naive_blas.so")
    work = args.work_dir or os.path.join(args.build_dir, "zoo")
    if not os.path.exists(plugin):
        sys.exit(f"{plugin} is missing: build the target plugrt_backend_naive_blas")
    scratch = tempfile.mkdtemp(prefix="plugrt-slow-plugin-")
    results = {}
    try:
        plugin_dir = os.path.join(scratch, "plugins")
        os.makedirs(plugin_dir)
        shutil.copy(plugin, plugin_dir)
        for model in args.models.split(","):
            onnx_path = os.path.join(work, "models", model + ".onnx")
            if not os.path.exists(onnx_path):
                print(f"{model}: {onnx_path} is missing (export it with bench/compare_runtimes.py --check-only "
                      f"--models {model})", file=sys.stderr)
                continue
            model_scratch = os.path.join(scratch, model)
            os.makedirs(model_scratch)
            m = results[model] = time_model(plugrt, onnx_path, plugin_dir, model_scratch, args)
            print(f"{model}: auto with the slow plugin / oneDNN only {m['auto_ms'] / m['onednn_only_ms']:.3f}x "
                  f"({m['auto_ms']:.3f} / {m['onednn_only_ms']:.3f} ms); first load {m['first_load_ms']:.1f} ms "
                  f"against {m['unmeasured_load_ms']:.1f} ms without measuring: "
                  f"{m['measuring_ms_per_partition']:.1f} ms per partition ({len(m['placement'])} partitions on "
                  f"{', '.join(sorted(set(m['placement'])))}; {m['measured']})", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
