#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs a model on .npy inputs and writes each output as OUT_DIR/<output name>.npy.

    run.py MODEL OUT_DIR NAME=FILE.npy...      (MODEL: a .prt program or an .onnx model)

From the build tree:   PYTHONPATH=build/python python3 run.py ...
Installed:             PYTHONPATH=<prefix>/lib/python3/dist-packages python3 run.py ...
"""
import os
import sys

import numpy as np
import plugrt

if len(sys.argv) < 3:
    sys.exit(__doc__)
model, out_dir, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
inputs = {name: np.load(file) for name, file in (pair.split("=", 1) for pair in pairs)}
outputs = plugrt.load(model).run_dict(inputs)
os.makedirs(out_dir, exist_ok=True)
for name, value in outputs.items():
    np.save(os.path.join(out_dir, name.replace("/", "_") + ".npy"), value)
