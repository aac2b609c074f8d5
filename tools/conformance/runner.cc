// SPDX-License-Identifier: Apache-2.0
#include "runner.h"

#include <exception>
#include <map>
#include <optional>
#include <utility>

#include "backend_coverage.h"
#include "compare.h"
#include "compiler.h"
#include "onnx_importer.h"
#include "plugrt/method.h"
#include "plugrt/program.h"
#include "test_data_errata.h"

namespace plugrt::conformance {

namespace {

TestResult result(Verdict verdict, std::string reason) {
  TestResult made;
  made.verdict = verdict;
  made.reason = std::move(reason);
  return made;
}
TestResult pass() { return result(Verdict::kPass, std::string()); }
TestResult fail(std::string reason) { return result(Verdict::kFail, std::move(reason)); }
TestResult unsupported(std::string reason) { return result(Verdict::kUnsupported, std::move(reason)); }

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string file_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Replaces every `from` in `text` with `to`.
void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// A message on one line without the model's path, which differs between tests: a
// leading "<path>: " goes, the path elsewhere becomes "model.onnx".
std::string clean_message(std::string message, const std::string& model_path) {
  replace_all(message, model_path + ": ", "");
  replace_all(message, model_path, "model.onnx");
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

// The reason an import or a compile error gives its test: kNotSupported is unsupported,
// anything else fails.
TestResult from_pipeline_error(const char* stage, const Status& status, const std::string& model_path) {
  if (status.code() == Error::kNotSupported) return unsupported(clean_message(status.message(), model_path));
  return fail(std::string(stage) + ": " + clean_message(status.to_string(), model_path));
}

// A test data file's error fails the test: its model declares plain tensors (a model
// whose inputs or outputs are sequences, maps or optionals is unsupported before any
// data is read), so a file that is not a TensorProto of a carried dtype is bad data, or
// data the pipeline should have refused.
TestResult from_data_error(const Status& status, const std::string& test_dir) {
  std::string message = status.message();
  replace_all(message, test_dir + "/", "");
  return fail("test data: " + message);
}

// How a test is run: as it is, or with some graph inputs frozen into constants.
struct Variant {
  std::vector<bool> frozen;  // per model input
  bool any() const {
    for (bool f : frozen) {
      if (f) return true;
    }
    return false;
  }
};

struct Loaded {
  bool valid = false;
  bool pipeline_error = false;                               // import or compile failed
  std::map<std::string, std::vector<int64_t>> input_shapes;  // what it was imported with
  std::optional<Method> method;
};

// Imports (the file, or `model_bytes` when given), compiles and loads the model; a
// TestResult when that does not succeed.
std::optional<TestResult> load(const TestCase& test, const std::string* model_bytes, Registry& registry,
                               const RunOptions& options, Loaded& loaded) {
  const std::string model_path = test.dir + "/model.onnx";
  compiler::ImportOptions import_options;
  import_options.input_shapes = loaded.input_shapes;
  Result<compiler::ImportedModel> imported =
      model_bytes == nullptr
          ? compiler::import_onnx_file(model_path, import_options)
          : compiler::import_onnx_bytes(
                Span<const uint8_t>(reinterpret_cast<const uint8_t*>(model_bytes->data()), model_bytes->size()),
                model_path, import_options);
  if (!imported.is_ok()) {
    loaded.pipeline_error = true;
    return from_pipeline_error("import", imported.status(), model_path);
  }

  if (!options.only_backend.empty()) {
    Result<Coverage> coverage = partition_coverage(registry, options.only_backend, imported->graph);
    if (!coverage.is_ok()) return fail("partition: " + clean_message(coverage.status().to_string(), model_path));
    if (!coverage->refused.empty()) return unsupported("partition " + coverage->describe());
  }

  compiler::CompileOptions compile_options;
  compile_options.backends = options.backends;
  compile_options.producer = "plugrt_conformance";
  Result<compiler::CompiledModel> compiled = compiler::compile_graph(imported->graph, registry, compile_options);
  if (!compiled.is_ok()) {
    loaded.pipeline_error = true;
    return from_pipeline_error("compile", compiled.status(), model_path);
  }
  if (!options.only_backend.empty()) {
    const std::string elsewhere = placed_elsewhere(compiled->summary, options.only_backend);
    if (!elsewhere.empty()) return unsupported("the program runs " + elsewhere);
  }

  Result<Program> program = Program::from_bytes(compiled->program, test.name);
  if (!program.is_ok()) return fail("load program: " + clean_message(program.status().to_string(), model_path));
  MethodOptions method_options;
  method_options.num_threads = options.method_threads;
  method_options.allowed_backends = options.backends;
  Result<Method> method = Method::load(
      *program, "forward", options.method_registry != nullptr ? *options.method_registry : registry, method_options);
  if (!method.is_ok()) return fail("load method: " + clean_message(method.status().to_string(), model_path));
  // A delegate that fell back to portable does not test the backend it was compiled for.
  for (const DelegatePlacement& placement : method->report().delegates) {
    if (placement.fell_back) {
      return fail("delegate '" + placement.delegate + "' fell back from '" + placement.requested_backend + "' to '" +
                  placement.backend + "': " + clean_message(placement.reason, model_path));
    }
  }
  loaded.method.emplace(std::move(method).value());
  loaded.valid = true;
  return std::nullopt;
}

// The shapes to import with: those of this data set's fed inputs whose declared shape
// is dynamic (the importer needs every input static).
std::optional<TestResult> dynamic_input_shapes(const std::string& test_dir, const ModelInfo& model,
                                               const Variant& variant, const DataSet& set,
                                               std::map<std::string, std::vector<int64_t>>& shapes) {
  shapes.clear();
  for (size_t k = 0; k < model.inputs.size() && k < set.inputs.size(); ++k) {
    if (!model.inputs[k].dynamic || variant.frozen[k]) continue;
    Result<HostTensor> tensor = read_tensor_file(set.inputs[k]);
    if (!tensor.is_ok()) return from_data_error(tensor.status(), test_dir);
    shapes[model.inputs[k].name] = tensor->shape;
  }
  return std::nullopt;
}

// NumPy has no bfloat16, so ONNX's test data stores a bfloat16 tensor as its uint16 bits.
void adopt_bfloat16_bits(DType spec_dtype, HostTensor& tensor) {
  if (spec_dtype == DType::kBFloat16 && tensor.dtype == DType::kUInt16) tensor.dtype = DType::kBFloat16;
}

// Feeds input_K.pb to the method's inputs: the model's inputs that are not frozen, in order.
std::optional<TestResult> set_inputs(const std::string& test_dir, const ModelInfo& model, const Variant& variant,
                                     const DataSet& set, Method& method) {
  std::vector<size_t> fed;  // model input index of each method input
  for (size_t k = 0; k < model.inputs.size(); ++k) {
    if (!variant.frozen[k]) fed.push_back(k);
  }
  if (set.inputs.size() != model.inputs.size() || fed.size() != method.num_inputs()) {
    return fail("the method has " + std::to_string(method.num_inputs()) + " inputs, the model " +
                std::to_string(fed.size()) + " and the test data " + std::to_string(set.inputs.size()));
  }
  static const uint8_t empty_data[8] = {};
  for (size_t m = 0; m < fed.size(); ++m) {
    const size_t k = fed[m];
    const TensorSpec& spec = method.input_spec(m);
    if (spec.name != model.inputs[k].name) {
      return fail("method input " + std::to_string(m) + " is '" + spec.name + "', the model's is '" +
                  model.inputs[k].name + "'");
    }
    Result<HostTensor> tensor = read_tensor_file(set.inputs[k]);
    if (!tensor.is_ok()) return from_data_error(tensor.status(), test_dir);
    if (!tensor->name.empty() && tensor->name != spec.name) {
      return fail(file_name(set.inputs[k]) + " is for input '" + tensor->name + "', method input " + std::to_string(m) +
                  " is '" + spec.name + "'");
    }
    adopt_bfloat16_bits(spec.dtype, *tensor);
    if (tensor->dtype == spec.dtype && tensor->shape != spec.shape && !model.inputs[k].dynamic) {
      // The model declares this static shape itself: the test cannot be run as written.
      return unsupported("the test data contradicts the model: input '" + spec.name + "' is declared " +
                         shape_text(spec.shape) + ", " + file_name(set.inputs[k]) + " holds " +
                         shape_text(tensor->shape));
    }
    if (tensor->dtype != spec.dtype || tensor->shape != spec.shape) {
      return fail("input '" + spec.name + "': the method takes " + std::string(to_string(spec.dtype)) +
                  shape_text(spec.shape) + ", the test feeds " + std::string(to_string(tensor->dtype)) +
                  shape_text(tensor->shape));
    }
    DLTensor view{};
    view.data = tensor->bytes.empty() ? const_cast<uint8_t*>(empty_data) : tensor->bytes.data();
    view.device = DLDevice{kDLCPU, 0};
    view.ndim = static_cast<int32_t>(tensor->shape.size());
    view.dtype = to_dlpack(tensor->dtype);
    view.shape = tensor->shape.data();
    view.strides = nullptr;
    view.byte_offset = 0;
    if (Status status = method.set_input(m, view); !status.is_ok()) {
      return fail("set input '" + spec.name + "': " + status.to_string());
    }
  }
  return std::nullopt;
}

// Whether `tensor` is a dense CPU tensor of `dtype` and `shape`; the reason when not.
std::string check_output_view(const DLTensor& tensor, DType dtype, const std::vector<int64_t>& shape,
                              size_t num_elements) {
  if (tensor.device.device_type != kDLCPU) return "is not on the CPU";
  if (!matches_dlpack(dtype, tensor.dtype)) return "its DLTensor's dtype does not match its spec";
  if (tensor.ndim != static_cast<int32_t>(shape.size()) || (tensor.ndim > 0 && tensor.shape == nullptr)) {
    return "its DLTensor's rank does not match its spec";
  }
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (tensor.shape[d] != shape[d]) return "its DLTensor's shape does not match its spec";
    if (tensor.strides != nullptr && shape[d] != 1 && tensor.strides[d] != stride) return "is not dense";
    stride *= shape[d];
  }
  if (num_elements > 0 && tensor.data == nullptr) return "has no data";
  return std::string();
}

std::optional<TestResult> check_outputs(const std::string& test_dir, const ModelInfo& model, const DataSet& set,
                                        const Method& method) {
  if (set.outputs.size() != method.num_outputs() || model.outputs.size() != method.num_outputs()) {
    return fail("the method has " + std::to_string(method.num_outputs()) + " outputs, the model " +
                std::to_string(model.outputs.size()) + " and the test data " + std::to_string(set.outputs.size()));
  }
  for (size_t k = 0; k < set.outputs.size(); ++k) {
    const TensorSpec& spec = method.output_spec(k);
    if (spec.name != model.outputs[k].name) {
      return fail("method output " + std::to_string(k) + " is '" + spec.name + "', the model's is '" +
                  model.outputs[k].name + "'");
    }
    Result<HostTensor> expected = read_tensor_file(set.outputs[k]);
    if (!expected.is_ok()) return from_data_error(expected.status(), test_dir);
    adopt_bfloat16_bits(spec.dtype, *expected);
    if (expected->dtype != spec.dtype || expected->shape != spec.shape) {
      return fail("output '" + spec.name + "': the method gives " + std::string(to_string(spec.dtype)) +
                  shape_text(spec.shape) + ", expected " + std::string(to_string(expected->dtype)) +
                  shape_text(expected->shape));
    }
    const DLTensor& actual = method.output(k);
    const std::string bad_view = check_output_view(actual, spec.dtype, spec.shape, expected->num_elements);
    if (!bad_view.empty()) return fail("output '" + spec.name + "' " + bad_view);
    const auto* data = static_cast<const uint8_t*>(actual.data) + actual.byte_offset;
    const std::string mismatch =
        compare_elements(spec.dtype, spec.shape, data, expected->bytes.data(), expected->num_elements);
    if (!mismatch.empty()) return fail("output '" + spec.name + "': " + mismatch);
  }
  return std::nullopt;
}

// Runs every data set of the test under `variant`. `pipeline_error`: whether the
// result is an import or compile error.
TestResult run_variant(const TestCase& test, const ModelInfo& model, const std::vector<DataSet>& sets,
                       const Variant& variant, Registry& registry, const RunOptions& options, bool* pipeline_error) {
  *pipeline_error = false;
  Loaded loaded;
  for (const DataSet& set : sets) {
    // Inputs declared with dynamic shapes are imported with this set's shapes; a set
    // whose shapes differ from the last one's is compiled again, and so is every set
    // when inputs are frozen (their values are the set's).
    std::map<std::string, std::vector<int64_t>> shapes;
    if (std::optional<TestResult> error = dynamic_input_shapes(test.dir, model, variant, set, shapes)) return *error;
    if (!loaded.valid || shapes != loaded.input_shapes || variant.any()) {
      loaded = Loaded();
      loaded.input_shapes = std::move(shapes);
      std::optional<std::string> frozen_model;
      if (variant.any()) {
        std::map<std::string, std::string> frozen;
        for (size_t k = 0; k < model.inputs.size() && k < set.inputs.size(); ++k) {
          if (variant.frozen[k]) frozen[model.inputs[k].name] = set.inputs[k];
        }
        Result<std::string> bytes = freeze_inputs(test.dir + "/model.onnx", frozen);
        if (!bytes.is_ok()) {
          *pipeline_error = true;
          return from_data_error(bytes.status(), test.dir);
        }
        frozen_model = std::move(bytes).value();
      }
      if (std::optional<TestResult> error =
              load(test, frozen_model ? &*frozen_model : nullptr, registry, options, loaded)) {
        *pipeline_error = loaded.pipeline_error;
        return *error;
      }
    }
    const std::string where = sets.size() > 1 ? set.name + ": " : std::string();
    Method& method = *loaded.method;
    if (std::optional<TestResult> error = set_inputs(test.dir, model, variant, set, method)) {
      error->reason = where + error->reason;
      return *error;
    }
    if (Status status = method.execute(); !status.is_ok()) {
      return fail(where + "execute: " + clean_message(status.to_string(), test.dir + "/model.onnx"));
    }
    // An isolated backend that crashed or hung was replaced, within the call, by its
    // portable fallback: the outputs are the fallback's, and the backend failed.
    for (const DelegatePlacement& placement : method.report().delegates) {
      if (placement.fell_back) {
        return fail(where + "execute: delegate '" + placement.delegate + "' of '" + placement.requested_backend +
                    "' fell back to '" + placement.backend +
                    "': " + clean_message(placement.reason, test.dir + "/model.onnx"));
      }
    }
    if (std::optional<TestResult> error = check_outputs(test.dir, model, set, method)) {
      error->reason = where + error->reason;
      return *error;
    }
  }
  return pass();
}

TestResult run_unguarded(const TestCase& test, const ModelInfo& model, Registry& registry, const RunOptions& options) {
  if (!model.non_tensor.empty()) return unsupported(model.non_tensor + "; only tensors are supported");
  if (std::string erratum = test_data_erratum(test.name); !erratum.empty()) {
    return unsupported("the test data contradicts the model: " + erratum);
  }
  Result<std::vector<DataSet>> sets = list_data_sets(test.dir);
  if (!sets.is_ok()) return from_data_error(sets.status(), test.dir);

  Variant as_is{std::vector<bool>(model.inputs.size(), false)};
  bool pipeline_error = false;
  TestResult first = run_variant(test, model, *sets, as_is, registry, options, &pipeline_error);
  if (first.verdict != Verdict::kUnsupported || !options.freeze_parameters) return first;

  // Unsupported as it is: parameters fed as inputs (Reshape's shape, Slice's starts) are
  // often what a backend needs constant. Run again with them frozen to the data set's
  // values: the same computation, so a pass, or a wrong result or an error from load or
  // execute there, says whether the op computes right. Unsupported again, or an import
  // or compile error (freezing changed the model; ONNX's own shape inference, for one,
  // may then disagree with the test's declared shapes): the first result stands.
  Variant frozen{std::vector<bool>(model.inputs.size(), false)};
  std::vector<std::string> names;
  std::string listed;
  for (size_t k = 0; k < model.inputs.size(); ++k) {
    if (!model.inputs[k].parameter) continue;
    frozen.frozen[k] = true;
    names.push_back(model.inputs[k].name);
    listed += (listed.empty() ? "'" : ", '") + model.inputs[k].name + "'";
  }
  if (!frozen.any()) return first;
  TestResult retried = run_variant(test, model, *sets, frozen, registry, options, &pipeline_error);
  if (retried.verdict == Verdict::kUnsupported || pipeline_error) return first;
  if (retried.verdict == Verdict::kFail) {
    retried.reason = "with " + listed + " frozen to the test's values: " + retried.reason;
  }
  retried.frozen_inputs = std::move(names);
  return retried;
}

}  // namespace

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass: return "pass";
    case Verdict::kFail: return "fail";
    case Verdict::kUnsupported: return "unsupported";
  }
  return "unknown";
}

TestResult run_test(const TestCase& test, const ModelInfo& model, Registry& registry, const RunOptions& options) {
  try {
    TestResult outcome = run_unguarded(test, model, registry, options);
    for (char& c : outcome.reason) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    return outcome;
  } catch (const std::exception& e) {
    return fail(std::string("unexpected exception: ") + e.what());
  } catch (...) {
    return fail("unexpected exception");
  }
}

}  // namespace plugrt::conformance
