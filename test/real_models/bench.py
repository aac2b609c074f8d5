#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Latency of the real-model corpus at 1 thread: plugrt against ONNX Runtime.

    /usr/bin/python3 test/real_models/bench.py --build-dir BUILD [--work-dir DIR]
        [--models ID,ID] [--backend-sets default,xnnpack] [--iterations 20] [--warmup 3]

Not a test (check_models.py checks the outputs; this only times). For each model it
compiles the program per backend set as check_models.py does, times `plugrt bench
--threads 1` (the default set placed at load, the others as compiled), and times ONNX
Runtime (onnxruntime-node, 1 intra-op thread, through ort_run.js, so its times include
the JavaScript binding's cost per call) on the same inputs. Prints the medians and the
ratio plugrt / ONNX Runtime (below 1: plugrt is faster). Needs the corpus (fetch.sh).
"""
import argparse
import json
import os
import sys
import tempfile

import check_models
import corpus


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--work-dir", help="where fetch.sh put the corpus (default BUILD/real-models)")
    parser.add_argument("--models", help="comma-separated model ids (default: all)")
    parser.add_argument("--backend-sets", default="default", help="comma-separated (default: default)")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    return parser.parse_args()


def time_onnxruntime(work_dir, model, scratch, args):
    job = {"model": corpus.model_path(work_dir, model), "inputs": corpus.input_files(work_dir, model),
           "out_dir": os.path.join(scratch, "ort", model["id"]),
           "time": {"iterations": args.iterations, "warmup": args.warmup}}
    jobs = os.path.join(scratch, "ort_jobs.json")
    with open(jobs, "w") as f:
        json.dump([job], f)
    status, _, _ = check_models.run(["node", os.path.join(corpus.HERE, "ort_run.js"), "--ort",
                                       corpus.ort_dir(work_dir), jobs], None)
    if status != 0:
        return None
    with open(os.path.join(job["out_dir"], "outputs.json")) as f:
        return json.load(f)["median_ms"]


def time_plugrt(plugrt, work_dir, model, backend_set, scratch, env, args):
    program = os.path.join(scratch, f"{model['id']}.{backend_set}.prt")
    summary, _, _ = check_models.compile_model(plugrt, work_dir, model, backend_set, program, env)
    if summary is None:
        return None
    command = [plugrt, "bench", program, "--json", "--threads", "1", "--iterations", str(args.iterations),
               "--warmup", str(args.warmup)]
    command += [] if backend_set == check_models.DEFAULT_SET else ["--placement", "as-compiled"]
    for name, path in corpus.input_files(work_dir, model).items():
        if name not in corpus.bound_inputs(model):
            command += ["--input", f"{name}={path}"]
    status, out, _ = check_models.run(command, env)
    return json.loads(out)["median_ms"] if status == 0 else None


def cell(value):
    return "-" if value is None else f"{value:.3f}"


def main():
    args = parse_args()
    build_dir = os.path.abspath(args.build_dir)
    work_dir = os.path.abspath(args.work_dir or os.path.join(build_dir, "real-models"))
    plugrt = os.path.join(build_dir, "bin", "plugrt")
    if not corpus.is_prepared(work_dir):
        sys.exit(f"bench: no corpus in {work_dir}: run test/real_models/fetch.sh first")
    models = check_models.selected(corpus.load_manifest()["model"], args.models, lambda m: m["id"])
    sets = args.backend_sets.split(",")
    scratch = tempfile.mkdtemp(prefix="real-models-bench.")
    env = dict(os.environ, PLUGRT_CACHE_DIR=tempfile.mkdtemp(prefix="cache.", dir=scratch))
    print("model".ljust(22) + "onnxruntime ms".rjust(16) +
          "".join(f"{s + ' ms':>16}{s + '/ort':>14}" for s in sets), flush=True)
    for model in models:
        ort_ms = time_onnxruntime(work_dir, model, scratch, args)
        row = model["id"].ljust(22) + cell(ort_ms).rjust(16)
        for backend_set in sets:
            ms = time_plugrt(plugrt, work_dir, model, backend_set, scratch, env, args)
            ratio = None if ms is None or not ort_ms else ms / ort_ms
            row += cell(ms).rjust(16) + ("-" if ratio is None else f"{ratio:.2f}x").rjust(14)
        print(row, flush=True)


if __name__ == "__main__":
    main()
