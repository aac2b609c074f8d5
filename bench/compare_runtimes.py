#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Times plugrt against ONNX Runtime over the model zoo, after checking each program against PyTorch.

The zoo (models/export_zoo.py) is public architectures with random weights: torchvision
classification, segmentation and video models, transformer stacks from torch.nn and a
dense classifier. For each model the script:
  1. exports it with its inputs and PyTorch's outputs (once; kept in the work directory);
  2. compiles it with no flags (the default placement) and once per single backend found
     (`plugrt compile --backends NAME`);
  3. runs every program on the exported inputs and checks each output against PyTorch's
     (`plugrt run --expect`, tolerance --tolerance times the output's largest magnitude
     when that is above 1);
  4. times, interleaved in rounds (every configuration once per round, so a machine that
     slows down for a while slows all of them alike), plugrt with no flags, plugrt on each
     single backend, and ONNX Runtime's CPU execution provider (the npm package
     onnxruntime-node, through bench/ort_bench.js), at each thread count. Each cell is
     the median of the round medians.
A model that does not export, a program that does not compile and one whose outputs
differ from PyTorch's are reported with the reason, and are not timed.

ONNX Runtime is called from JavaScript, so its times include the binding's cost per
call. The script measures that cost on a one-node model and subtracts it before the
ratio plugrt / ONNX Runtime: a ratio of 1.0 or less means plugrt is at least as fast
as ONNX Runtime's native run. At the end it prints the geometric mean of the ratios per
thread count, and writes everything to a JSON file.

    /usr/bin/python3 bench/compare_runtimes.py [--quick | --models A,B] [--threads 1,2]
        [--rounds 3] [--seconds 1] [--backends xnnpack,onednn] [--check-only] [--reexport]
        [--json FILE]

--check-only exports, compiles and checks, without ONNX Runtime or timing (the ctest
subset runs this). Exported models are kept in WORK/models (default build/zoo/models) and
exported again when models/export_zoo.py, export_models.py or zoo_architectures.py
change, or with --reexport.

Needs: a build of plugrt (scripts/build.sh), Debian's python3-torch, python3-torchvision
and python3-onnx, and for timing Node.js with npm.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPORT_ZOO = os.path.join(REPO, "models", "export_zoo.py")
ORT_VERSION = "1.30.0"
# The four models the comparison started with, and a two-input decoder: a fast look.
QUICK_MODELS = ["mobilenet_v2", "resnet18", "mlp3", "encoder_layer", "transformer_decoder"]
DEFAULT_CONFIG = "default"  # plugrt compile with no --backends
SKIPPED = 77  # ctest's SKIP_RETURN_CODE for --check-only when torch is missing


class CommandFailed(Exception):
    pass


def fail(message, code=1):
    print(f"compare_runtimes: {message}", file=sys.stderr)
    sys.exit(code)


def run(command, **kwargs):
    """Runs a command; raises CommandFailed with its last lines of output when it fails."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        lines = (result.stdout + result.stderr).strip().splitlines()
        raise CommandFailed(" | ".join(lines[-3:]) if lines else f"exit status {result.returncode}")
    return result.stdout


def zoo_names():
    try:
        out = run(["/usr/bin/python3", EXPORT_ZOO, "--list"])
    except (CommandFailed, OSError) as error:
        raise CommandFailed(f"{os.path.relpath(EXPORT_ZOO, REPO)} --list failed: {error}")
    return [line.split("\t")[0] for line in out.splitlines() if line.strip()]


def torch_missing():
    """Why /usr/bin/python3 cannot export the zoo, or None."""
    if not os.access("/usr/bin/python3", os.X_OK):
        return "/usr/bin/python3 not found"
    probe = subprocess.run(["/usr/bin/python3", "-c", "import torch, torchvision, onnx"], capture_output=True,
                           text=True)
    if probe.returncode != 0:
        return ("/usr/bin/python3 cannot import torch, torchvision and onnx "
                "(apt-get install python3-torch python3-torchvision python3-onnx)")
    return None


def exporter_digest():
    """A digest of the export scripts: an export made by other versions of them is redone."""
    import hashlib
    digest = hashlib.sha256()
    for script in ("export_zoo.py", "export_models.py", "zoo_architectures.py"):
        with open(os.path.join(REPO, "models", script), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def read_manifest(model_dir, model):
    try:
        with open(os.path.join(model_dir, model + ".json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def export_models(model_dir, models, again):
    """Exports the models not exported yet by these export scripts (all when again); returns {model: manifest}."""
    digest = exporter_digest()
    stale = [m for m in models if again or (read_manifest(model_dir, m) or {}).get("exporter") != digest]
    if stale:
        os.makedirs(model_dir, exist_ok=True)
        print(f"exporting {', '.join(stale)} (models/export_zoo.py)", file=sys.stderr)
        for model in stale:  # a manifest left from an earlier export must not stand for this one
            if os.path.exists(os.path.join(model_dir, model + ".json")):
                os.remove(os.path.join(model_dir, model + ".json"))
        # A model that fails to export gets a manifest with the reason; the others go on.
        subprocess.run(["/usr/bin/python3", EXPORT_ZOO, "--out", model_dir, "--only", ",".join(stale)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    manifests = {}
    for model in models:
        manifest = read_manifest(model_dir, model)
        if manifest is None:
            manifest = {"name": model, "error": "export failed: models/export_zoo.py wrote no manifest"}
        elif model in stale:
            manifest["exporter"] = digest
            with open(os.path.join(model_dir, model + ".json"), "w") as f:
                json.dump(manifest, f, indent=2)
        manifests[model] = manifest
    return manifests


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
    try:
        run(["npm", "install", "--prefix", ort_dir, "--ignore-scripts", "--no-audit", "--no-fund",
             f"onnxruntime-node@{version}"])
    except CommandFailed as error:
        fail(f"npm install onnxruntime-node@{version} failed: {error}")
    return ort_dir


def available_backends(plugrt):
    """The backends that can compile here, portable last."""
    listing = json.loads(run([plugrt, "backends", "--json"]))
    names = {b["name"] for b in listing.get("backends", [])
             if b.get("available", True) and b.get("has_aot", True) and not b.get("shadowed_by")}
    names.add("portable")
    return sorted(names - {"portable"}) + ["portable"]


def tensor_args(model_dir, manifest, role):
    return [f"{t['name']}={os.path.join(model_dir, t['file'])}" for t in manifest[role]]


def tolerance_for(model_dir, output, tolerance):
    """--tolerance, scaled up for outputs whose values reach past 1 (float32 error is relative)."""
    import numpy as np
    values = np.load(os.path.join(model_dir, output["file"]))
    largest = float(np.max(np.abs(values))) if values.size else 0.0
    return tolerance * max(1.0, largest)


def compile_and_check(plugrt, model, manifest, model_dir, program_dir, configs, tolerance):
    """Compiles and checks one model per configuration; returns {config: result}."""
    onnx_path = os.path.join(model_dir, manifest["onnx"])
    inputs = tensor_args(model_dir, manifest, "inputs")
    results = {}
    for config in configs:
        prt = os.path.join(program_dir, f"{model}.{config}.prt")
        flags = [] if config == DEFAULT_CONFIG else ["--backends", config]
        entry = {"program": prt}
        results[config] = entry
        try:
            summary = json.loads(run([plugrt, "compile", onnx_path, "-o", prt, "--json"] + flags))
        except CommandFailed as error:
            entry["error"] = f"compile failed: {error}"
            continue
        partitions = summary.get("partitions", [])
        entry["partitions"] = len(partitions)
        entry["partition_backends"] = sorted({p.get("backend", "?") for p in partitions})
        entry["untaken_ops"] = summary.get("untaken_ops", {})
        # Every output against PyTorch's, in one run; plugrt run exits 1 on a mismatch.
        # Each --expect shares one --tolerance, so the run uses the loosest and this
        # checks each output against its own.
        limits = {o["name"]: tolerance_for(model_dir, o, tolerance) for o in manifest["outputs"]}
        expects = tensor_args(model_dir, manifest, "outputs")
        # As compiled: each program is timed on the backends it was compiled for
        # (bench/placement_at_load.py times placement at load).
        check = subprocess.run([plugrt, "run", prt, "--json", "--report", "--placement", "as-compiled",
                                "--tolerance", str(max(limits.values()))] +
                               [arg for value in expects for arg in ("--expect", value)] +
                               [arg for value in inputs for arg in ("--input", value)], capture_output=True, text=True)
        try:
            report = json.loads(check.stdout)
            differences = {e["output"]: e["max_abs_difference"] for e in report["expected"]}
        except (ValueError, KeyError, TypeError):
            lines = (check.stdout + check.stderr).strip().splitlines()
            entry["error"] = f"run failed: {' | '.join(lines[-3:])}"
            continue
        entry["max_abs_difference"] = differences
        entry["run_ms"] = report.get("latency_ms")
        # A delegate whose backend refused it at load time runs on its portable fallback:
        # the program is still right, but its timing is not the backend's.
        fell_back = [f"{d['delegate']} ({d['requested_backend']}): {d['reason']}"
                     for d in report.get("placement", []) if d.get("fell_back")]
        if fell_back:
            entry["fell_back"] = fell_back
        for name, difference in differences.items():
            if difference > limits[name]:
                entry["error"] = (f"output {name} differs from PyTorch's: max abs difference "
                                  f"{difference:.3g} > tolerance {limits[name]:.3g}")
    return results


def time_plugrt(plugrt, prt, inputs, threads, iterations, warmup):
    out = run([plugrt, "bench", prt, "--json", "--placement", "as-compiled", "--threads", str(threads),
               "--iterations", str(iterations), "--warmup", str(warmup)] +
              [arg for value in inputs for arg in ("--input", value)])
    result = json.loads(out)
    return result["median_ms"], result["p90_ms"]


def time_ort(ort_dir, onnx_path, inputs, threads, iterations, warmup):
    out = run(["node", os.path.join(REPO, "bench", "ort_bench.js"), "--ort", ort_dir, onnx_path, "--json",
               "--threads", str(threads), "--iterations", str(iterations), "--warmup", str(warmup)] +
              [arg for value in inputs for arg in ("--input", value)])
    result = json.loads(out)
    return result["median_ms"], result["p90_ms"]


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"), help="plugrt's build (default: build)")
    parser.add_argument("--work-dir", help="models, programs and onnxruntime-node (default: BUILD/zoo)")
    parser.add_argument("--models", help="comma-separated zoo models (default: the whole zoo)")
    parser.add_argument("--quick", action="store_true", help=f"only {','.join(QUICK_MODELS)}")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of interleaved measurements (default 3)")
    parser.add_argument("--seconds", type=float, default=1.0, help="timed seconds per measurement, about (default 1)")
    parser.add_argument("--backends", help="single backends to compile, check and time (default: every backend "
                                           "found but portable, which is checked, and timed only when named here)")
    parser.add_argument("--tolerance", type=float, default=1e-3,
                        help="largest difference from PyTorch, times the output's largest magnitude if above 1")
    parser.add_argument("--reexport", action="store_true", help="export the models again, even those already exported")
    parser.add_argument("--check-only", action="store_true", help="export, compile and check; no timing")
    parser.add_argument("--ort-version", default=ORT_VERSION, help="onnxruntime-node version")
    parser.add_argument("--json", help="write the results here (default: WORK/compare_runtimes.json)")
    args = parser.parse_args()
    if args.quick and args.models:
        parser.error("--quick and --models exclude each other")
    if args.rounds < 1 or args.seconds <= 0:
        parser.error("--rounds must be at least 1 and --seconds above 0")
    try:
        args.thread_counts = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        parser.error(f"--threads '{args.threads}' is not a comma-separated list of numbers")
    if not args.thread_counts or min(args.thread_counts) < 1:
        parser.error("--threads needs thread counts of at least 1")
    return args


def main():
    args = parse_args()
    plugrt = os.path.join(args.build_dir, "bin", "plugrt")
    if not os.access(plugrt, os.X_OK):
        fail(f"{plugrt} not found: build plugrt first (scripts/build.sh)")
    why = torch_missing()
    if why:
        if args.check_only:
            print(f"compare_runtimes: SKIPPED: {why}")
            sys.exit(SKIPPED)
        fail(why)
    if not args.check_only and shutil.which("node") is None:
        fail("node not found: install Node.js (apt-get install nodejs npm)")
    try:
        known = zoo_names()
    except CommandFailed as error:
        fail(str(error))
    models = QUICK_MODELS if args.quick else [m for m in (args.models or ",".join(known)).split(",") if m]
    unknown = [m for m in models if m not in known]
    if unknown:
        fail(f"--models: unknown model(s) {', '.join(unknown)}; the zoo has {', '.join(known)}", 2)

    try:
        found = available_backends(plugrt)
    except (CommandFailed, ValueError) as error:
        fail(f"{plugrt} backends --json failed: {error}")
    if args.backends:
        singles = [b for b in args.backends.split(",") if b]
        absent = [b for b in singles if b not in found]
        if absent:
            fail(f"--backends: {', '.join(absent)} not found here (found: {', '.join(found)}); "
                 f"`{plugrt} doctor` says why", 2)
        timed_singles = singles
    else:
        singles = found
        timed_singles = [b for b in found if b != "portable"]
    configs = [DEFAULT_CONFIG] + singles

    work_dir = args.work_dir or os.path.join(args.build_dir, "zoo")
    model_dir = os.path.join(work_dir, "models")
    program_dir = os.path.join(work_dir, "programs")
    os.makedirs(program_dir, exist_ok=True)
    manifests = export_models(model_dir, models, args.reexport)
    checks = {}
    for model in models:
        manifest = manifests[model]
        if "error" in manifest:
            print(f"{model}: {manifest['error']}", file=sys.stderr)
            continue
        checks[model] = compile_and_check(plugrt, model, manifest, model_dir, program_dir, configs, args.tolerance)
        verdicts = ", ".join(f"{c} {'ok' if 'error' not in r else 'FAILED'}" for c, r in checks[model].items())
        print(f"{model}: {verdicts}", file=sys.stderr)
        for config, entry in checks[model].items():
            if "error" in entry:
                print(f"  {config}: {entry['error']}", file=sys.stderr)

    results = {"onnxruntime_node": args.ort_version, "threads": args.thread_counts, "rounds": args.rounds,
               "backends": singles, "timed_backends": timed_singles, "tolerance": args.tolerance,
               "models": {m: {"manifest": manifests[m], "programs": checks.get(m, {})} for m in models}}
    if not args.check_only:
        measure_all(args, plugrt, models, manifests, checks, timed_singles, model_dir, work_dir, results)
    json_path = args.json or os.path.join(work_dir, "compare_runtimes.json")
    with open(json_path, "w") as f:
        json.dump(results, f, indent=2)
    failures = print_failures(models, manifests, checks)
    print(f"\nresults: {json_path}")
    if args.check_only:
        checked = sum(1 for m in checks for r in checks[m].values() if "error" not in r)
        print(f"{checked} passed, {failures} failed")
    sys.exit(1 if failures and args.check_only else 0)


def measure_all(args, plugrt, models, manifests, checks, timed_singles, model_dir, work_dir, results):
    """Times every checked program and ONNX Runtime, interleaved in rounds; prints the table."""
    ort_dir = install_onnxruntime(work_dir, args.ort_version)
    probe = write_binding_probe(model_dir)
    probe_input = [f"input={os.path.join(model_dir, 'binding_probe.input.npy')}"]
    runners = {}  # (model, runner) -> function(threads, iterations, warmup) -> (median, p90)
    for model in models:
        if model not in checks:
            continue
        inputs = tensor_args(model_dir, manifests[model], "inputs")
        for config in [DEFAULT_CONFIG] + timed_singles:
            entry = checks[model].get(config, {})
            if "error" not in entry and "program" in entry:
                runners[(model, config)] = (lambda prt, ins: lambda t, n, w: time_plugrt(plugrt, prt, ins, t, n, w))(
                    entry["program"], inputs)
        onnx_path = os.path.join(model_dir, manifests[model]["onnx"])
        runners[(model, "onnxruntime")] = (lambda path, ins: lambda t, n, w: time_ort(ort_dir, path, ins, t, n, w))(
            onnx_path, inputs)

    # Calibrate each thread count (on a busy machine more threads can be slower): enough
    # iterations for about --seconds per measurement.
    iterations, errors = {}, {}
    for (model, runner), measure in runners.items():
        for threads in args.thread_counts:
            try:
                probe_ms, _ = measure(threads, 3, 1)
            except CommandFailed as error:
                errors[(model, runner)] = f"timing failed: {error}"
                print(f"{model} on {runner}: {errors[(model, runner)]}", file=sys.stderr)
                break
            iterations[(model, runner, threads)] = max(5, min(1000, int(args.seconds * 1000 / max(probe_ms, 1e-3))))

    samples = {key: [] for key in iterations}
    overhead = []
    for round_index in range(args.rounds):
        print(f"round {round_index + 1}/{args.rounds}", file=sys.stderr)
        overhead.append(time_ort(ort_dir, probe, probe_input, 1, 2000, 200)[0])
        for model in models:
            for threads in args.thread_counts:
                for (m, runner), measure in runners.items():
                    if m != model or (m, runner) in errors:
                        continue
                    n = iterations[(m, runner, threads)]
                    try:
                        samples[(m, runner, threads)].append(measure(threads, n, max(2, n // 10)))
                    except CommandFailed as error:  # drop it from later rounds, keep the rest going
                        errors[(m, runner)] = f"timing failed at {threads} threads: {error}"
                        print(f"{m} on {runner}: {errors[(m, runner)]}", file=sys.stderr)

    binding_ms = statistics.median(overhead)
    cells = {}
    for (model, runner, threads), values in samples.items():
        if values and (model, runner) not in errors:
            cells[(model, runner, threads)] = {"median_ms": statistics.median(v[0] for v in values),
                                               "p90_ms": statistics.median(v[1] for v in values),
                                               "round_medians_ms": [v[0] for v in values],
                                               "iterations": iterations[(model, runner, threads)]}
    for (model, runner, threads), cell in cells.items():
        ort = cells.get((model, "onnxruntime", threads))
        if runner != "onnxruntime" and ort:
            cell["ratio"] = cell["median_ms"] / max(ort["median_ms"] - binding_ms, 1e-6)
    results["binding_overhead_ms"] = binding_ms
    results["timings"] = [{"model": m, "runtime": r, "threads": t, **c} for (m, r, t), c in cells.items()]
    results["timing_errors"] = {f"{m} on {r}": e for (m, r), e in errors.items()}
    results["geometric_mean_ratio"] = print_table(args, models, checks, timed_singles, cells, binding_ms)


def print_table(args, models, checks, timed_singles, cells, binding_ms):
    print(f"\nmedian latency in ms (median of {args.rounds} interleaved rounds); ratio = plugrt / ONNX Runtime")
    print(f"ONNX Runtime {args.ort_version} (onnxruntime-node), its binding's cost per call "
          f"({binding_ms:.3f} ms) subtracted before the ratio; parts = partitions of the default program\n")
    configs = [DEFAULT_CONFIG] + timed_singles
    header = ["model", "thr", "onnxruntime", "parts"]
    for c in configs:
        header += [c, "ratio"]
    rows = []
    for model in models:
        for threads in args.thread_counts:
            ort = cells.get((model, "onnxruntime", threads))
            parts = checks.get(model, {}).get(DEFAULT_CONFIG, {}).get("partitions")
            row = [model, str(threads), f"{ort['median_ms']:.3f}" if ort else "-", str(parts) if parts else "-"]
            for c in configs:
                cell = cells.get((model, c, threads))
                row += [f"{cell['median_ms']:.3f}", f"{cell['ratio']:.2f}"] if cell and "ratio" in cell else (
                    [f"{cell['median_ms']:.3f}", "-"] if cell else ["-", "-"])
            rows.append(row)
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(cell.rjust(widths[i]) if i > 0 else cell.ljust(widths[i]) for i, cell in enumerate(r)))

    means = {}
    print()
    for c in configs:
        for threads in args.thread_counts:
            ratios = {m: cells[(m, c, threads)]["ratio"] for m in models if "ratio" in cells.get((m, c, threads), {})}
            if not ratios:
                continue
            worst = max(ratios, key=ratios.get)
            means[f"{c}@{threads}"] = geometric_mean(list(ratios.values()))
            print(f"plugrt {c}, {threads} thread(s): geometric mean ratio {means[f'{c}@{threads}']:.2f} over "
                  f"{len(ratios)} models; highest {ratios[worst]:.2f} ({worst})")
    return means


def print_failures(models, manifests, checks):
    """Prints every model that did not export, compile or match; returns how many failures."""
    lines = []
    for model in models:
        if "error" in manifests[model]:
            lines.append(f"  {model}: {manifests[model]['error']}")
            continue
        for config, entry in checks.get(model, {}).items():
            if "error" in entry:
                lines.append(f"  {model} [{config}]: {entry['error']}")
    if lines:
        print("\nnot timed (export, compile or check failed):")
        print("\n".join(lines))
    return len(lines)


if __name__ == "__main__":
    main()
