#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Exports the small models plugrt bundles, with inputs and PyTorch's outputs.

Uses Debian's python3-torch (run it with /usr/bin/python3). For each model NAME it
writes NAME.onnx, NAME.input.npy (a fixed input) and NAME.output.npy (what PyTorch
computes for it), so tests can check plugrt's results against PyTorch's. One model is
written with onnx.helper instead: non_max_suppression, a single NonMaxSuppression node,
its five inputs as NAME.<input>.npy and the boxes torchvision's nms selects.

    /usr/bin/python3 models/export_models.py [--out DIR] [--only NAME] [--large]

--large also exports the benchmark models (random weights, generated on demand, never
committed): torchvision's mobilenet_v2 and resnet18 (about 14 and 45 MB), a 3-layer MLP
and one transformer encoder layer of BERT-like width (d_model 256).
"""
import argparse
import os

import numpy as np
import torch
from torch import nn

OPSET = 13


class TinyCnn(nn.Module):
    """A small image classifier: conv blocks with batch norm, a depthwise block,
    hardswish, global pooling and a classifier head. Input 1x3x32x32."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=1, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU6(),
            nn.Conv2d(32, 32, 3, padding=1, groups=32), nn.Hardswish(),
            nn.Conv2d(32, 64, 1), nn.ReLU(),
            nn.AvgPool2d(2),
            nn.Conv2d(64, 64, 3, stride=2, padding=1), nn.Sigmoid(),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(64, 10)

    def forward(self, x):
        x = self.pool(self.features(x))
        return torch.softmax(self.classifier(torch.flatten(x, 1)), dim=1)


class Mlp(nn.Module):
    """Dense layers with GELU and layer normalization. Input 4x64."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64), nn.LayerNorm(64), nn.Tanh())

    def forward(self, x):
        return self.net(x) + x


class TinyEncoder(nn.Module):
    """One transformer encoder layer (d_model 64, 4 heads, feed-forward 128). Input 1x16x64."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.layer(x)


class LstmTagger(nn.Module):
    """A sequence tagger: a bidirectional LSTM over 12 steps of 16 features, then a
    per-step classifier into 8 tags. Input 1x12x16 (batch first)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(16, 24, batch_first=True, bidirectional=True)
        self.tags = nn.Linear(48, 8)

    def forward(self, x):
        return torch.log_softmax(self.tags(self.rnn(x)[0]), dim=-1)


class GruTagger(nn.Module):
    """The same tagger on two stacked bidirectional GRU layers. Input 1x12x16."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(16, 24, num_layers=2, batch_first=True, bidirectional=True)
        self.tags = nn.Linear(48, 8)

    def forward(self, x):
        return torch.log_softmax(self.tags(self.rnn(x)[0]), dim=-1)


class GroupNormCnn(nn.Module):
    """Conv blocks with group normalization (exported as InstanceNormalization between
    reshapes), global pooling and a classifier. Input 1x3x32x32."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.GroupNorm(4, 16), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.GroupNorm(8, 32), nn.ReLU(),
        )
        self.classifier = nn.Linear(32, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


class EinsumAttention(nn.Module):
    """Multi-head self-attention written with einsum (as vision transformers often are):
    4 heads of 8 over 16 tokens of width 32. Input 1x16x32."""

    def __init__(self, width=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x):
        b, n, width = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, width // self.heads).unbind(2)
        scores = torch.einsum("bihd,bjhd->bhij", q, k) * (width // self.heads) ** -0.5
        mixed = torch.einsum("bhij,bjhd->bihd", scores.softmax(dim=-1), v)
        return self.out(mixed.reshape(b, n, width)) + x


class ControlFlowHead(nn.Module):
    """Detection-style post-processing with control flow: scores for 12 candidates, of
    which at most 8 are kept. Scripted, so the `if` exports as an ONNX If whose condition
    (from the input's shape) plugrt folds at compile time. Input 1x12x16, dimension 1
    exported as dynamic."""

    onnx_script = True
    onnx_dynamic_axes = {"input": {1: "candidates"}, "output": {1: "kept"}}

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 4)

    def forward(self, x):
        scores = torch.sigmoid(self.proj(x))
        if scores.size(1) > 8:
            scores = scores[:, :8]
        else:
            scores = scores * 2.0
        return scores


class LoopRnn(nn.Module):
    """Control flow that stays to run time: a hand-written RNN cell stepped over the
    sequence in a scripted loop (an ONNX Loop reading x[:, t] by the iteration number),
    then a head chosen by the sign of the state's mean (an If on a computed condition).
    Input 1x6x16."""

    onnx_script = True

    def __init__(self):
        super().__init__()
        self.input = nn.Linear(16, 16)
        self.hidden = nn.Linear(16, 16)
        self.positive = nn.Linear(16, 4)
        self.negative = nn.Linear(16, 4)

    def forward(self, x):
        h = torch.zeros(x.size(0), 16)
        for t in range(x.size(1)):
            h = torch.tanh(self.input(x[:, t]) + self.hidden(h))
        if bool(h.mean() > 0):
            return self.positive(h)
        return self.negative(h) * 2.0


class VaryingEncoder(TinyEncoder):
    """TinyEncoder exported with its sequence length symbolic ("seq"), for
    `plugrt compile --dim seq=1..64`. Input 1x16x64, and the sample shapes."""

    onnx_dynamic_axes = {"input": {1: "seq"}, "output": {1: "seq"}}
    sample_shapes = [(1, 1, 64), (1, 5, 64), (1, 64, 64)]


class VaryingConv1d(nn.Module):
    """A 1-D convolution network over a symbolic length ("len"): a padded convolution, a
    strided one, ceil-mode max pooling and a mean over time, for
    `plugrt compile --dim len=1..64`. Input 1x8x32, and the sample shapes."""

    onnx_dynamic_axes = {"input": {2: "len"}}
    sample_shapes = [(1, 8, 1), (1, 8, 7), (1, 8, 64)]

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(8, 16, 3, padding=1)
        self.conv2 = nn.Conv1d(16, 16, 5, stride=2, padding=2)
        self.pool = nn.MaxPool1d(2, ceil_mode=True)

    def forward(self, x):
        return self.pool(torch.relu(self.conv2(torch.relu(self.conv1(x))))).mean(-1)


class VaryingPositions(nn.Module):
    """Learned positions over a symbolic sequence ("seq"), as GPT-2 adds them: the
    positions come from torch.arange(seq), which exports as Range(0, Shape -> Gather, 1),
    then a projection. For `plugrt compile --dim seq=1..64`. Input 1x16x32, and the
    sample shapes."""

    onnx_dynamic_axes = {"input": {1: "seq"}, "output": {1: "seq"}}
    sample_shapes = [(1, 1, 32), (1, 9, 32), (1, 64, 32)]

    def __init__(self):
        super().__init__()
        self.positions = nn.Embedding(64, 32)
        self.project = nn.Linear(32, 32)

    def forward(self, x):
        return self.project(x + self.positions(torch.arange(x.shape[1])))


SMALL = {
    "tiny_cnn": (TinyCnn, (1, 3, 32, 32)),
    "mlp": (Mlp, (4, 64)),
    "tiny_encoder": (TinyEncoder, (1, 16, 64)),
    "lstm_tagger": (LstmTagger, (1, 12, 16)),
    "gru_tagger": (GruTagger, (1, 12, 16)),
    "groupnorm_cnn": (GroupNormCnn, (1, 3, 32, 32)),
    "einsum_attention": (EinsumAttention, (1, 16, 32)),
    "control_flow_head": (ControlFlowHead, (1, 12, 16)),
    "loop_rnn": (LoopRnn, (1, 6, 16)),
    "varying_encoder": (VaryingEncoder, (1, 16, 64)),
    "varying_conv1d": (VaryingConv1d, (1, 8, 32)),
    "varying_positions": (VaryingPositions, (1, 16, 32)),
}


class Mlp3(nn.Module):
    """Three dense layers with ReLU, an MNIST-sized classifier. Input 16x784."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                                 nn.Linear(1024, 10))

    def forward(self, x):
        return self.net(x)


class EncoderLayer(nn.Module):
    """One transformer encoder layer: d_model 256, 4 heads, feed-forward 1024. Input 1x64x256."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.layer(x)


def large_models():
    import torchvision
    return {
        "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)),
        "resnet18": (lambda: torchvision.models.resnet18(weights=None), (1, 3, 224, 224)),
        "mlp3": (Mlp3, (16, 784)),
        "encoder_layer": (EncoderLayer, (1, 64, 256)),
    }


def export(name, make, shape, out):
    """Exports one model with one input named "input"; see export_model."""
    export_model(name, make, {"input": shape}, out)


def seeded_input(rng, spec):
    """A float32 input uniform in [-1, 1) of shape spec, or int64 token ids when spec has a
    vocabulary (zoo_architectures.TokenIds)."""
    vocabulary = getattr(spec, "vocabulary", None)
    if vocabulary is not None:
        return torch.from_numpy(rng.integers(0, vocabulary, size=spec.shape, dtype=np.int64))
    return torch.from_numpy(rng.uniform(-1, 1, size=spec).astype(np.float32))


def export_model(name, make, input_shapes, out):
    """Exports make() to OUT/NAME.onnx with seeded inputs and PyTorch's outputs.

    input_shapes maps each input's name to its shape (or TokenIds), in the order forward()
    takes them. The model is exported at opset OPSET, or at its onnx_opset attribute.
    Writes OUT/NAME.<input name>.npy and OUT/NAME.<output name>.npy; the output is named
    "output", or output_0, output_1... when forward() returns a tuple. A model exported
    with dimensions that vary also gets, for each of its sample_shapes (one input), the
    pair NAME.<shape>.input.npy and NAME.<shape>.output.npy (<shape>: 1x5x64). Returns
    (input names, output names).
    """
    torch.manual_seed(0)
    model = make().eval()
    # Give batch norms non-trivial statistics, as a trained model would have.
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 1.5)
    rng = np.random.default_rng(0)
    inputs = {n: seeded_input(rng, s) for n, s in input_shapes.items()}
    with torch.no_grad():
        y = model(*inputs.values())
    outputs = list(y) if isinstance(y, (tuple, list)) else [y]
    output_names = ["output"] if len(outputs) == 1 else [f"output_{i}" for i in range(len(outputs))]
    path = os.path.join(out, name + ".onnx")
    # A scripted model keeps its Python control flow as ONNX If and Loop nodes.
    exported = torch.jit.script(model) if getattr(model, "onnx_script", False) else model
    opset = getattr(model, "onnx_opset", OPSET)
    torch.onnx.export(exported, tuple(inputs.values()), path, opset_version=opset, input_names=list(inputs),
                      output_names=output_names, do_constant_folding=True,
                      dynamic_axes=getattr(model, "onnx_dynamic_axes", None))
    for tensor_name, tensor in list(inputs.items()) + list(zip(output_names, outputs)):
        np.save(os.path.join(out, f"{name}.{tensor_name}.npy"), tensor.numpy())
    for shape in getattr(model, "sample_shapes", []):
        x = torch.from_numpy(rng.uniform(-1, 1, size=shape).astype(np.float32))
        with torch.no_grad():
            y = model(x)
        tag = "x".join(str(d) for d in shape)
        np.save(os.path.join(out, f"{name}.{tag}.input.npy"), x.numpy())
        np.save(os.path.join(out, f"{name}.{tag}.output.npy"), y.numpy())
    print(f"{path}: {os.path.getsize(path)} bytes")
    return list(inputs), output_names


def export_non_max_suppression(out, name="non_max_suppression"):
    """Writes OUT/NAME.onnx, one NonMaxSuppression node (opset 11) over 2 batches, 3 classes
    and 12 boxes, with its five inputs (NAME.<input>.npy) and the indices torchvision's nms
    selects (NAME.selected_indices.npy). How many boxes are selected depends on the values,
    so the model declares the length these inputs give, as ONNX's node tests do."""
    import onnx
    import torchvision
    from onnx import TensorProto, helper

    rng = np.random.default_rng(0)
    batches, classes, count = 2, 3, 12
    corners = rng.uniform(0, 4, size=(batches, count, 2)).astype(np.float32)
    sizes = rng.uniform(1, 3, size=(batches, count, 2)).astype(np.float32)
    boxes = np.concatenate([corners, corners + sizes], axis=2)  # [y1, x1, y2, x2]
    # Distinct scores, so that the order needs no tie-breaking.
    scores = rng.permutation(batches * classes * count).reshape(batches, classes, count).astype(np.float32)
    scores = scores / scores.size
    inputs = {
        "boxes": boxes,
        "scores": scores,
        "max_output_boxes_per_class": np.array([6], dtype=np.int64),
        "iou_threshold": np.array([0.3], dtype=np.float32),
        "score_threshold": np.array([0.2], dtype=np.float32),
    }
    selected = []
    for b in range(batches):
        xyxy = torch.from_numpy(boxes[b][:, [1, 0, 3, 2]])
        for c in range(classes):
            candidates = np.flatnonzero(scores[b, c] > inputs["score_threshold"][0])
            keep = torchvision.ops.nms(xyxy[candidates], torch.from_numpy(scores[b, c, candidates]),
                                       float(inputs["iou_threshold"][0]))
            kept = candidates[keep.numpy()][:inputs["max_output_boxes_per_class"][0]]
            selected += [[b, c, int(k)] for k in kept]
    selected = np.array(selected, dtype=np.int64).reshape(-1, 3)
    types = {"max_output_boxes_per_class": TensorProto.INT64}
    graph = helper.make_graph(
        [helper.make_node("NonMaxSuppression", list(inputs), ["selected_indices"])], name,
        [helper.make_tensor_value_info(n, types.get(n, TensorProto.FLOAT), v.shape) for n, v in inputs.items()],
        [helper.make_tensor_value_info("selected_indices", TensorProto.INT64, selected.shape)])
    path = os.path.join(out, name + ".onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), path)
    for tensor_name, tensor in list(inputs.items()) + [("selected_indices", selected)]:
        np.save(os.path.join(out, f"{name}.{tensor_name}.npy"), tensor)
    print(f"{path}: {os.path.getsize(path)} bytes, {len(selected)} boxes selected")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--only", help="export only this model")
    parser.add_argument("--large", action="store_true", help="also export the benchmark models")
    args = parser.parse_args()
    models = dict(SMALL)
    if args.large:
        models.update(large_models())
    for name, (make, shape) in models.items():
        if args.only in (None, name):
            export(name, make, shape, args.out)
    if args.only in (None, "non_max_suppression"):
        export_non_max_suppression(args.out)


if __name__ == "__main__":
    main()
