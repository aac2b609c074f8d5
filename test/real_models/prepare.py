#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Makes the real-model corpus' inputs and takes ONNX Runtime's outputs for them.

    /usr/bin/python3 test/real_models/prepare.py --work-dir BUILD/real-models

Run by fetch.sh once the packages and onnxruntime-node are in the work directory.
The inputs are what the models' users feed them:
  - speech: espeak-ng says a sentence, sox resamples it to 16 kHz mono 16-bit, and the
    first 4 s are kept; openWakeWord's melspectrogram takes the samples at int16 scale,
    Silero VAD a 512-sample chunk in [-1, 1] with the state its preceding chunks left
    (ONNX Runtime runs those chunks);
  - openWakeWord's pipeline: the embedding model takes 76-frame windows, every 8 frames,
    of ONNX Runtime's melspectrogram output / 10 + 2, and each wake-word head the last N
    of ONNX Runtime's embeddings;
  - OCR: text rendered with PIL in DejaVu Sans, normalised as PaddleOCR does: a page for
    the detector, a line for the recogniser, a line upright and upside down for the
    direction classifier.
Writes the stamp corpus.prepared_stamp() last, so an interrupted run is redone.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import wave

import numpy as np
from PIL import Image, ImageDraw, ImageFont

import corpus
import float16

SAMPLE_RATE = 16000
SPEECH_SAMPLES = 4 * SAMPLE_RATE
SPEECH_TEXT = "Hey Jarvis, set a timer for five minutes. Alexa, what is the weather like today?"
VAD_CHUNK = 512
VAD_WARM_CHUNKS = 8  # chunks of speech the VAD state has seen before the tested chunk
MEL_WINDOW, MEL_STEP = 76, 8
EMBEDDING_COUNTS = (16, 22, 24, 25, 34)  # what the wake-word heads take
# Each Silero VAD's recurrent state: (input, the output that carries it on, shape, file).
VAD_STATES = {
    "silero_vad_v4": [("h", "hn", (2, 1, 64), "vad_v4_h.npy"), ("c", "cn", (2, 1, 64), "vad_v4_c.npy")],
    "silero_vad_v5": [("state", "stateN", (2, 1, 128), "vad_v5_state.npy")],
    "silero_vad_v6": [("state", "stateN", (2, 1, 128), "vad_v6_state.npy")],
}
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
OCR_LINE = "plugrt runs ONNX models 2024"
OCR_PAGE = ["Invoice 2024-117", "Total due: 1,280.50 EUR", "Pay before 30 June", "Thank you!"]


def save(directory, name, array):
    np.save(os.path.join(directory, name), array)


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"prepare: {' '.join(command)} failed: {(result.stdout + result.stderr).strip()}")


# --- speech ---

def speak(text, work):
    """espeak-ng's speech, resampled by sox: int16 samples at 16 kHz, mono."""
    raw, resampled = os.path.join(work, "raw.wav"), os.path.join(work, "speech.wav")
    run(["espeak-ng", "-w", raw, text])
    run(["sox", raw, "-r", str(SAMPLE_RATE), "-c", "1", "-b", "16", resampled])
    with wave.open(resampled, "rb") as f:
        return np.frombuffer(f.readframes(f.getnframes()), dtype="<i2")


def make_speech_inputs(out):
    with tempfile.TemporaryDirectory() as work:
        samples = speak(SPEECH_TEXT, work)
    samples = np.pad(samples, (0, max(0, SPEECH_SAMPLES - len(samples))))[:SPEECH_SAMPLES]
    save(out, "speech_4s.npy", samples.astype(np.float32)[None, :])
    unit = samples.astype(np.float32) / 32768.0
    chunks = unit[: (VAD_WARM_CHUNKS + 1) * VAD_CHUNK].reshape(-1, 1, VAD_CHUNK)
    for index in range(VAD_WARM_CHUNKS):
        save(out, f"vad_warm_{index}.npy", chunks[index])
    save(out, "vad_chunk.npy", chunks[VAD_WARM_CHUNKS])
    save(out, "sample_rate.npy", np.array(SAMPLE_RATE, dtype=np.int64))


# --- OCR images ---

def render(lines, size, font_size):
    """Dark text lines on a light page, as an RGB array."""
    image = Image.new("RGB", size, (245, 243, 236))
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, font_size)
    for row, line in enumerate(lines):
        draw.text((12, 8 + row * int(font_size * 1.6)), line, font=font, fill=(20, 24, 40))
    return np.asarray(image, dtype=np.float32)


def detector_input(rgb):
    """PaddleOCR's detector preprocessing: BGR, ImageNet mean and std, NCHW."""
    bgr = rgb[:, :, ::-1] / 255.0
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    return ((bgr - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)


def line_input(rgb, width):
    """PaddleOCR's recogniser and classifier preprocessing: height 48, (x/255-0.5)/0.5,
    padded with zeros on the right to `width`."""
    height = 48
    scaled_width = min(width, round(rgb.shape[1] * height / rgb.shape[0]))
    image = Image.fromarray(rgb.astype(np.uint8)).resize((scaled_width, height), Image.BILINEAR)
    chw = (np.asarray(image, dtype=np.float32)[:, :, ::-1] / 255.0 - 0.5) / 0.5
    padded = np.zeros((height, width, 3), dtype=np.float32)
    padded[:, :scaled_width] = chw
    return padded.transpose(2, 0, 1)[None]


def make_ocr_inputs(out):
    save(out, "ocr_page.npy", detector_input(render(OCR_PAGE, (512, 256), 30)))
    line = render([OCR_LINE], (560, 48), 32)
    save(out, "ocr_line.npy", line_input(line, 320))
    save(out, "ocr_line_wide.npy", line_input(line, 560))  # the whole line, unpadded
    upright = line_input(line, 192)
    save(out, "ocr_cls_pair.npy", np.concatenate([upright, upright[:, :, ::-1, ::-1]]))


# --- ONNX Runtime ---

def run_ort(work_dir, jobs):
    """Runs ort_run.js on `jobs` (model, inputs, out_dir) in one Node process."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(jobs, f)
    try:
        run(["node", os.path.join(corpus.HERE, "ort_run.js"), "--ort", corpus.ort_dir(work_dir), f.name])
    finally:
        os.unlink(f.name)


def reference_job(work_dir, model):
    return {"model": corpus.model_path(work_dir, model), "inputs": corpus.input_files(work_dir, model),
            "out_dir": corpus.reference_dir(work_dir, model)}


def vad_warm_job(work_dir, model, states, index):
    """One warm-up chunk through a VAD, from the state in its state files."""
    out = corpus.inputs_dir(work_dir)
    inputs = {"input": os.path.join(out, f"vad_warm_{index}.npy"), "sr": os.path.join(out, "sample_rate.npy")}
    inputs.update({name: os.path.join(out, file) for name, _, _, file in states})
    return {"model": corpus.model_path(work_dir, model), "inputs": inputs,
            "out_dir": os.path.join(out, "warm", model["id"])}


def warm_vad_states(work_dir, models):
    """Runs each Silero VAD over the warm-up chunks, from a zero state; leaves the state
    after the last one in the VAD's state files."""
    out = corpus.inputs_dir(work_dir)
    for states in VAD_STATES.values():
        for _, _, shape, file in states:
            save(out, file, np.zeros(shape, np.float32))
    for index in range(VAD_WARM_CHUNKS):
        run_ort(work_dir, [vad_warm_job(work_dir, models[model_id], states, index)
                           for model_id, states in VAD_STATES.items()])
        for model_id, states in VAD_STATES.items():
            for _, output, _, file in states:
                save(out, file, np.load(os.path.join(out, "warm", model_id, output + ".npy")))


def reference_output(work_dir, model):
    """A model's first reference output, as ONNX Runtime gave it."""
    directory = corpus.reference_dir(work_dir, model)
    with open(os.path.join(directory, "outputs.json")) as f:
        return np.load(os.path.join(directory, json.load(f)["outputs"][0]["file"]))


def make_wake_word_inputs(work_dir, models):
    """openWakeWord's pipeline on ONNX Runtime's outputs: mel windows, then embeddings."""
    out = corpus.inputs_dir(work_dir)
    run_ort(work_dir, [reference_job(work_dir, models["oww_melspectrogram"])])
    mel = reference_output(work_dir, models["oww_melspectrogram"])[0, 0] / 10.0 + 2.0  # (frames, 32)
    starts = range(0, mel.shape[0] - MEL_WINDOW + 1, MEL_STEP)
    save(out, "mel_windows.npy", np.stack([mel[s:s + MEL_WINDOW] for s in starts])[..., None].astype(np.float32))
    run_ort(work_dir, [reference_job(work_dir, models["oww_embedding"])])
    embeddings = reference_output(work_dir, models["oww_embedding"]).reshape(-1, 96)
    for count in EMBEDDING_COUNTS:
        save(out, f"embeddings_{count}.npy", embeddings[-count:][None].astype(np.float32))


def make_converted_models(work_dir, models):
    """The float16 copies of the models the manifest converts, and their inputs: each
    `NAME.f16.npy` input is NAME.npy in float16."""
    os.makedirs(os.path.join(work_dir, "data", "converted"), exist_ok=True)
    out = corpus.inputs_dir(work_dir)
    for model in models.values():
        if model["convert"] != "float16":
            continue
        float16.convert(corpus.package_model_path(work_dir, model), corpus.model_path(work_dir, model))
        for file in model["inputs"].values():
            if file.endswith(".f16.npy"):
                save(out, file, np.load(os.path.join(out, file[:-len(".f16.npy")] + ".npy")).astype(np.float16))


def make_chunked_models(work_dir, models):
    """The models a package ships in chunks (`chunks`: the key of the model in the
    resources.json that is `file`; each chunk is a file named by its hash beside it)."""
    os.makedirs(os.path.join(work_dir, "data", "converted"), exist_ok=True)
    for model in models.values():
        if not model["chunks"]:
            continue
        resources = corpus.package_model_path(work_dir, model)
        with open(resources) as f:
            chunks = json.load(f)[model["chunks"]]["chunks"]
        with open(corpus.model_path(work_dir, model), "wb") as out:
            for chunk in chunks:
                with open(os.path.join(os.path.dirname(resources), chunk["hash"]), "rb") as f:
                    data = f.read()
                if len(data) != chunk["offsets"][1] - chunk["offsets"][0]:
                    sys.exit(f"prepare: {model['id']}: chunk {chunk['hash']} has {len(data)} bytes")
                out.write(data)


def make_photo_input(out):
    """photo_1024: a 1024 x 1024 scene drawn with PIL (a figure, a ball and a box on a
    graded wall and floor), normalized as @imgly/background-removal does: (x - 128) / 256."""
    size = 1024
    image = Image.new("RGB", (size, size))
    draw = ImageDraw.Draw(image)
    for y in range(size):  # wall, then floor
        shade = 200 - y // 8 if y < 640 else 120 + (y - 640) // 6
        draw.line([(0, y), (size, y)], fill=(shade, shade - 10, shade - 30))
    draw.ellipse([430, 180, 590, 340], fill=(224, 172, 140))  # head
    draw.rounded_rectangle([380, 330, 640, 760], radius=60, fill=(40, 80, 160))  # body
    draw.rectangle([400, 750, 480, 980], fill=(50, 50, 60))  # legs
    draw.rectangle([540, 750, 620, 980], fill=(50, 50, 60))
    draw.ellipse([120, 820, 300, 1000], fill=(220, 40, 40))  # ball
    draw.rectangle([720, 620, 940, 900], fill=(150, 110, 60), outline=(90, 60, 30), width=8)  # box
    x = (np.asarray(image, dtype=np.float32) - 128.0) / 256.0
    save(out, "photo_1024.npy", x.transpose(2, 0, 1)[None].copy())


def check_input_shapes(work_dir, model):
    """Each --input-shape of the manifest is the shape of the input prepared for it."""
    files = corpus.input_files(work_dir, model)
    for text in model["input_shapes"]:
        name, dims = text.split("=")
        shape = tuple(np.load(files[name]).shape)
        if shape != tuple(int(d) for d in dims.split(",")):
            sys.exit(f"prepare: {model['id']}: input {name} is {shape}, the manifest says --input-shape {text}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()
    work_dir = os.path.abspath(args.work_dir)
    manifest = corpus.load_manifest()
    models = {m["id"]: m for m in manifest["model"]}
    os.makedirs(corpus.inputs_dir(work_dir), exist_ok=True)
    print("prepare: speech (espeak-ng, sox) and OCR images (PIL)", flush=True)
    make_speech_inputs(corpus.inputs_dir(work_dir))
    make_ocr_inputs(corpus.inputs_dir(work_dir))
    print("prepare: Silero VAD states and openWakeWord's pipeline (onnxruntime-node)", flush=True)
    warm_vad_states(work_dir, models)
    make_wake_word_inputs(work_dir, models)
    print("prepare: float16 copies of the models the manifest converts", flush=True)
    make_converted_models(work_dir, models)
    if any(m["chunks"] for m in models.values()):
        print("prepare: models shipped in chunks, and a photo-like scene (PIL)", flush=True)
        make_chunked_models(work_dir, models)
        make_photo_input(corpus.inputs_dir(work_dir))
    print(f"prepare: reference outputs of {len(models)} models (onnxruntime-node)", flush=True)
    for model in models.values():
        check_input_shapes(work_dir, model)
    run_ort(work_dir, [reference_job(work_dir, m) for m in models.values()])
    with open(corpus.prepared_stamp(work_dir), "w") as f:
        f.write(corpus.data_fingerprint() + "\n")


if __name__ == "__main__":
    main()
