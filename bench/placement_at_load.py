#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Times placement at load time (`plugrt run/bench --placement auto`) against programs placed ahead of time.

For each zoo model (exported by bench/compare_runtimes.py into WORK/models) the script
compiles two programs: one for the portable backend only (`--backends portable`, as on a
machine that has no plugin) and one with no flags (the default placement, over every
backend found). Then, interleaved in rounds so that a slower moment hits every figure alike:
  - load time (`plugrt run --json`'s load_ms) of the default program as compiled;
  - load time of the portable program with placement auto and a warm blob cache;
  - load time of the portable program with placement auto and an empty cache (cold);
  - latency (`plugrt bench --json`'s median_ms) of the default program as compiled and
    of the portable program placed at load.
Each figure is the median over the rounds. It also prints each program's size next to the
model's weight bytes (the ONNX initializers).

    /usr/bin/python3 bench/placement_at_load.py [--models resnet50,mobilenet_v2] [--rounds 5]
        [--threads 1] [--build-dir build] [--work-dir build/zoo] [--json FILE]
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


def weight_bytes(onnx_path):
    import onnx
    from onnx import numpy_helper
    model = onnx.load(onnx_path)
    return sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="resnet50,mobilenet_v2")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=20, help="plugrt bench --iterations per round")
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--work-dir", default=None, help="default: BUILD/zoo")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    plugrt = os.path.join(args.build_dir, "bin", "plugrt")
    work = args.work_dir or os.path.join(args.build_dir, "zoo")
    out_dir = os.path.join(work, "placement_at_load")
    os.makedirs(out_dir, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="plugrt-placement-at-load-")
    results = {}
    try:
        for model in args.models.split(","):
            onnx_path = os.path.join(work, "models", model + ".onnx")
            if not os.path.exists(onnx_path):
                print(f"{model}: {onnx_path} is missing (export it with bench/compare_runtimes.py --check-only "
                      f"--models {model})", file=sys.stderr)
                continue
            programs = {}
            for kind, flags in (("portable", ["--backends", "portable"]), ("default", [])):
                programs[kind] = os.path.join(out_dir, f"{model}.{kind}.prt")
                subprocess.run([plugrt, "compile", onnx_path, "-o", programs[kind]] + flags, check=True,
                               capture_output=True)
            warm_cache = os.path.join(scratch, model + "-warm")
            threads = ["--threads", str(args.threads)]
            run_json([plugrt, "run", programs["portable"], "--json", "--cache-dir", warm_cache] + threads)
            figures = {name: [] for name in ("aot_load_ms", "auto_warm_load_ms", "auto_cold_load_ms",
                                             "aot_median_ms", "auto_median_ms")}
            placements = {}
            for round_index in range(args.rounds):
                aot = run_json([plugrt, "run", programs["default"], "--json", "--placement", "as-compiled"] + threads)
                figures["aot_load_ms"].append(aot["load_ms"])
                warm = run_json([plugrt, "run", programs["portable"], "--json", "--cache-dir", warm_cache] + threads)
                figures["auto_warm_load_ms"].append(warm["load_ms"])
                placements["auto"] = [(d["backend"], d["blob_origin"]) for d in warm["placement"]]
                cold_cache = os.path.join(scratch, f"{model}-cold-{round_index}")
                cold = run_json([plugrt, "run", programs["portable"], "--json", "--cache-dir", cold_cache] + threads)
                figures["auto_cold_load_ms"].append(cold["load_ms"])
                shutil.rmtree(cold_cache, ignore_errors=True)
                bench = [plugrt, "bench", "--json", "--iterations", str(args.iterations), "--warmup", "3"] + threads
                figures["aot_median_ms"].append(
                    run_json(bench + [programs["default"], "--placement", "as-compiled"])["median_ms"])
                figures["auto_median_ms"].append(
                    run_json(bench + [programs["portable"], "--cache-dir", warm_cache])["median_ms"])
            medians = {name: statistics.median(values) for name, values in figures.items()}
            medians["weight_bytes"] = weight_bytes(onnx_path)
            medians["default_program_bytes"] = os.path.getsize(programs["default"])
            medians["portable_program_bytes"] = os.path.getsize(programs["portable"])
            medians["auto_placement"] = placements["auto"]
            results[model] = medians
            print(f"{model}: latency auto/default {medians['auto_median_ms'] / medians['aot_median_ms']:.3f}x "
                  f"({medians['auto_median_ms']:.2f} / {medians['aot_median_ms']:.2f} ms); "
                  f"load warm auto/as-compiled {medians['auto_warm_load_ms'] / medians['aot_load_ms']:.3f}x "
                  f"({medians['auto_warm_load_ms']:.1f} / {medians['aot_load_ms']:.1f} ms), cold auto "
                  f"{medians['auto_cold_load_ms']:.1f} ms; program/weights default "
                  f"{medians['default_program_bytes'] / medians['weight_bytes']:.2f}x, portable "
                  f"{medians['portable_program_bytes'] / medians['weight_bytes']:.2f}x; auto ran on "
                  f"{placements['auto']}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
