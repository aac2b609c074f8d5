# SPDX-License-Identifier: Apache-2.0
"""plugrt: run a model (.prt program or .onnx) on the CPU backends plugrt finds.

    import numpy as np, plugrt
    session = plugrt.load("model.onnx")          # or plugrt.Runtime(...).open(path)
    print(session.inputs)                        # TensorInfo(name, dtype, shape, varies)
    y, = session.run([np.zeros((1, 3, 32, 32), np.float32)])

Inputs are NumPy arrays of each input's dtype (never converted silently) or any object
with __dlpack__ on the CPU; outputs are new NumPy arrays, which export __dlpack__ too.
Failures raise plugrt.Error (a RuntimeError) whose `code` is a plugrt_error_code.
A bool tensor reads as uint8 (DLPack 0.6, which the C API uses, has no bool).
"""

import numpy as _numpy

from ._plugrt import Error, Runtime, Session, TensorInfo

for _type in (Error, Runtime, Session):
    _type.__module__ = __name__  # shown as plugrt.Error, not plugrt._plugrt.Error

__all__ = ["Error", "Runtime", "Session", "TensorInfo", "from_dlpack", "load"]

#: A NumPy array viewing any CPU tensor that exports __dlpack__ (numpy.from_dlpack).
from_dlpack = _numpy.from_dlpack


def load(path, input_shapes=None, dims=None, **runtime_options):
    """Opens `path` (a .prt program or an .onnx model) in a new Runtime.

    input_shapes and dims are Runtime.open's (for ONNX models with open dimensions);
    runtime_options are Runtime's: plugin_dirs, placement, cache_dir, num_threads,
    backends, use_environment, plugin_allow_list. The session keeps its runtime alive.
    To open several models, make one Runtime and call its open() instead.
    """
    return Runtime(**runtime_options).open(path, input_shapes=input_shapes, dims=dims)
