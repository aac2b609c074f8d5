# SPDX-License-Identifier: Apache-2.0
"""A float32 ONNX model made float16, as publishers of float16 models make them (the
float16 converter of onnxconverter-common, which Debian does not package, does the same):
every float32 initializer, Constant and graph input and output becomes float16, Cast to
float becomes Cast to float16, and the inputs ONNX requires in float32 (Resize's and
Upsample's scales) stay so. Values beyond float16's range become infinities, as there.
"""
import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, numpy_helper

FLOAT32_INPUTS = {("Resize", 2), ("Upsample", 1)}  # (op, input index) ONNX types float32 only


def _kept_float32(graph):
    kept = set()
    for node in graph.node:
        for op, index in FLOAT32_INPUTS:
            if node.op_type == op and len(node.input) > index and node.input[index]:
                kept.add(node.input[index])
    return kept


def _half(tensor):
    with np.errstate(over="ignore"):
        return numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float16), tensor.name)


def _convert_graph(graph):
    kept = _kept_float32(graph)
    for index, tensor in enumerate(graph.initializer):
        if tensor.data_type == TensorProto.FLOAT and tensor.name not in kept:
            graph.initializer[index].CopyFrom(_half(tensor))
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.name == "to" and attribute.i == TensorProto.FLOAT:
                attribute.i = TensorProto.FLOAT16
            if (attribute.type == AttributeProto.TENSOR and attribute.t.data_type == TensorProto.FLOAT
                    and not kept.intersection(node.output)):
                attribute.t.CopyFrom(_half(attribute.t))
            if attribute.type == AttributeProto.GRAPH:
                _convert_graph(attribute.g)
    for info in list(graph.input) + list(graph.output):
        if info.type.tensor_type.elem_type == TensorProto.FLOAT:
            info.type.tensor_type.elem_type = TensorProto.FLOAT16
    del graph.value_info[:]  # shape inference gives them again, in the new types


def convert(source, destination):
    model = onnx.load(source)
    _convert_graph(model.graph)
    onnx.save(model, destination)
