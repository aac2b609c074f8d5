#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The real-model corpus test: pretrained ONNX models from public npm packages, compiled
and run with the `plugrt` command, every output checked against ONNX Runtime's.

    /usr/bin/python3 test/real_models/check_models.py --build-dir BUILD [--work-dir DIR]
        [--models ID,ID] [--backend-sets default,portable,xnnpack,onednn]

Budget: under 4 minutes on 2 cores once the corpus is fetched (ctest allows 600 s, for a fetch too).
The corpus (manifest.toml) is fetched and prepared by fetch.sh into DIR (default
BUILD/real-models); when it is not there this script runs fetch.sh first.

For each model, and each backend set:
  default   `plugrt compile MODEL -o X.prt` (no --backends: every backend found, the
            default placement), run as a user runs it (`plugrt run`, placement at load);
  NAME      `plugrt compile MODEL --backends NAME` for each backend the build has
            (portable, xnnpack, onednn), run as compiled (--placement as-compiled),
then each output is compared with ONNX Runtime's (onnxruntime-node, 1 thread):
|plugrt - onnxruntime| <= rtol * max(1, max |onnxruntime|) (manifest.toml's rtol).
A fresh cache directory (PLUGRT_CACHE_DIR) keeps the user's cost profile and blob cache
out of it. Prints a table: model, package@version, backend set, where it ran, the largest
absolute difference, the tolerance, and the verdict.

A model the manifest expects to work fails the test when plugrt refuses it, cannot run
it, or gives a wrong output. A model the manifest lists as refused passes while plugrt
refuses it, and also when it compiles and is right (the table says to update the
manifest), but fails when it compiles and is wrong. Exits 0 when every check passes, 1
when one fails, 77 (ctest's skip) when the corpus cannot be fetched because npm cannot
reach its registry.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import corpus

SKIPPED = 77
DEFAULT_SET = "default"
COMMAND_TIMEOUT = 180  # seconds, for one compile or one run


class Check:
    """One model on one backend set: what happened, and whether that is right."""

    def __init__(self, model, backend_set):
        self.model, self.backend_set = model, backend_set
        self.ran_on = ""
        self.error = None  # the worst |plugrt - onnxruntime|
        self.tolerance = None
        self.result = ""
        self.passed = False


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--work-dir", help="where fetch.sh puts the corpus (default BUILD/real-models)")
    parser.add_argument("--models", help="comma-separated model ids (default: all)")
    parser.add_argument("--backend-sets", help="comma-separated: default and backend names (default: all built)")
    return parser.parse_args()


def ensure_corpus(work_dir):
    """Runs fetch.sh unless the corpus is prepared; exits 77 when npm cannot fetch it."""
    if corpus.is_prepared(work_dir):
        return
    print(f"real models: the corpus is not in {work_dir}; fetching it", flush=True)
    status = subprocess.run(["bash", os.path.join(corpus.HERE, "fetch.sh"), work_dir]).returncode
    if status == SKIPPED:
        print("real models: SKIPPED: npm cannot reach its registry, so there is no corpus to check", flush=True)
        sys.exit(SKIPPED)
    if status != 0 or not corpus.is_prepared(work_dir):
        sys.exit(f"real models: fetch.sh failed (exit status {status})")


def run(command, env):
    """(exit status, stdout, stderr); a command past COMMAND_TIMEOUT gets status None."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=COMMAND_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return result.returncode, result.stdout, result.stderr


def abnormal_end(status):
    """What went wrong with a command that did not exit by itself, or None."""
    if status is None:
        return f"timed out after {COMMAND_TIMEOUT} s"
    return f"crashed (signal {-status})" if status < 0 else None


def last_line(text, prefix):
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    line = lines[-1] if lines else "no message"
    return line[len(prefix):] if line.startswith(prefix) else line


def backend_sets(plugrt, env):
    """'default', then each backend this build can compile for, portable first."""
    status, out, _ = run([plugrt, "backends", "--json"], env)
    names = set()
    if status == 0:
        names = {b["name"] for b in json.loads(out).get("backends", [])
                 if b.get("available", True) and b.get("has_aot", True) and not b.get("shadowed_by")}
    return [DEFAULT_SET, "portable"] + sorted(names - {"portable"})


def compile_model(plugrt, work_dir, model, backend_set, program, env):
    """`plugrt compile`: (its JSON summary, None, None), (None, why it refused, None), or
    (None, None, how it crashed or timed out)."""
    command = [plugrt, "compile", corpus.model_path(work_dir, model), "-o", program, "--json"]
    command += [] if backend_set == DEFAULT_SET else ["--backends", backend_set]
    for shape in model["input_shapes"]:
        command += ["--input-shape", shape]
    for value in model["input_values"]:
        command += ["--input-value", value]
    for dim in model["dims"]:
        command += ["--dim", dim]
    if model["compute_dtype"]:
        command += ["--compute-dtype", model["compute_dtype"]]
    status, out, err = run(command, env)
    if abnormal_end(status):
        return None, None, f"compile {abnormal_end(status)}"
    if status != 0:
        return None, last_line(err, "plugrt compile: ").replace(corpus.model_path(work_dir, model) + ": ", ""), None
    return json.loads(out), None, None


def run_program(plugrt, work_dir, model, backend_set, program, out_dir, env):
    """`plugrt run` on the prepared inputs; returns (its JSON report, None) or (None, why it failed)."""
    command = [plugrt, "run", program, "--json", "--report", "--output-dir", out_dir]
    command += [] if backend_set == DEFAULT_SET else ["--placement", "as-compiled"]
    for name, path in corpus.input_files(work_dir, model).items():
        if name not in corpus.bound_inputs(model):
            command += ["--input", f"{name}={path}"]
    status, out, err = run(command, env)
    if abnormal_end(status):
        return None, abnormal_end(status)
    if status != 0:
        return None, last_line(err, "plugrt run: ")
    return json.loads(out), None


def where_it_ran(summary, report):
    """'3: onednn x2, portable': the partitions and where each ran, from the load report."""
    backends = [d["backend"] for d in report.get("placement", [])]
    if not backends:
        backends = [p.get("backend", "?") for p in summary.get("partitions", [])]
    counts = {b: backends.count(b) for b in sorted(set(backends))}
    text = ", ".join(f"{b} x{n}" if n > 1 else b for b, n in counts.items()) or "portable"
    fell_back = sum(1 for d in report.get("placement", []) if d.get("fell_back"))
    return f"{len(backends)}: {text}" + (f" ({fell_back} fell back)" if fell_back else "")


def compare_outputs(work_dir, model, report):
    """(worst |difference|, its tolerance, None) over every output, or (.., .., what is wrong)."""
    with open(os.path.join(corpus.reference_dir(work_dir, model), "outputs.json")) as f:
        references = json.load(f)["outputs"]
    produced = {o["name"]: o["file"] for o in report["outputs"]}
    worst = (0.0, 0.0, -1.0)  # difference, tolerance, difference / tolerance
    for reference in references:
        if reference["name"] not in produced:
            return None, None, f"no output {reference['name']}"
        want = np.load(os.path.join(corpus.reference_dir(work_dir, model), reference["file"]))
        got = np.load(produced[reference["name"]])
        if got.shape != want.shape:
            return None, None, f"output {reference['name']} has shape {got.shape}, ONNX Runtime's {want.shape}"
        difference, tolerance = output_difference(got, want, model["rtol"])
        if difference / tolerance > worst[2]:
            worst = (difference, tolerance, difference / tolerance)
    return worst[0], worst[1], None


def output_difference(got, want, rtol):
    """The largest |got - want| (inf where only one is NaN) and the tolerance for `want`."""
    if not np.issubdtype(want.dtype, np.floating):
        return (0.0 if np.array_equal(got, want) else float("inf")), 0.5
    got, want = got.astype(np.float64), want.astype(np.float64)
    if np.any(np.isnan(got) != np.isnan(want)):
        return float("inf"), 1.0
    both = ~np.isnan(want)
    difference = float(np.max(np.abs(got[both] - want[both]), initial=0.0))
    scale = max(1.0, float(np.max(np.abs(want[both]), initial=0.0)))
    return difference, rtol * scale


def judge(check, refusal, problem):
    """Sets check.result and check.passed from what happened: a refusal, a problem (a
    crash, a failed run, a wrong output), or neither."""
    expected = corpus.expected_refusal(check.model)
    if refusal is not None:
        check.passed = expected is not None
        check.result = ("" if check.passed else "FAIL: ") + f"refused: {refusal}"
    elif problem is not None:
        check.result = f"FAIL: {problem}"
    else:
        check.passed = True
        check.result = "pass" if expected is None else "pass (compiles now: mark it ok in manifest.toml)"


def check_model(plugrt, work_dir, model, backend_set, scratch, env):
    check = Check(model, backend_set)
    program = os.path.join(scratch, f"{model['id']}.{backend_set}.prt")
    summary, refusal, failure = compile_model(plugrt, work_dir, model, backend_set, program, env)
    if refusal is not None or failure is not None:
        judge(check, refusal, failure)
        return check
    out_dir = os.path.join(scratch, f"{model['id']}.{backend_set}")
    report, failure = run_program(plugrt, work_dir, model, backend_set, program, out_dir, env)
    if failure is not None:
        judge(check, None, f"run failed: {failure}")
        return check
    check.ran_on = where_it_ran(summary, report)
    check.error, check.tolerance, problem = compare_outputs(work_dir, model, report)
    if problem is None and check.error > check.tolerance:
        problem = f"differs from ONNX Runtime ({check.error:.3g} > {check.tolerance:.3g})"
    judge(check, None, problem)
    return check


def shortened(text, limit=200):
    """`text` with long quoted names cut to their last 20 characters, and then to `limit`."""
    text = re.sub(r"'([^'\s]{24,})'", lambda m: "'..." + m.group(1)[-20:] + "'", text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def print_table(manifest, checks):
    header = ("model", "package@version", "backends", "ran on (partitions)", "max abs err", "tolerance", "result")
    rows = [header]
    for c in checks:
        rows.append((c.model["id"], corpus.package_label(manifest, c.model["package"]), c.backend_set, c.ran_on,
                     "" if c.error is None else f"{c.error:.3g}", "" if c.tolerance is None else f"{c.tolerance:.3g}",
                     shortened(c.result)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    for index, row in enumerate(rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1])
        if index == 0:
            print("  ".join("-" * width for width in widths) + "  " + "-" * 6)


def selected(items, wanted, key):
    if not wanted:
        return items
    names = wanted.split(",")
    unknown = set(names) - {key(item) for item in items}
    if unknown:
        sys.exit(f"real models: unknown: {', '.join(sorted(unknown))}")
    return [item for item in items if key(item) in names]


def main():
    args = parse_args()
    build_dir = os.path.abspath(args.build_dir)
    work_dir = os.path.abspath(args.work_dir or os.path.join(build_dir, "real-models"))
    plugrt = os.path.join(build_dir, "bin", "plugrt")
    if not os.access(plugrt, os.X_OK):
        sys.exit(f"real models: no {plugrt}: build plugrt first")
    manifest = corpus.load_manifest()
    models = selected(manifest["model"], args.models, lambda m: m["id"])
    ensure_corpus(work_dir)
    scratch = os.path.join(work_dir, "programs")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    env = dict(os.environ, PLUGRT_CACHE_DIR=tempfile.mkdtemp(prefix="cache.", dir=scratch))
    sets = selected(backend_sets(plugrt, env), args.backend_sets, lambda s: s)
    start = time.monotonic()
    checks = []
    for model in models:
        for backend_set in sets:
            checks.append(check_model(plugrt, work_dir, model, backend_set, scratch, env))
            print(f"real models: {model['id']} on {backend_set}: {checks[-1].result}", flush=True)
    print()
    print_table(manifest, checks)
    failed = [c for c in checks if not c.passed]
    print(f"\nreal models: {len(models)} models x {len(sets)} backend sets in {time.monotonic() - start:.0f} s: "
          f"{len(checks) - len(failed)} checks passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
