#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`plugrt quantize` writes models that another runtime runs the same: ONNX Runtime.

Quantizes two bundled models, the CNN statically (calibrated on seeded noise) and the MLP
dynamically, runs each on ONNX Runtime (onnxruntime-node, installed by
test/real_models/fetch.sh) and with plugrt on portable and on every backend built here,
and checks every output: |plugrt - onnxruntime| <= 1e-5 * max(1, max |onnxruntime|).

    ort_agreement.py --plugrt PLUGRT --models MODELS_DIR --ort ORT_DIR
Exit 77 (skipped) only when ONNX Runtime is not installed (npm was unreachable).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "..", "..", "test", "real_models", "ort_run.js")


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{result.stdout}{result.stderr}")
    return result.stdout


def quantized_models(plugrt, models, work):
    """(name, quantized model, input .npy) for the static CNN and the dynamic MLP."""
    rng = np.random.default_rng(11)
    shape = np.load(os.path.join(models, "tiny_cnn.input.npy")).shape
    calibration = os.path.join(work, "calibration")
    os.makedirs(calibration)
    for k in range(8):
        np.save(os.path.join(calibration, f"sample{k}.npy"), rng.standard_normal(shape).astype(np.float32))
    cnn_input = os.path.join(work, "cnn_input.npy")
    np.save(cnn_input, rng.standard_normal(shape).astype(np.float32))
    cnn = os.path.join(work, "tiny_cnn.int8.onnx")
    run([plugrt, "quantize", os.path.join(models, "tiny_cnn.onnx"), "-o", cnn, "--calibrate", calibration])
    mlp = os.path.join(work, "mlp.int8.onnx")
    run([plugrt, "quantize", os.path.join(models, "mlp.onnx"), "-o", mlp, "--dynamic"])
    return [("tiny_cnn static", cnn, cnn_input), ("mlp dynamic", mlp, os.path.join(models, "mlp.input.npy"))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plugrt", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--ort", required=True, help="where onnxruntime-node is installed")
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.ort, "node_modules", "onnxruntime-node")) or not shutil.which("node"):
        print(f"skipped: ONNX Runtime is not installed in {args.ort} (test/real_models/fetch.sh installs it)")
        return 77
    backends = json.loads(run([args.plugrt, "backends", "--json"]))["backends"]
    sets = ["portable"] + sorted(b["name"] for b in backends if b.get("available") and b.get("has_aot")
                                 and b["name"] != "portable" and not b.get("shadowed_by"))
    work = tempfile.mkdtemp(prefix="plugrt-quantize-ort-")
    failures = 0
    try:
        for name, model, x in quantized_models(args.plugrt, args.models, work):
            ort_dir = os.path.join(work, name.replace(" ", "_") + "_ort")
            jobs = os.path.join(work, "jobs.json")
            with open(jobs, "w") as f:
                json.dump([{"model": model, "inputs": {"input": x}, "out_dir": ort_dir}], f)
            run(["node", ORT_RUN, "--ort", args.ort, jobs])
            for backend in sets:
                program, out = os.path.join(work, "p.prt"), os.path.join(work, f"out_{backend}")
                run([args.plugrt, "compile", model, "-o", program, "--backends", backend])
                run([args.plugrt, "run", program, "--input", f"input={x}", "--output-dir", out,
                     "--placement", "as-compiled"])
                for want_file in glob.glob(os.path.join(ort_dir, "*.npy")):
                    want = np.load(want_file)
                    got = np.load(os.path.join(out, os.path.basename(want_file)))
                    worst = float(np.abs(got.astype(np.float64) - want).max())
                    tolerance = 1e-5 * max(1.0, float(np.abs(want).max()))
                    ok = got.shape == want.shape and worst <= tolerance
                    failures += 0 if ok else 1
                    print(f"{name} on {backend}: {os.path.basename(want_file)} max |plugrt - onnxruntime| "
                          f"{worst:.3g} (tolerance {tolerance:.3g}) {'pass' if ok else 'FAIL'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
