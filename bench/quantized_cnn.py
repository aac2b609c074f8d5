#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a small MobileNet-like CNN three times: in float32, in ONNX's operator form of
static int8 quantization (QuantizeLinear, a chain of QLinearConv, DequantizeLinear), and
in QDQ form (each Conv between DequantizeLinear and QuantizeLinear nodes, which the
importer turns into the same QLinearConv chain), to compare int8 and float32 kernels of
the same shapes (`plugrt bench`).

    python3 bench/quantized_cnn.py OUT_DIR
    plugrt compile OUT_DIR/qcnn_int8.onnx -o int8.prt --backends onednn
    plugrt bench int8.prt --threads 1

Weights are int8 with per-output-channel scales and zero point 0 (symmetric), the
activations uint8 with a zero point (asymmetric), biases int32: what ONNX Runtime's
static quantizer writes for a CNN. The layers: a 3x3 stride-2 stem, then blocks of a
depthwise 3x3 and a pointwise 1x1, channels 32 -> 64 -> 128 -> 128 -> 256, on a
1x3x160x160 input.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# (out channels, kernel, stride, group is the input channels)
LAYERS = [
    (32, 3, 2, False),
    (32, 3, 1, True), (64, 1, 1, False),
    (64, 3, 2, True), (128, 1, 1, False),
    (128, 3, 1, True), (128, 1, 1, False),
    (128, 3, 2, True), (256, 1, 1, False),
    (256, 3, 1, True), (256, 1, 1, False),
]
SIZE = 160


def build(rng):
    float_nodes, q_nodes, float_inits, q_inits = [], [], [], []
    qdq_nodes = []
    channels, size = 3, SIZE
    x_float, x_q = "x", "xq"
    q_inits += [numpy_helper.from_array(np.array(0.02, np.float32), "s0"),
                numpy_helper.from_array(np.array(128, np.uint8), "z0")]
    q_nodes.append(helper.make_node("QuantizeLinear", ["x", "s0", "z0"], [x_q]))
    qdq_nodes.append(helper.make_node("QuantizeLinear", ["x", "s0", "z0"], [x_q]))
    scale = "s0"
    zero = "z0"
    for i, (out, k, stride, depthwise) in enumerate(LAYERS):
        group = channels if depthwise else 1
        w = rng.standard_normal((out, channels // group, k, k)).astype(np.float32) * 0.1
        bias = rng.standard_normal(out).astype(np.float32) * 0.1
        pads = [k // 2] * 4
        attrs = dict(group=group, strides=[stride, stride], pads=pads, kernel_shape=[k, k])
        float_inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(bias, f"b{i}")]
        y = f"y{i}"
        float_nodes.append(helper.make_node("Conv", [x_float, f"w{i}", f"b{i}"], [y], **attrs))
        relu = f"r{i}"
        float_nodes.append(helper.make_node("Relu", [y], [relu]))
        x_float = relu
        # int8 weights, one scale per output channel, zero point 0.
        w_scale = np.abs(w).reshape(out, -1).max(axis=1) / 127.0
        wq = np.clip(np.round(w / w_scale[:, None, None, None]), -127, 127).astype(np.int8)
        x_scale = 0.02 if i == 0 else 0.05
        bq = np.round(bias / (x_scale * w_scale)).astype(np.int32)
        y_scale, y_zero = 0.05, 0  # after a Relu: uint8 from 0
        q_inits += [numpy_helper.from_array(wq, f"wq{i}"), numpy_helper.from_array(w_scale.astype(np.float32), f"ws{i}"),
                    numpy_helper.from_array(np.zeros(out, np.int8), f"wz{i}"), numpy_helper.from_array(bq, f"bq{i}"),
                    numpy_helper.from_array(np.array(y_scale, np.float32), f"ys{i}"),
                    numpy_helper.from_array(np.array(y_zero, np.uint8), f"yz{i}")]
        q_out = f"q{i}"
        q_nodes.append(helper.make_node("QLinearConv", [x_q, scale, zero, f"wq{i}", f"ws{i}", f"wz{i}", f"ys{i}",
                                                        f"yz{i}", f"bq{i}"], [q_out], **attrs))
        # The same group in QDQ form; the bias's scale is x_scale * w_scale.
        q_inits += [numpy_helper.from_array((x_scale * w_scale).astype(np.float32), f"bs{i}"),
                    numpy_helper.from_array(np.zeros(out, np.int32), f"bz{i}")]
        qdq_nodes += [
            helper.make_node("DequantizeLinear", [x_q, scale, zero], [f"dx{i}"]),
            helper.make_node("DequantizeLinear", [f"wq{i}", f"ws{i}", f"wz{i}"], [f"dw{i}"], axis=0),
            helper.make_node("DequantizeLinear", [f"bq{i}", f"bs{i}", f"bz{i}"], [f"db{i}"], axis=0),
            helper.make_node("Conv", [f"dx{i}", f"dw{i}", f"db{i}"], [f"c{i}"], **attrs),
            helper.make_node("QuantizeLinear", [f"c{i}", f"ys{i}", f"yz{i}"], [q_out]),
        ]
        x_q, scale, zero = q_out, f"ys{i}", f"yz{i}"
        channels = out
        size = (size + stride - 1) // stride
    q_nodes.append(helper.make_node("DequantizeLinear", [x_q, scale, zero], ["y"]))
    qdq_nodes.append(helper.make_node("DequantizeLinear", [x_q, scale, zero], ["y"]))
    float_nodes.append(helper.make_node("Identity", [x_float], ["y"]))
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, SIZE, SIZE])
    y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, size, size])
    models = {}
    for name, nodes, inits in (("float", float_nodes, float_inits), ("int8", q_nodes, q_inits),
                               ("qdq", qdq_nodes, q_inits)):
        graph = helper.make_graph(nodes, f"qcnn_{name}", [x_info], [y_info], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 7
        onnx.checker.check_model(model)
        models[name] = model
    return models


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out_dir, exist_ok=True)
    for name, model in build(np.random.default_rng(0)).items():
        path = os.path.join(out_dir, f"qcnn_{name}.onnx")
        onnx.save(model, path)
        print(path)


if __name__ == "__main__":
    main()
