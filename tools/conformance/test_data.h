// SPDX-License-Identifier: Apache-2.0
// Reading the ONNX backend test data: test directories (model.onnx plus
// test_data_set_N/{input,output}_K.pb), what a model's graph declares, and serialized
// onnx::TensorProto files. Everything read here is untrusted: every parse and every size
// is checked, and a bad file is an error, never a crash.
#ifndef PLUGRT_TOOLS_CONFORMANCE_TEST_DATA_H_
#define PLUGRT_TOOLS_CONFORMANCE_TEST_DATA_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "plugrt/dtype.h"
#include "plugrt/status.h"

namespace plugrt::conformance {

/// The suites of the ONNX backend test data that hold runnable tests ("real" holds only
/// download pointers).
inline constexpr const char* kSuites[] = {"node", "simple", "pytorch-converted", "pytorch-operator"};

struct TestCase {
  std::string name;   ///< the directory's name, "test_abs"
  std::string suite;  ///< "node", "simple", ...
  std::string dir;    ///< the directory's path
};

/// The tests of `suite` under `root` (its subdirectories that hold a model.onnx), sorted
/// by name. Errors: kNotFound when `root`/`suite` is not a directory.
Result<std::vector<TestCase>> discover_tests(const std::string& root, const std::string& suite);

/// One graph input or output, as the model declares it.
struct GraphValue {
  std::string name;
  /// The declared shape has a symbolic or unknown dimension, or no shape at all.
  bool dynamic = false;
  /// An input that nodes read only at input positions other than the first: a
  /// parameter such as Reshape's shape or Slice's starts, rather than data.
  bool parameter = false;
};

/// What the runner needs to know of a model before importing it.
struct ModelInfo {
  int64_t opset = 0;  ///< the default domain's opset; 0 when the model imports none
  /// The op types of the main graph's nodes, distinct and sorted. Ops of another domain
  /// are written "domain:OpType".
  std::vector<std::string> op_types;
  /// The graph inputs that no initializer backs, in order: what the test data feeds.
  std::vector<GraphValue> inputs;
  std::vector<GraphValue> outputs;
  /// Why the model's interface is not plain tensors ("input 'x' is a sequence"), or empty.
  std::string non_tensor;
};

/// Reads the ModelProto at `path`. Errors: kAccessFailed, kInvalidArgument (not a
/// ModelProto).
Result<ModelInfo> read_model_info(const std::string& path);

/// The model at `path`, serialized again, with each graph input named in `frozen`
/// made an initializer holding the tensor of the TensorProto file it maps to. Errors:
/// as read_model_info() and read_tensor_file(); kNotFound for a name that is no input.
Result<std::string> freeze_inputs(const std::string& path, const std::map<std::string, std::string>& frozen);

/// One tensor of test data.
struct HostTensor {
  std::string name;  ///< the TensorProto's name (may be empty)
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;
  size_t num_elements = 0;
  std::vector<uint8_t> bytes;  ///< num_elements * dtype_size(dtype), little-endian
};

/// Reads one serialized onnx::TensorProto. Errors: kAccessFailed; kInvalidArgument (not
/// a TensorProto, or its data does not match its dtype and dims); kNotSupported (an
/// element type plugrt programs do not carry, external or segmented data).
Result<HostTensor> read_tensor_file(const std::string& path);

/// One test_data_set_N directory: its input_K.pb and output_K.pb paths, K = 0, 1, ...
struct DataSet {
  std::string name;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

/// The test's data sets, ordered by N. Errors: kInvalidArgument when a set skips a K
/// (input_0.pb and input_2.pb without input_1.pb) or the test has no data set.
Result<std::vector<DataSet>> list_data_sets(const std::string& test_dir);

/// "float32", "double", ... for an ONNX TensorProto.DataType code.
std::string onnx_type_name(int32_t data_type);

}  // namespace plugrt::conformance

#endif  // PLUGRT_TOOLS_CONFORMANCE_TEST_DATA_H_
