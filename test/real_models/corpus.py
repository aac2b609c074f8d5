# SPDX-License-Identifier: Apache-2.0
"""The real-model corpus as the scripts beside this file see it: the manifest and where
fetch.sh and prepare.py put things in the work directory (default BUILD/real-models).

    WORK/packages/<package>/package/...   each npm package's files (npm pack, extracted)
    WORK/ort/node_modules/onnxruntime-node
    WORK/data/inputs/<file>.npy           the inputs prepare.py makes
    WORK/data/reference/<model>/          ONNX Runtime's outputs (outputs.json, *.npy)
    WORK/data/converted/<model>.onnx      a package's model converted (the manifest's `convert`)
                                          or put together from its chunks (`chunks`)
    WORK/data/prepared                    stamp: what the data was prepared from
"""
import hashlib
import os
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "manifest.toml")
EXPECT_OK = "ok"
# Set to 1 to take the models the manifest marks `large` too (fetch, prepare, check).
LARGE_VARIABLE = "PLUGRT_REAL_MODELS_LARGE"


def load_manifest(path=MANIFEST):
    with open(path, "rb") as f:
        manifest = tomllib.load(f)
    for model in manifest["model"]:
        model.setdefault("input_shapes", [])
        model.setdefault("input_values", [])  # NAME=V,...: bound at compile time (--input-value)
        model.setdefault("dims", [])  # NAME=MIN..MAX: dimensions that vary (--dim)
        model.setdefault("rtol", manifest["check"]["rtol"])
        model.setdefault("convert", "")  # "float16": the package's model, made float16 (float16.py)
        model.setdefault("compute_dtype", "")  # what `plugrt compile --compute-dtype` is given, if anything
        model.setdefault("chunks", "")  # a key of `file` (a resources.json): the model is its chunks
        model.setdefault("large", False)  # only with PLUGRT_REAL_MODELS_LARGE=1
        if model["package"] not in manifest["package"]:
            raise ValueError(f"model {model['id']}: no [package.\"{model['package']}\"]")
    if os.environ.get(LARGE_VARIABLE) != "1":
        manifest["model"] = [m for m in manifest["model"] if not m["large"]]
        used = {m["package"] for m in manifest["model"]}
        manifest["package"] = {name: p for name, p in manifest["package"].items() if name in used}
    return manifest


def package_label(manifest, name):
    return f"{name}@{manifest['package'][name]['version']}"


def package_dir(work_dir, name):
    """Where a package's tarball is extracted ('@scope/name' -> 'scope+name')."""
    return os.path.join(work_dir, "packages", name.lstrip("@").replace("/", "+"))


def package_model_path(work_dir, model):
    return os.path.join(package_dir(work_dir, model["package"]), "package", model["file"])


def model_path(work_dir, model):
    """The model the checks run: the package's file, or the converted copy prepare.py makes."""
    if model["convert"] or model["chunks"]:
        return os.path.join(work_dir, "data", "converted", f"{model['id']}.onnx")
    return package_model_path(work_dir, model)


def ort_dir(work_dir):
    return os.path.join(work_dir, "ort")


def inputs_dir(work_dir):
    return os.path.join(work_dir, "data", "inputs")


def reference_dir(work_dir, model):
    return os.path.join(work_dir, "data", "reference", model["id"])


def input_files(work_dir, model):
    """{input name: .npy path} of a model (ONNX Runtime's feeds; plugrt gets those not bound)."""
    return {name: os.path.join(inputs_dir(work_dir), file) for name, file in model["inputs"].items()}


def bound_inputs(model):
    """The names of the inputs the manifest binds at compile time."""
    return {value.split("=", 1)[0] for value in model["input_values"]}


def expected_refusal(model):
    """The reason the manifest gives for a model plugrt refuses, or None when it expects 'ok'."""
    expect = model["expect"]
    if expect == EXPECT_OK:
        return None
    if not expect.startswith("refused:"):
        raise ValueError(f"model {model['id']}: expect is 'ok' or 'refused: <reason>', not '{expect}'")
    return expect[len("refused:"):].strip()


def data_fingerprint():
    """A hash of what the prepared data depends on: the packages, the models' files and
    inputs, ONNX Runtime's version and the preparing scripts (not expectations or tolerances)."""
    manifest = load_manifest()
    used = [{key: model[key] for key in ("id", "package", "file", "inputs", "input_shapes", "convert", "chunks")}
            for model in manifest["model"]]
    digest = hashlib.sha256(repr((manifest["package"], used, manifest["check"]["onnxruntime"])).encode())
    for path in (os.path.join(HERE, "prepare.py"), os.path.join(HERE, "ort_run.js"), os.path.join(HERE, "float16.py")):
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def prepared_stamp(work_dir):
    return os.path.join(work_dir, "data", "prepared")


def is_prepared(work_dir):
    try:
        with open(prepared_stamp(work_dir)) as f:
            return f.read().strip() == data_fingerprint()
    except OSError:
        return False
