#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Times verification at load (`plugrt run --verify`) on zoo models.

For each zoo model (exported by bench/compare_runtimes.py into WORK/models) the script
compiles the default program (no flags: every backend found) and measures, interleaved in
rounds, the load time (`plugrt run --json`'s load_ms, as compiled):
  - without --verify;
  - with --verify and an empty blob cache (each partition is run on its backend and on its
    portable fallback, and the verdict stored);
  - with --verify and the verdicts kept from a load before (a cache lookup per partition).
Each figure is the median over the rounds; it also prints each delegate's verdict.

    /usr/bin/python3 bench/verification_cost.py [--models resnet18,mobilenet_v2] [--rounds 3]
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

from placement_at_load import run_json  # beside this script


def measure(plugrt, program, threads, rounds, scratch):
    run = [plugrt, "run", program, "--json", "--placement", "as-compiled", "--threads", str(threads)]
    warm_cache = os.path.join(scratch, "warm")
    run_json(run + ["--verify", "--cache-dir", warm_cache])
    figures = {"plain_load_ms": [], "cold_verify_load_ms": [], "warm_verify_load_ms": []}
    verdicts = []
    for round_index in range(rounds):
        figures["plain_load_ms"].append(run_json(run + ["--no-cache"])["load_ms"])
        cold_cache = os.path.join(scratch, f"cold-{round_index}")
        cold = run_json(run + ["--verify", "--cache-dir", cold_cache])
        figures["cold_verify_load_ms"].append(cold["load_ms"])
        verdicts = [(d["delegate"], d["backend"], d["verification"] or d["reason"]) for d in cold["placement"]]
        shutil.rmtree(cold_cache, ignore_errors=True)
        figures["warm_verify_load_ms"].append(run_json(run + ["--verify", "--cache-dir", warm_cache])["load_ms"])
    medians = {name: statistics.median(values) for name, values in figures.items()}
    medians["verdicts"] = verdicts
    return medians


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="resnet18,mobilenet_v2,squeezenet1_1,transformer_encoder")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--work-dir", default=None, help="default: BUILD/zoo")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    plugrt = os.path.join(args.build_dir, "bin", "plugrt")
    work = args.work_dir or os.path.join(args.build_dir, "zoo")
    out_dir = os.path.join(work, "verification_cost")
    os.makedirs(out_dir, exist_ok=True)
    results = {}
    print("model | delegates | load ms | with --verify, first load | with --verify, verdicts kept")
    for model in args.models.split(","):
        onnx_path = os.path.join(work, "models", model + ".onnx")
        if not os.path.exists(onnx_path):
            print(f"{model}: {onnx_path} is missing (export it with bench/compare_runtimes.py --check-only "
                  f"--models {model})", file=sys.stderr)
            continue
        program = os.path.join(out_dir, model + ".prt")
        subprocess.run([plugrt, "compile", onnx_path, "-o", program], check=True, capture_output=True)
        scratch = tempfile.mkdtemp(prefix="plugrt-verification-cost-")
        try:
            medians = measure(plugrt, program, args.threads, args.rounds, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        results[model] = medians
        plain = medians["plain_load_ms"]
        print(f"{model} | {len(medians['verdicts'])} | {plain:.1f} | {medians['cold_verify_load_ms']:.1f} "
              f"(+{medians['cold_verify_load_ms'] - plain:.1f}) | {medians['warm_verify_load_ms']:.1f} "
              f"(+{medians['warm_verify_load_ms'] - plain:.1f})", flush=True)
        for delegate, backend, verdict in medians["verdicts"]:
            print(f"    {delegate} on {backend}: {verdict}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
