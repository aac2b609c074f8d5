#!/usr/bin/python3
"""Times plugrt's backends against ONNX Runtime on the benchmark models, in one run.

For each model (torchvision's mobilenet_v2 and resnet18, a 3-layer MLP, one transformer
encoder layer; random weights, exported by models/export_models.py --large) and each
thread count, it times:
  - plugrt with each backend found (xnnpack, onednn, both, and the portable backend),
    through `plugrt bench` (the latency of Method::execute);
  - ONNX Runtime's CPU execution provider through the npm package onnxruntime-node
    (bench/ort_bench.js; installed with `npm install --ignore-scripts`).
Measurements are interleaved in rounds (every configuration once per round), so a
machine that slows down for a while slows all of them alike; each cell is the median
of the round medians. Before timing, every program is run once on the exported input
and checked against PyTorch's output.

ONNX Runtime is called from JavaScript, so its times include the binding's cost per
call. The script measures that cost on a one-node model and subtracts it before the
ratio plugrt / ONNX Runtime: a ratio of 1.0 or less means plugrt is at least as fast
as ONNX Runtime's native run.

    /usr/bin/python3 bench/compare_runtimes.py [--build-dir build] [--threads 1,2]
        [--models mobilenet_v2,resnet18,mlp3,encoder_layer] [--rounds 3] [--seconds 2]

Needs: a build of plugrt (scripts/build.sh), Node.js with npm, and Debian's
python3-torch, python3-torchvision and python3-onnx for the export.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = ["mobilenet_v2", "resnet18", "mlp3", "encoder_layer"]
ORT_VERSION = "1.30.0"
# plugrt configurations: the name shown, and the backends given to `plugrt compile`.
PLUGRT_CONFIGS = [
    ("xnnpack", ["xnnpack"]),
    ("onednn", ["onednn"]),
    ("xnnpack+onednn", ["xnnpack", "onednn"]),
    ("portable", []),
]


def fail(message):
    print(f"compare_runtimes: {message}", file=sys.stderr)
    sys.exit(1)


def run(command, **kwargs):
    """Runs a command; on failure, stops with the command and what it printed."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        fail(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result.stdout


def install_onnxruntime(work_dir, version):
    ort_dir = os.path.join(work_dir, "onnxruntime-node")
    package = os.path.join(ort_dir, "node_modules", "onnxruntime-node", "package.json")
    if os.path.exists(package):
        with open(package) as f:
            if json.load(f).get("version") == version:
                return ort_dir
    if shutil.which("npm") is None:
        fail("npm not found: install Node.js and npm (apt-get install nodejs npm)")
    os.makedirs(ort_dir, exist_ok=True)
    print(f"installing onnxruntime-node {version} (npm, --ignore-scripts)", file=sys.stderr)
    # --ignore-scripts: the package's install script only fetches GPU providers; its
    # CPU library for Linux x64 ships in the package itself.
    run(["npm", "install", "--prefix", ort_dir, "--ignore-scripts", "--no-audit", "--no-fund",
         f"onnxruntime-node@{version}"])
    return ort_dir


def export_models(work_dir, models):
    model_dir = os.path.join(work_dir, "models")
    missing = [m for m in models if not os.path.exists(os.path.join(model_dir, m + ".output.npy"))]
    if missing:
        os.makedirs(model_dir, exist_ok=True)
        print(f"exporting {', '.join(missing)} (models/export_models.py --large)", file=sys.stderr)
        for name in missing:
            run(["/usr/bin/python3", os.path.join(REPO, "models", "export_models.py"), "--large", "--only", name,
                 "--out", model_dir])
    return model_dir


def write_binding_probe(model_dir):
    """A one-node model (Relu on 16 floats) that times ONNX Runtime's cost per call."""
    path = os.path.join(model_dir, "binding_probe.onnx")
    if os.path.exists(path):
        return path
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Relu", ["input"], ["output"])], "binding_probe",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 16])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    np.save(os.path.join(model_dir, "binding_probe.input.npy"), np.zeros((1, 16), dtype=np.float32))
    return path


def available_backends(plugrt):
    listing = json.loads(run([plugrt, "backends", "--json"]))
    names = set()
    for entry in listing.get("backends", []):
        if entry.get("available", True):
            names.add(entry["name"])
    return names


def compile_programs(plugrt, model_dir, program_dir, models, backends_found):
    """Compiles each model once per plugrt configuration whose backends are all present."""
    configs = [(name, backends) for name, backends in PLUGRT_CONFIGS if set(backends) <= backends_found]
    os.makedirs(program_dir, exist_ok=True)
    programs = {}
    for model in models:
        onnx_path = os.path.join(model_dir, model + ".onnx")
        for name, backends in configs:
            prt = os.path.join(program_dir, f"{model}.{name}.prt")
            summary = json.loads(run([plugrt, "compile", onnx_path, "-o", prt, "--json",
                                      "--backends", ",".join(backends + ["portable"])]))
            check_output(plugrt, prt, model_dir, model)
            programs[(model, name)] = (prt, summary)
    return [name for name, _ in configs], programs


def check_output(plugrt, prt, model_dir, model):
    """Runs the program once on the exported input and compares with PyTorch's output."""
    run([plugrt, "run", prt, "--input", f"input={os.path.join(model_dir, model + '.input.npy')}",
         "--expect", f"output={os.path.join(model_dir, model + '.output.npy')}", "--tolerance", "1e-3"])


def time_plugrt(plugrt, prt, threads, iterations, warmup):
    out = run([plugrt, "bench", prt, "--threads", str(threads), "--iterations", str(iterations), "--warmup",
               str(warmup), "--json"])
    return json.loads(out)["median_ms"]


def time_ort(ort_dir, onnx_path, input_path, threads, iterations, warmup):
    out = run(["node", os.path.join(REPO, "bench", "ort_bench.js"), "--ort", ort_dir, onnx_path, "--input", input_path,
               "--threads", str(threads), "--iterations", str(iterations), "--warmup", str(warmup), "--json"])
    return json.loads(out)["median_ms"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"), help="plugrt's build (default: build)")
    parser.add_argument("--work-dir", help="models, programs and onnxruntime-node (default: BUILD/bench-compare)")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated model names")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of interleaved measurements")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per measurement, about")
    parser.add_argument("--ort-version", default=ORT_VERSION, help="onnxruntime-node version")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args()

    plugrt = os.path.join(args.build_dir, "bin", "plugrt")
    if not os.access(plugrt, os.X_OK):
        fail(f"{plugrt} not found: build plugrt first (scripts/build.sh)")
    if shutil.which("node") is None:
        fail("node not found: install Node.js (apt-get install nodejs npm)")
    work_dir = args.work_dir or os.path.join(args.build_dir, "bench-compare")
    models = [m for m in args.models.split(",") if m]
    thread_counts = [int(t) for t in args.threads.split(",") if t]

    ort_dir = install_onnxruntime(work_dir, args.ort_version)
    model_dir = export_models(work_dir, models)
    probe = write_binding_probe(model_dir)
    configs, programs = compile_programs(plugrt, model_dir, os.path.join(work_dir, "programs"), models,
                                         available_backends(plugrt))
    runners = [(name, "plugrt") for name in configs] + [("onnxruntime", "ort")]

    def measure(model, runner, threads, iterations, warmup):
        if runner[1] == "plugrt":
            return time_plugrt(plugrt, programs[(model, runner[0])][0], threads, iterations, warmup)
        return time_ort(ort_dir, os.path.join(model_dir, model + ".onnx"),
                        os.path.join(model_dir, model + ".input.npy"), threads, iterations, warmup)

    # Calibrate: enough iterations per measurement for about --seconds of timed runs.
    iterations = {}
    for model in models:
        for runner in runners:
            for threads in thread_counts:
                probe_ms = measure(model, runner, threads, 3, 1)
                iterations[(model, runner[0], threads)] = max(5, min(1000, int(args.seconds * 1000 / probe_ms)))

    samples = {key: [] for key in iterations}
    overhead = []
    for round_index in range(args.rounds):
        print(f"round {round_index + 1}/{args.rounds}", file=sys.stderr)
        overhead.append(time_ort(ort_dir, probe, os.path.join(model_dir, "binding_probe.input.npy"), 1, 2000, 200))
        for model in models:
            for threads in thread_counts:
                for runner in runners:
                    key = (model, runner[0], threads)
                    warmup = max(2, iterations[key] // 10)
                    samples[key].append(measure(model, runner, threads, iterations[key], warmup))

    binding_ms = statistics.median(overhead)
    medians = {key: statistics.median(values) for key, values in samples.items()}
    print_table(models, thread_counts, configs, medians, binding_ms, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"onnxruntime_node": args.ort_version, "rounds": args.rounds, "binding_overhead_ms": binding_ms,
                       "results": [{"model": m, "runtime": r, "threads": t, "median_ms": v,
                                    "round_medians_ms": samples[(m, r, t)], "iterations": iterations[(m, r, t)]}
                                   for (m, r, t), v in medians.items()]}, f, indent=2)


def print_table(models, thread_counts, configs, medians, binding_ms, args):
    print(f"\nmedian latency in ms (median of {args.rounds} interleaved rounds); ratio = plugrt / ONNX Runtime")
    print(f"ONNX Runtime {args.ort_version} (onnxruntime-node), its binding's cost per call "
          f"({binding_ms:.3f} ms) subtracted before the ratio\n")
    header = ["model", "threads", "onnxruntime"] + [f"{c}" for c in configs] + [f"{c} ratio" for c in configs]
    rows = []
    for model in models:
        for threads in thread_counts:
            ort_ms = medians[(model, "onnxruntime", threads)]
            ort_native = max(ort_ms - binding_ms, 1e-6)
            row = [model, str(threads), f"{ort_ms:.3f}"]
            row += [f"{medians[(model, c, threads)]:.3f}" for c in configs]
            row += [f"{medians[(model, c, threads)] / ort_native:.2f}" for c in configs]
            rows.append(row)
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(cell.rjust(widths[i]) if i > 0 else cell.ljust(widths[i]) for i, cell in enumerate(r)))


if __name__ == "__main__":
    main()
