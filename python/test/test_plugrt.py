# SPDX-License-Identifier: Apache-2.0
"""The Python package on the bundled models and the in-tree plugins: metadata, runs from
lists, dicts and DLPack producers, errors, the report, and the example script.
ctest sets PYTHONPATH, PLUGRT_MODELS_DIR, PLUGRT_IN_TREE_PLUGIN_DIR, PLUGRT_EXAMPLES_DIR."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import plugrt

MODELS = os.environ.get("PLUGRT_MODELS_DIR", "models")
PLUGINS = os.environ.get("PLUGRT_IN_TREE_PLUGIN_DIR", "build/bin/plugins")
EXAMPLES = os.environ.get("PLUGRT_EXAMPLES_DIR", "examples")


def model(name):
    return os.path.join(MODELS, name)


class DLPackOnly:
    """Exposes a tensor through the DLPack protocol only, as a foreign library would."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class TinyCnnTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runtime = plugrt.Runtime(plugin_dirs=[PLUGINS])
        cls.session = cls.runtime.open(model("tiny_cnn.onnx"))
        cls.x = np.load(model("tiny_cnn.input.npy"))
        cls.expected = np.load(model("tiny_cnn.output.npy"))

    def assert_expected(self, outputs):
        self.assertEqual(len(outputs), 1)
        self.assertIsInstance(outputs[0], np.ndarray)
        self.assertEqual(outputs[0].shape, self.expected.shape)
        self.assertTrue(np.allclose(outputs[0], self.expected, atol=1e-3))

    def test_describes_inputs_and_outputs(self):
        (info,) = self.session.inputs
        self.assertTrue(info.name)
        self.assertEqual(info.dtype, np.float32)
        self.assertEqual(info.shape, self.x.shape)
        self.assertEqual(len(info.varies), len(info.shape))
        self.assertEqual(self.session.input_names, [info.name])
        (out,) = self.session.outputs
        self.assertEqual(self.session.output_names, [out.name])
        self.assertEqual(out.dtype, np.float32)

    def test_runs_a_list_in_order(self):
        self.assert_expected(self.session.run([self.x]))

    def test_runs_a_dict_by_name(self):
        name = self.session.input_names[0]
        self.assert_expected(self.session.run({name: self.x}))
        by_name = self.session.run_dict({name: self.x})
        self.assertEqual(list(by_name), self.session.output_names)

    def test_outputs_are_copies(self):
        first = self.session.run([self.x])[0]
        self.session.run([np.zeros_like(self.x)])
        self.assertTrue(np.allclose(first, self.expected, atol=1e-3))

    def test_non_contiguous_input(self):
        wide = np.repeat(self.x, 2, axis=-1)[..., ::2]  # a strided view of the same values
        self.assertFalse(wide.flags.c_contiguous)
        self.assert_expected(self.session.run([wide]))

    def test_wrong_dtype_names_the_input(self):
        name = self.session.input_names[0]
        with self.assertRaises(TypeError) as raised:
            self.session.run([self.x.astype(np.float64)])
        self.assertIn(name, str(raised.exception))
        self.assertIn("float32", str(raised.exception))
        self.assertIn("float64", str(raised.exception))

    def test_wrong_count_and_names(self):
        with self.assertRaises(ValueError):
            self.session.run([self.x, self.x])
        with self.assertRaises(KeyError):
            self.session.run({"no such input": self.x})

    def test_wrong_shape_is_the_runtimes_error(self):
        with self.assertRaises(plugrt.Error) as raised:
            self.session.run([self.x[..., :16]])
        self.assertNotEqual(raised.exception.code, 0)

    def test_dlpack_input(self):
        self.assert_expected(self.session.run([DLPackOnly(self.x)]))
        with self.assertRaises(TypeError):
            self.session.run([DLPackOnly(self.x.astype(np.float64))])

    def test_outputs_export_dlpack(self):
        output = self.session.run([self.x])[0]
        self.assertTrue(np.array_equal(plugrt.from_dlpack(DLPackOnly(output)), output))

    def test_report(self):
        report = self.session.report
        self.assertIsInstance(report, dict)
        self.assertIn("delegates", report)

    def test_session_keeps_its_runtime(self):
        session = plugrt.Runtime(plugin_dirs=[PLUGINS]).open(model("tiny_cnn.onnx"))
        self.assert_expected(session.run([self.x]))


class PackageTest(unittest.TestCase):
    def test_missing_file_raises_error_with_code(self):
        with self.assertRaises(plugrt.Error) as raised:
            plugrt.load("absent.onnx", plugin_dirs=PLUGINS)
        self.assertIsInstance(raised.exception, RuntimeError)
        self.assertIn("absent.onnx", str(raised.exception))
        self.assertIsInstance(raised.exception.code, int)
        self.assertNotEqual(raised.exception.code, 0)

    def test_load_one_liner(self):
        x = np.load(model("mlp.input.npy"))
        (y,) = plugrt.load(model("mlp.onnx"), plugin_dirs=[PLUGINS], num_threads=1).run([x])
        self.assertTrue(np.allclose(y, np.load(model("mlp.output.npy")), atol=1e-3))

    def test_other_dtypes(self):
        import onnx  # python3-onnx, which scripts/install-deps.sh installs
        from onnx import TensorProto, helper
        cases = [("Neg", TensorProto.INT32, np.arange(6, dtype=np.int32).reshape(2, 3), np.int32),
                 ("Abs", TensorProto.INT64, -np.arange(6).reshape(2, 3), np.int64),
                 ("Relu", TensorProto.DOUBLE, np.linspace(-1, 1, 6).reshape(2, 3), np.float64),
                 ("Not", TensorProto.BOOL, np.eye(2, 3, dtype=bool), np.uint8)]  # bool reads as uint8
        with tempfile.TemporaryDirectory() as scratch:
            for op, onnx_type, x, dtype in cases:
                graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], op,
                                          [helper.make_tensor_value_info("x", onnx_type, [2, 3])],
                                          [helper.make_tensor_value_info("y", onnx_type, [2, 3])])
                path = os.path.join(scratch, op + ".onnx")
                onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), path)
                session = plugrt.load(path, plugin_dirs=[PLUGINS])
                self.assertEqual(session.inputs[0].dtype, dtype)
                (y,) = session.run([x])
                self.assertEqual(y.dtype, dtype)
                expected = {"Neg": np.negative, "Abs": np.abs, "Relu": lambda v: np.maximum(v, 0),
                            "Not": np.logical_not}[op](x)
                self.assertTrue(np.array_equal(y, expected.astype(dtype)), op)

    def test_open_dimensions_with_bounds(self):
        runtime = plugrt.Runtime(plugin_dirs=[PLUGINS])
        with self.assertRaises(plugrt.Error) as raised:
            runtime.open(model("varying_conv1d.onnx"))
        self.assertIn("open it with input shapes for 'input'", str(raised.exception))
        session = runtime.open(model("varying_conv1d.onnx"), dims={"len": (1, 64)})
        self.assertEqual(session.inputs[0].varies, (False, False, True))
        for length in ("1x8x7.", "1x8x64."):
            (y,) = session.run([np.load(model("varying_conv1d." + length + "input.npy"))])
            self.assertTrue(np.allclose(y, np.load(model("varying_conv1d." + length + "output.npy")), atol=1e-4))
        fixed = runtime.open(model("varying_conv1d.onnx"), input_shapes={"input": (1, 8, 7)})
        self.assertEqual(fixed.inputs[0].shape, (1, 8, 7))

    def test_finds_the_plugins_next_to_the_library(self):
        # No directory given: libplugrt.so finds bin/plugins beside it in the build tree.
        session = plugrt.load(model("tiny_cnn.onnx"), use_environment=False)
        origins = [d["origin"] for d in session.report["delegates"]]
        self.assertTrue(any(os.path.join("bin", "plugins", "libplugrt_") in o for o in origins), origins)

    def test_an_endless_loop_stops_at_its_time_limit_or_when_cancelled(self):
        import threading
        import onnx
        from onnx import TensorProto, helper
        body = helper.make_graph(
            [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["v_in", "one"], ["v_out"])],
            "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                     helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                     helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1])],
            [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])])
        graph = helper.make_graph(
            [helper.make_node("Loop", ["n", "go", "v0"], ["v"], body=body)], "endless",
            [helper.make_tensor_value_info("n", TensorProto.INT64, []),
             helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info("v", TensorProto.FLOAT, [1])],
            [helper.make_tensor("go", TensorProto.BOOL, [], [True])])
        inputs = [np.array(np.iinfo(np.int64).max), np.zeros(1, np.float32)]
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "endless.onnx")
            onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], ir_version=8), path)
            runtime = plugrt.Runtime(plugin_dirs=[PLUGINS])
            limited = runtime.open(path, execute_timeout_ms=200)
            with self.assertRaises(plugrt.Error) as raised:
                limited.run(inputs)
            self.assertEqual(raised.exception.code, 3)
            self.assertIn("passed its time limit of 200 ms", str(raised.exception))
            (v,) = limited.run([np.array(4), np.zeros(1, np.float32)])  # still usable
            self.assertEqual(v[0], 4.0)
            session = runtime.open(path)
            timer = threading.Timer(0.1, session.cancel)
            timer.start()
            with self.assertRaises(plugrt.Error) as raised:
                session.run(inputs)
            timer.join()
            self.assertIn("cancelled", str(raised.exception))

    def test_example_script(self):
        session = plugrt.load(model("tiny_cnn.onnx"), plugin_dirs=[PLUGINS])
        name, output = session.input_names[0], session.output_names[0]
        script = os.path.join(EXAMPLES, "app_python", "run.py")
        with tempfile.TemporaryDirectory() as out_dir:
            subprocess.run([sys.executable, script, model("tiny_cnn.onnx"), out_dir,
                            f"{name}={model('tiny_cnn.input.npy')}"], check=True,
                           env=dict(os.environ, PLUGRT_PLUGIN_PATH=PLUGINS))
            y = np.load(os.path.join(out_dir, output + ".npy"))
        self.assertTrue(np.allclose(y, np.load(model("tiny_cnn.output.npy")), atol=1e-3))


if __name__ == "__main__":
    unittest.main()
