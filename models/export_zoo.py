#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Exports the model zoo: public architectures with random weights, inputs and PyTorch's outputs.

The zoo is what bench/compare_runtimes.py times and checks: torchvision classification,
segmentation, detection and video models, transformer stacks from torch.nn, a dense
classifier, and the families of zoo_architectures.py (a U-Net, a BERT-style encoder on
token ids, LSTM and GRU taggers, a 1-D audio network), all with random weights
(weights=None, so nothing is downloaded). Inputs are kept small
enough that the whole benchmark runs in about 45 minutes on 2 cores. For each model
NAME it writes, into --out (a build directory: these files are never committed):

    NAME.onnx                 the model (opset 13; swin_t_opset17 at 17)
    NAME.<input>.npy          a seeded input, one file per model input
    NAME.<output>.npy         what PyTorch computes for it, one file per output
    NAME.json                 the manifest: family, input and output names, shapes and files;
                              or {"error": reason} when the model did not export

A model that does not export is reported with the reason and the others go on; the
script then exits with status 1.

    /usr/bin/python3 models/export_zoo.py [--out DIR] [--only NAME,...] [--list]

Needs Debian's python3-torch and python3-torchvision (run it with /usr/bin/python3).
"""
import argparse
import json
import os
import sys
import traceback

from torch import nn

from export_models import EncoderLayer, Mlp3, export_model
from zoo_architectures import (AudioM5, BertEncoder, GruSpeechTagger, LstmTokenTagger, SsdliteNetwork, TokenIds,
                               UNetSmall)

IMAGE = (1, 3, 224, 224)
SEGMENTATION_IMAGE = (1, 3, 128, 128)
CLIP = (1, 3, 8, 56, 56)  # batch, channels, frames, height, width
D_MODEL, HEADS, FEED_FORWARD = 256, 4, 1024
SOURCE_LENGTH, TARGET_LENGTH = 64, 32


def torchvision_model(name, **kwargs):
    import torchvision
    model = getattr(torchvision.models, name)(weights=None, **kwargs)
    # Some heads start at zero (vit_b_32's classifier), which would make every output 0
    # and the check against PyTorch meaningless: give them nn.Linear's default init.
    for module in model.modules():
        weight = getattr(module, "weight", None)
        if isinstance(weight, nn.Parameter) and weight.dim() >= 2 and not weight.detach().any():
            nn.init.kaiming_uniform_(weight, a=5 ** 0.5)
    return model


class SegmentationOutput(nn.Module):
    """torchvision's segmentation models return a dict; ONNX export wants tensors."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def segmentation_model(name):
    import torchvision
    return lambda: SegmentationOutput(
        getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None))


def video_model(name):
    import torchvision
    return lambda: getattr(torchvision.models.video, name)(weights=None)


def distinct_layers(stack):
    """nn.TransformerEncoder/Decoder deep-copy one layer, so every layer starts with the
    same weights (and the exporter stores them once): re-initialise them as nn.Transformer does."""
    for parameter in stack.parameters():
        if parameter.dim() > 1:
            nn.init.xavier_uniform_(parameter)
    return stack


def encoder_stack(num_layers):
    return distinct_layers(nn.TransformerEncoder(
        nn.TransformerEncoderLayer(D_MODEL, HEADS, FEED_FORWARD, dropout=0.0, batch_first=True), num_layers,
        enable_nested_tensor=False))


class DecoderStack(nn.Module):
    """A causal transformer decoder (2 layers) attending to an encoder's output (memory)."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerDecoderLayer(D_MODEL, HEADS, FEED_FORWARD, dropout=0.0, batch_first=True)
        self.decoder = distinct_layers(nn.TransformerDecoder(layer, 2))
        self.register_buffer("causal_mask", nn.Transformer.generate_square_subsequent_mask(TARGET_LENGTH))

    def forward(self, target, memory):
        return self.decoder(target, memory, tgt_mask=self.causal_mask)


class EncoderDecoder(nn.Module):
    """nn.Transformer: 2 encoder and 2 decoder layers, a causal mask on the target."""

    def __init__(self):
        super().__init__()
        self.transformer = nn.Transformer(D_MODEL, HEADS, 2, 2, FEED_FORWARD, dropout=0.0, batch_first=True)
        self.register_buffer("causal_mask", nn.Transformer.generate_square_subsequent_mask(TARGET_LENGTH))

    def forward(self, source, target):
        return self.transformer(source, target, tgt_mask=self.causal_mask)


def classification(name, **kwargs):
    return ("classification", lambda: torchvision_model(name, **kwargs), {"input": IMAGE})


def at_opset(make, opset):
    """make, exported at another opset than the zoo's (a second export of one family)."""
    def made():
        model = make()
        model.onnx_opset = opset
        return model
    return made


SEQUENCE = {"input": (1, SOURCE_LENGTH, D_MODEL)}

# name: (family, constructor, {input name: shape}), in the order the benchmark prints them.
ZOO = {
    "resnet18": classification("resnet18"),
    "resnet50": classification("resnet50"),
    "resnext50_32x4d": classification("resnext50_32x4d"),
    "mobilenet_v2": classification("mobilenet_v2"),
    "mobilenet_v3_small": classification("mobilenet_v3_small"),
    "mobilenet_v3_large": classification("mobilenet_v3_large"),
    "efficientnet_b0": classification("efficientnet_b0"),
    "regnet_y_400mf": classification("regnet_y_400mf"),
    "densenet121": classification("densenet121"),
    "squeezenet1_1": classification("squeezenet1_1"),
    "shufflenet_v2_x1_0": classification("shufflenet_v2_x1_0"),
    "mnasnet1_0": classification("mnasnet1_0"),
    "googlenet": classification("googlenet", init_weights=True, aux_logits=False),
    "convnext_tiny": classification("convnext_tiny"),
    "vit_b_32": classification("vit_b_32"),
    "swin_t": classification("swin_t"),
    "swin_t_opset17": ("classification", at_opset(lambda: torchvision_model("swin_t"), 17), {"input": IMAGE}),
    "maxvit_t": classification("maxvit_t"),
    "inception_v3": classification("inception_v3", init_weights=True, aux_logits=False),
    "regnet_x_400mf": classification("regnet_x_400mf"),
    "fcn_resnet50": ("segmentation", segmentation_model("fcn_resnet50"), {"input": SEGMENTATION_IMAGE}),
    "deeplabv3_mobilenet_v3_large": ("segmentation", segmentation_model("deeplabv3_mobilenet_v3_large"),
                                     {"input": SEGMENTATION_IMAGE}),
    "lraspp_mobilenet_v3_large": ("segmentation", segmentation_model("lraspp_mobilenet_v3_large"),
                                  {"input": SEGMENTATION_IMAGE}),
    "unet_small": ("segmentation", UNetSmall, {"input": SEGMENTATION_IMAGE}),
    "ssdlite320_network": ("detection", SsdliteNetwork, {"input": (1, 3, 320, 320)}),
    "r3d_18": ("video", video_model("r3d_18"), {"input": CLIP}),
    "r2plus1d_18": ("video", video_model("r2plus1d_18"), {"input": CLIP}),
    "mlp3": ("dense", Mlp3, {"input": (16, 784)}),
    "audio_m5": ("audio", AudioM5, {"input": (1, 1, 16000)}),
    "lstm_tagger": ("recurrent", LstmTokenTagger, {"input": TokenIds((1, 64), 5000)}),
    "gru_speech": ("recurrent", GruSpeechTagger, {"input": (1, 100, 40)}),
    "bert_encoder": ("transformer", BertEncoder, {"input": TokenIds((1, 128), 8000)}),
    "encoder_layer": ("transformer", EncoderLayer, SEQUENCE),
    "transformer_encoder": ("transformer", lambda: encoder_stack(4), SEQUENCE),
    "transformer_decoder": ("transformer", DecoderStack,
                            {"target": (1, TARGET_LENGTH, D_MODEL), "memory": (1, SOURCE_LENGTH, D_MODEL)}),
    "transformer": ("transformer", EncoderDecoder,
                    {"source": (1, SOURCE_LENGTH, D_MODEL), "target": (1, TARGET_LENGTH, D_MODEL)}),
}


def export_one(name, out):
    """Exports one zoo model and writes its manifest; returns None, or why it failed."""
    family, make, input_shapes = ZOO[name]
    manifest_path = os.path.join(out, name + ".json")
    try:
        input_names, output_names = export_model(name, make, input_shapes, out)
    except Exception as error:  # any failure of torch's exporter is a finding to report
        reason = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        traceback.print_exc(file=sys.stderr)
        with open(manifest_path, "w") as f:
            json.dump({"name": name, "family": family, "error": f"export failed: {reason}"}, f, indent=2)
        return reason

    def tensor_entry(tensor_name):
        import numpy as np
        file = f"{name}.{tensor_name}.npy"
        return {"name": tensor_name, "file": file, "shape": list(np.load(os.path.join(out, file)).shape)}

    with open(manifest_path, "w") as f:
        json.dump({"name": name, "family": family, "onnx": name + ".onnx",
                   "inputs": [tensor_entry(n) for n in input_names],
                   "outputs": [tensor_entry(n) for n in output_names]}, f, indent=2)
    return None


def describe(spec):
    """1x3x224x224, or int64[1x128] for token ids."""
    if isinstance(spec, TokenIds):
        return f"int64[{'x'.join(map(str, spec.shape))}]"
    return "x".join(map(str, spec))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="zoo", help="output directory (default: ./zoo)")
    parser.add_argument("--only", help="comma-separated model names (default: the whole zoo)")
    parser.add_argument("--list", action="store_true", help="print the zoo's model names and families, and stop")
    args = parser.parse_args()
    if args.list:
        for name, (family, _, shapes) in ZOO.items():
            print(f"{name}\t{family}\t" + " ".join(f"{n}={describe(s)}" for n, s in shapes.items()))
        return 0
    names = [n for n in args.only.split(",") if n] if args.only else list(ZOO)
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        print(f"export_zoo: --only: unknown model(s) {', '.join(unknown)}; known: {', '.join(ZOO)}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    failed = {}
    for name in names:
        reason = export_one(name, args.out)
        if reason is not None:
            failed[name] = reason
    for name, reason in failed.items():
        print(f"export_zoo: {name}: export failed: {reason}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
