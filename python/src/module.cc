// SPDX-License-Identifier: Apache-2.0
// _plugrt: the Python module over the C API (through plugrt/plugrt.hpp; links only
// libplugrt.so). Inputs are NumPy arrays or any object with __dlpack__; outputs come
// back as new NumPy arrays, copied out of the session before its next run.
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "plugrt/plugrt.hpp"

namespace py = pybind11;

namespace {

// ---- Element types ----

bool same_type(DLDataType a, DLDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

std::string type_name(DLDataType type) {
  const char* codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex"};
  std::string name = type.code < 6 ? codes[type.code] : "code" + std::to_string(type.code);
  return name + std::to_string(type.bits) + (type.lanes == 1 ? "" : "x" + std::to_string(type.lanes));
}

// The NumPy dtype of a DLPack type; None where NumPy has none (bfloat16). A bool tensor
// crosses the C API as one-byte kDLUInt (DLPack 0.6 has no bool), so it reads as uint8.
py::object numpy_dtype(DLDataType type) {
  if (type.lanes != 1) return py::none();
  const bool bits_ok = type.bits == 8 || type.bits == 16 || type.bits == 32 || type.bits == 64;
  if ((type.code == kDLInt || type.code == kDLUInt) && bits_ok) {
    return py::dtype((type.code == kDLInt ? "int" : "uint") + std::to_string(type.bits));
  }
  if (type.code == kDLFloat && type.bits >= 16 && bits_ok) return py::dtype("float" + std::to_string(type.bits));
  return py::none();
}

const DLDataType kOneByte{kDLUInt, 8, 1};  // uint8, and bool as the C API reports it

// Whether a NumPy array of `dtype` can be passed where the session wants `type`.
bool numpy_matches(const py::dtype& dtype, DLDataType type) {
  if (same_type(type, kOneByte) && dtype.kind() == 'b') return true;
  py::object wanted = numpy_dtype(type);
  return !wanted.is_none() && dtype.equal(wanted);
}

// The same for a DLPack tensor; newer producers mark bool as kDLBool (code 6).
bool dlpack_matches(DLDataType given, DLDataType type) {
  return same_type(given, type) || (same_type(type, kOneByte) && same_type(given, DLDataType{6, 8, 1}));
}

// ---- Tensor descriptions ----

py::object tensor_info_type() {
  static py::object type =
      py::module_::import("collections")
          .attr("namedtuple")("TensorInfo", "name dtype shape varies", py::arg("module") = "plugrt");
  return type;
}

py::object describe(const plugrt::api::TensorInfo& info) {
  py::tuple shape(py::cast(info.shape));
  py::tuple varies(py::cast(info.varies));
  return tensor_info_type()(info.name, numpy_dtype(info.dtype), shape, varies);
}

// ---- Inputs ----

// One input as the C API reads it, with what keeps its memory alive until the run ends.
struct Input {
  DLTensor tensor{};
  std::vector<int64_t> shape;
  py::object owner;                    // the NumPy array whose memory `tensor` views
  DLManagedTensor* managed = nullptr;  // a DLPack producer's tensor, ours to delete
  Input() = default;
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;
  ~Input() {
    if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
  }
};

[[noreturn]] void wrong_dtype(const plugrt::api::TensorInfo& info, const std::string& given) {
  py::object wanted = numpy_dtype(info.dtype);
  const std::string want = wanted.is_none() ? type_name(info.dtype) : std::string(py::str(wanted));
  throw py::type_error("input '" + info.name + "' wants dtype " + want + ", got " + given +
                       " (convert it first, e.g. with .astype())");
}

void from_numpy(const py::array& given, const plugrt::api::TensorInfo& info, Input& input) {
  if (!numpy_matches(given.dtype(), info.dtype)) wrong_dtype(info, py::str(given.dtype()));
  py::array array = py::array::ensure(given, py::array::c_style);
  input.shape.assign(array.shape(), array.shape() + array.ndim());
  input.tensor.data = const_cast<void*>(array.data());
  input.tensor.device = {kDLCPU, 0};
  input.tensor.ndim = static_cast<int32_t>(array.ndim());
  input.tensor.dtype = info.dtype;
  input.tensor.shape = input.shape.data();
  input.owner = std::move(array);
}

// The DLPack protocol: the capsule "dltensor" hands its tensor over; renamed
// "used_dltensor", the consumer (Input's destructor) calls the deleter.
void from_dlpack(const py::object& given, const plugrt::api::TensorInfo& info, Input& input) {
  if (py::hasattr(given, "__dlpack_device__")) {
    auto device = given.attr("__dlpack_device__")().cast<std::pair<int, int>>();
    if (device.first != kDLCPU) {
      throw py::value_error("input '" + info.name + "' is on DLPack device type " + std::to_string(device.first) +
                            "; plugrt takes CPU tensors");
    }
  }
  py::capsule capsule = given.attr("__dlpack__")();
  if (capsule.name() == nullptr || std::strcmp(capsule.name(), "dltensor") != 0) {
    throw py::value_error("input '" + info.name + "': __dlpack__ gave no unused 'dltensor' capsule");
  }
  input.managed = capsule.get_pointer<DLManagedTensor>();
  if (PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0) throw py::error_already_set();
  const DLTensor& tensor = input.managed->dl_tensor;
  if (tensor.device.device_type != kDLCPU) throw py::value_error("input '" + info.name + "' is not on the CPU");
  if (!dlpack_matches(tensor.dtype, info.dtype)) wrong_dtype(info, type_name(tensor.dtype));
  input.shape.assign(tensor.shape, tensor.shape + tensor.ndim);
  int64_t expected = 1;
  for (int32_t axis = tensor.ndim - 1; tensor.strides != nullptr && axis >= 0; --axis) {
    if (tensor.shape[axis] != 1 && tensor.strides[axis] != expected) {
      throw py::value_error("input '" + info.name + "' is not compact row-major; copy it first");
    }
    expected *= tensor.shape[axis];
  }
  input.tensor = tensor;
  input.tensor.data = static_cast<char*>(tensor.data) + tensor.byte_offset;
  input.tensor.byte_offset = 0;
  input.tensor.strides = nullptr;
  input.tensor.shape = input.shape.data();
}

void prepare(const py::handle& given, const plugrt::api::TensorInfo& info, Input& input) {
  if (py::isinstance<py::array>(given)) return from_numpy(py::reinterpret_borrow<py::array>(given), info, input);
  if (py::hasattr(given, "__dlpack__")) return from_dlpack(py::reinterpret_borrow<py::object>(given), info, input);
  throw py::type_error("input '" + info.name + "' must be a numpy.ndarray or have __dlpack__, not " +
                       std::string(py::str(py::type::of(given).attr("__name__"))));
}

// ---- Runtime and Session ----

std::string fspath(const py::handle& path) {
  return py::module_::import("os").attr("fspath")(path).cast<std::string>();
}

// A path, a list of them, or None.
std::vector<std::string> paths(const py::object& given) {
  std::vector<std::string> all;
  if (given.is_none()) return all;
  if (py::isinstance<py::str>(given) || py::hasattr(given, "__fspath__")) return {fspath(given)};
  for (py::handle item : given) all.push_back(fspath(item));
  return all;
}

// A name or a list of them, comma-separated as the C API takes them.
std::string joined(const py::object& names) {
  if (py::isinstance<py::str>(names)) return names.cast<std::string>();
  std::string list;
  for (py::handle name : names) list += (list.empty() ? "" : ",") + name.cast<std::string>();
  return list;
}

class Session {
 public:
  Session(std::shared_ptr<plugrt::api::Runtime> runtime, plugrt::api::Session session)
      : runtime_(std::move(runtime)), session_(std::move(session)) {
    for (size_t i = 0; i < session_.num_inputs(); ++i) inputs_.push_back(session_.input_info(i));
    for (size_t i = 0; i < session_.num_outputs(); ++i) outputs_.push_back(session_.output_info(i));
  }

  py::list inputs() const { return describe_all(inputs_); }
  /// Stops the run in progress on another thread (the GIL is released while one runs).
  void cancel() { session_.cancel(); }
  py::list outputs() const { return describe_all(outputs_); }
  py::list input_names() const { return names(inputs_); }
  py::list output_names() const { return names(outputs_); }
  py::object report() const { return py::module_::import("json").attr("loads")(session_.report_json()); }

  py::list run(const py::object& given) {
    std::vector<py::object> ordered = order(given);
    std::vector<std::unique_ptr<Input>> held;
    std::vector<const DLTensor*> tensors;
    for (size_t i = 0; i < ordered.size(); ++i) {
      held.push_back(std::make_unique<Input>());
      prepare(ordered[i], inputs_[i], *held.back());
      tensors.push_back(&held.back()->tensor);
    }
    {
      py::gil_scoped_release release;
      session_.run(tensors);
    }
    py::list results;
    for (size_t i = 0; i < outputs_.size(); ++i) results.append(copy_output(i));
    return results;
  }

  py::dict run_dict(const py::object& given) {
    py::list results = run(given);
    py::dict by_name;
    for (size_t i = 0; i < outputs_.size(); ++i) by_name[py::str(outputs_[i].name)] = results[i];
    return by_name;
  }

 private:
  static py::list describe_all(const std::vector<plugrt::api::TensorInfo>& all) {
    py::list described;
    for (const auto& info : all) described.append(describe(info));
    return described;
  }
  static py::list names(const std::vector<plugrt::api::TensorInfo>& all) {
    py::list listed;
    for (const auto& info : all) listed.append(info.name);
    return listed;
  }

  // The inputs in the session's order: from a dict by name, a sequence, or one tensor.
  std::vector<py::object> order(const py::object& given) const {
    std::vector<py::object> ordered;
    if (py::isinstance<py::dict>(given)) {
      py::dict by_name = py::reinterpret_borrow<py::dict>(given);
      for (const auto& info : inputs_) {
        if (!by_name.contains(info.name)) throw py::key_error("no input named '" + info.name + "' given");
        ordered.push_back(by_name[py::str(info.name)]);
      }
      if (by_name.size() != inputs_.size()) throw py::key_error(unknown_names(by_name));
    } else if (py::isinstance<py::array>(given) || py::hasattr(given, "__dlpack__")) {
      ordered.push_back(given);
    } else {
      for (py::handle item : given) ordered.push_back(py::reinterpret_borrow<py::object>(item));
    }
    if (ordered.size() != inputs_.size()) {
      throw py::value_error("the model takes " + std::to_string(inputs_.size()) + " input(s) " +
                            std::string(py::str(input_names())) + ", got " + std::to_string(ordered.size()));
    }
    return ordered;
  }

  std::string unknown_names(const py::dict& by_name) const {
    std::string unknown;
    for (const auto& item : by_name) {
      if (!input_names().contains(item.first))
        unknown += (unknown.empty() ? "" : ", ") + std::string(py::repr(item.first));
    }
    return "no such input: " + unknown + "; the inputs are " + std::string(py::str(input_names()));
  }

  // A new array holding output `index`: the session's own is overwritten by the next run.
  py::array copy_output(size_t index) {
    const DLTensor& output = session_.output(index);
    py::object dtype = numpy_dtype(output.dtype);
    if (dtype.is_none()) {
      throw py::type_error("output '" + outputs_[index].name + "' has dtype " + type_name(output.dtype) +
                           ", which NumPy has no type for");
    }
    std::vector<int64_t> shape(output.shape, output.shape + output.ndim);
    py::array result(py::reinterpret_borrow<py::dtype>(dtype), std::vector<py::ssize_t>(shape.begin(), shape.end()));
    DLTensor destination{result.mutable_data(), {kDLCPU, 0}, output.ndim, output.dtype, shape.data(), nullptr, 0};
    session_.copy_output(index, destination);
    return result;
  }

  std::shared_ptr<plugrt::api::Runtime> runtime_;  // outlives session_, declared first
  plugrt::api::Session session_;
  std::vector<plugrt::api::TensorInfo> inputs_;
  std::vector<plugrt::api::TensorInfo> outputs_;
};

std::shared_ptr<plugrt::api::Runtime> make_runtime(const py::object& plugin_dirs, const py::object& placement,
                                                   const py::object& cache_dir, uint32_t num_threads,
                                                   const py::object& backends, bool use_environment,
                                                   const py::object& plugin_allow_list) {
  // The strings live until the runtime is made: it copies what it keeps.
  const std::vector<std::string> dirs = paths(plugin_dirs);
  std::vector<const char*> dir_pointers;
  for (const auto& dir : dirs) dir_pointers.push_back(dir.c_str());
  dir_pointers.push_back(nullptr);
  const std::string backend_list = backends.is_none() ? "" : joined(backends);
  const std::string placement_text = placement.is_none() ? "" : placement.cast<std::string>();
  const std::string cache = cache_dir.is_none() ? "" : fspath(cache_dir);
  const std::string allow_list = plugin_allow_list.is_none() ? "" : fspath(plugin_allow_list);

  plugrt_runtime_options options;
  plugrt_runtime_options_init(&options);
  options.use_environment = use_environment ? 1 : 0;
  options.plugin_dirs = dirs.empty() ? nullptr : dir_pointers.data();
  options.placement = placement.is_none() ? nullptr : placement_text.c_str();
  options.cache_dir = cache_dir.is_none() ? nullptr : cache.c_str();
  options.num_threads = num_threads;
  options.backends = backends.is_none() ? nullptr : backend_list.c_str();
  options.plugin_allow_list = plugin_allow_list.is_none() ? nullptr : allow_list.c_str();
  py::gil_scoped_release release;
  return std::make_shared<plugrt::api::Runtime>(&options);
}

/// "NAME=D0,D1,..." for each item of {name: shape}.
std::vector<std::string> shape_texts(const py::object& shapes) {
  std::vector<std::string> texts;
  if (shapes.is_none()) return texts;
  for (const auto& item : shapes.cast<py::dict>()) {
    std::string text = item.first.cast<std::string>() + "=";
    for (const auto& dim : item.second) text += std::to_string(dim.cast<int64_t>()) + ",";
    texts.push_back(text.substr(0, text.size() - 1));
  }
  return texts;
}

/// "NAME=MIN..MAX" for each item of {name: (min, max)}.
std::vector<std::string> dim_texts(const py::object& dims) {
  std::vector<std::string> texts;
  if (dims.is_none()) return texts;
  for (const auto& item : dims.cast<py::dict>()) {
    const auto bounds = item.second.cast<std::pair<int64_t, int64_t>>();
    texts.push_back(item.first.cast<std::string>() + "=" + std::to_string(bounds.first) + ".." +
                    std::to_string(bounds.second));
  }
  return texts;
}

std::unique_ptr<Session> open_session(const std::shared_ptr<plugrt::api::Runtime>& runtime, const py::object& path,
                                      const py::object& input_shapes, const py::object& dims, const py::object& method,
                                      uint32_t num_threads, uint32_t execute_timeout_ms) {
  const std::string file = fspath(path);
  plugrt::api::OpenOptions options;
  options.method = method.is_none() ? "" : method.cast<std::string>();
  options.num_threads = num_threads;
  options.input_shapes = shape_texts(input_shapes);
  options.dims = dim_texts(dims);
  options.execute_timeout_ms = execute_timeout_ms;
  py::gil_scoped_release release;  // compiling an ONNX model takes a while
  return std::make_unique<Session>(runtime, runtime->open(file, options));
}

void register_error(py::module_& m) {
  static py::exception<plugrt::api::Error> error(m, "Error", PyExc_RuntimeError);
  error.attr("__doc__") = "A failed runtime call; `code` is a plugrt_error_code (see plugrt/plugrt_c.h).";
  error.attr("code") = 0;
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const plugrt::api::Error& e) {
      py::object instance = py::reinterpret_borrow<py::object>(error)(e.what());
      instance.attr("code") = e.code();
      PyErr_SetObject(error.ptr(), instance.ptr());
    }
  });
}

}  // namespace

PYBIND11_MODULE(_plugrt, m) {
  m.doc() = "plugrt's C API for Python; use the package `plugrt`.";
  register_error(m);
  m.attr("TensorInfo") = tensor_info_type();

  py::class_<plugrt::api::Runtime, std::shared_ptr<plugrt::api::Runtime>>(m, "Runtime", R"doc(
Finds the plugins and holds the settings that sessions open with. Any argument left out
keeps the default (or the PLUGRT_* environment variable when use_environment is true).
  plugin_dirs: a directory or a list of them, searched for plugins first
  placement: "auto" or "as-compiled"      cache_dir: the compiled-blob cache
  num_threads: each session's thread budget (0: the cores available)
  backends: a name or a list of names: only these may run
  plugin_allow_list: a file of SHA-256 digests: only the plugins it lists may load)doc")
      .def(py::init(&make_runtime), py::arg("plugin_dirs") = py::none(), py::arg("placement") = py::none(),
           py::arg("cache_dir") = py::none(), py::arg("num_threads") = 0, py::arg("backends") = py::none(),
           py::arg("use_environment") = true, py::arg("plugin_allow_list") = py::none())
      .def("open", &open_session, py::arg("path"), py::arg("input_shapes") = py::none(), py::arg("dims") = py::none(),
           py::arg("method") = py::none(), py::arg("num_threads") = 0, py::arg("execute_timeout_ms") = 0,
           "Opens a .prt program, or an ONNX model (.onnx) compiled in memory. For an ONNX model whose inputs "
           "have open dimensions: input_shapes={name: shape}, or dims={dim_param: (min, max)} to keep them "
           "symbolic within bounds. method: the program's method (default 'forward'); num_threads: this "
           "session's thread budget (0: the runtime's); execute_timeout_ms: each run's time limit (0: none), past "
           "which run() raises plugrt.Error (code 3, cancelled).");

  py::class_<Session>(m, "Session", "An opened model. Runs one call at a time; open one per thread.")
      .def_property_readonly("inputs", &Session::inputs, "TensorInfo(name, dtype, shape, varies) of each input")
      .def_property_readonly("outputs", &Session::outputs, "TensorInfo(name, dtype, shape, varies) of each output")
      .def_property_readonly("input_names", &Session::input_names)
      .def_property_readonly("output_names", &Session::output_names)
      .def_property_readonly("report", &Session::report, "Where each part of the model runs and why (a dict)")
      .def("run", &Session::run, py::arg("inputs"),
           "Runs on `inputs` (a list in order, a dict by name, or one array) and returns the outputs as a list "
           "of new NumPy arrays. Each input is a NumPy array of the input's dtype or an object with __dlpack__.")
      .def("cancel", &Session::cancel,
           "Stops the run in progress on another thread: that run() raises plugrt.Error (code 3). A run started "
           "later is not affected.")
      .def("run_dict", &Session::run_dict, py::arg("inputs"), "As run(), returning a dict by output name.");
}
