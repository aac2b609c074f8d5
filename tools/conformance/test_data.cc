// SPDX-License-Identifier: Apache-2.0
#include "test_data.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include <onnx/onnx_pb.h>

namespace plugrt::conformance {

namespace fs = std::filesystem;

namespace {

// Test data larger than this is refused rather than allocated (the largest file of the
// ONNX test data is a few MiB).
constexpr uint64_t kMaxFileBytes = uint64_t{1} << 30;
constexpr uint64_t kMaxElements = uint64_t{1} << 28;

static_assert(sizeof(float) == 4, "float32 test data is copied as 4-byte floats");

bool is_little_endian() {
  const uint16_t probe = 1;
  uint8_t first = 0;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

Result<std::string> read_file(const std::string& path) {
  std::error_code error;
  const uintmax_t size = fs::file_size(path, error);
  if (error) return Status(Error::kAccessFailed, path + ": " + error.message());
  if (size > kMaxFileBytes) {
    return Status(Error::kNotSupported, path + ": " + std::to_string(size) + " bytes is more than this runner reads");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Error::kAccessFailed, path + ": cannot open it");
  std::string bytes(static_cast<size_t>(size), '\0');
  if (size > 0 && !in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    return Status(Error::kAccessFailed, path + ": cannot read it");
  }
  return bytes;
}

// The plugrt dtype of an ONNX element type, kUndefined when plugrt has none.
DType to_dtype(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto_DataType_FLOAT: return DType::kFloat32;
    case onnx::TensorProto_DataType_UINT8: return DType::kUInt8;
    case onnx::TensorProto_DataType_INT8: return DType::kInt8;
    case onnx::TensorProto_DataType_INT32: return DType::kInt32;
    case onnx::TensorProto_DataType_INT64: return DType::kInt64;
    case onnx::TensorProto_DataType_BOOL: return DType::kBool;
    case onnx::TensorProto_DataType_FLOAT16: return DType::kFloat16;
    case onnx::TensorProto_DataType_BFLOAT16: return DType::kBFloat16;
    case onnx::TensorProto_DataType_DOUBLE: return DType::kDouble;
    case onnx::TensorProto_DataType_INT16: return DType::kInt16;
    case onnx::TensorProto_DataType_UINT16: return DType::kUInt16;
    case onnx::TensorProto_DataType_UINT32: return DType::kUInt32;
    case onnx::TensorProto_DataType_UINT64: return DType::kUInt64;
    default: return DType::kUndefined;
  }
}

std::string type_kind(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: return "a tensor";
    case onnx::TypeProto::kSequenceType: return "a sequence";
    case onnx::TypeProto::kMapType: return "a map";
    case onnx::TypeProto::kOptionalType: return "an optional";
    case onnx::TypeProto::kSparseTensorType: return "a sparse tensor";
    case onnx::TypeProto::kOpaqueType: return "an opaque value";
    case onnx::TypeProto::VALUE_NOT_SET: return "untyped";
  }
  return "of an unknown kind";
}

// Why `value` is not a plain tensor (empty when it is).
std::string non_tensor_reason(const char* what, const onnx::ValueInfoProto& value) {
  if (!value.has_type()) return std::string();  // untyped: left to the importer
  if (value.type().value_case() == onnx::TypeProto::kTensorType) return std::string();
  return std::string(what) + " '" + value.name() + "' is " + type_kind(value.type());
}

bool is_dynamic(const onnx::ValueInfoProto& value) {
  if (!value.has_type() || !value.type().has_tensor_type()) return true;
  const onnx::TypeProto::Tensor& tensor = value.type().tensor_type();
  if (!tensor.has_shape()) return true;
  for (const onnx::TensorShapeProto::Dimension& dim : tensor.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) return true;
  }
  return false;
}

// Parses "<prefix><K>.pb"; -1 when `file` is not such a name.
int64_t numbered_file(const std::string& file, const std::string& prefix) {
  const std::string suffix = ".pb";
  if (file.size() <= prefix.size() + suffix.size() || file.compare(0, prefix.size(), prefix) != 0 ||
      file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return -1;
  }
  const std::string digits = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 6) return -1;
  int64_t k = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    k = k * 10 + (c - '0');
  }
  return k;
}

// The files of `directory` named <prefix>K.pb, K = 0, 1, ... without gaps.
Result<std::vector<std::string>> numbered_files(const std::string& directory, const std::string& prefix) {
  std::map<int64_t, std::string> found;
  std::error_code error;
  fs::directory_iterator it(directory, error);
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    const std::string file = it->path().filename().string();
    const int64_t k = numbered_file(file, prefix);
    if (k >= 0) found[k] = it->path().string();
  }
  if (error) return Status(Error::kAccessFailed, directory + ": " + error.message());
  std::vector<std::string> files;
  for (const auto& [k, path] : found) {
    if (k != static_cast<int64_t>(files.size())) {
      return Status(Error::kInvalidArgument, directory + ": " + prefix + std::to_string(files.size()) +
                                                 ".pb is missing but " + prefix + std::to_string(k) + ".pb exists");
    }
    files.push_back(path);
  }
  return files;
}

// Copies `count` typed values of a repeated field, narrowing each to T.
template <typename T, typename Field>
void copy_narrowed(const Field& field, std::vector<uint8_t>& bytes) {
  bytes.resize(static_cast<size_t>(field.size()) * sizeof(T));
  for (int i = 0; i < field.size(); ++i) {
    const T value = static_cast<T>(field.Get(i));
    std::memcpy(bytes.data() + static_cast<size_t>(i) * sizeof(T), &value, sizeof(T));
  }
}

}  // namespace

std::string onnx_type_name(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto_DataType_UNDEFINED: return "undefined";
    case onnx::TensorProto_DataType_FLOAT: return "float32";
    case onnx::TensorProto_DataType_UINT8: return "uint8";
    case onnx::TensorProto_DataType_INT8: return "int8";
    case onnx::TensorProto_DataType_UINT16: return "uint16";
    case onnx::TensorProto_DataType_INT16: return "int16";
    case onnx::TensorProto_DataType_INT32: return "int32";
    case onnx::TensorProto_DataType_INT64: return "int64";
    case onnx::TensorProto_DataType_STRING: return "string";
    case onnx::TensorProto_DataType_BOOL: return "bool";
    case onnx::TensorProto_DataType_FLOAT16: return "float16";
    case onnx::TensorProto_DataType_DOUBLE: return "double";
    case onnx::TensorProto_DataType_UINT32: return "uint32";
    case onnx::TensorProto_DataType_UINT64: return "uint64";
    case onnx::TensorProto_DataType_COMPLEX64: return "complex64";
    case onnx::TensorProto_DataType_COMPLEX128: return "complex128";
    case onnx::TensorProto_DataType_BFLOAT16: return "bfloat16";
    default: return "element type " + std::to_string(data_type);
  }
}

Result<std::vector<TestCase>> discover_tests(const std::string& root, const std::string& suite) {
  const fs::path directory = fs::path(root) / suite;
  std::error_code error;
  if (!fs::is_directory(directory, error)) {
    return Status(Error::kNotFound, directory.string() + " is not a directory");
  }
  std::vector<TestCase> tests;
  fs::directory_iterator it(directory, error);
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    std::error_code ignored;
    if (!it->is_directory(ignored) || !fs::is_regular_file(it->path() / "model.onnx", ignored)) continue;
    tests.push_back(TestCase{it->path().filename().string(), suite, it->path().string()});
  }
  if (error) return Status(Error::kAccessFailed, directory.string() + ": " + error.message());
  std::sort(tests.begin(), tests.end(), [](const TestCase& a, const TestCase& b) { return a.name < b.name; });
  return tests;
}

Result<ModelInfo> read_model_info(const std::string& path) {
  PLUGRT_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status(Error::kInvalidArgument, path + ": not an ONNX ModelProto");
  }
  ModelInfo info;
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") info.opset = opset.version();
  }
  const onnx::GraphProto& graph = model.graph();
  std::set<std::string> initializers;
  for (const onnx::TensorProto& initializer : graph.initializer()) initializers.insert(initializer.name());
  for (const onnx::SparseTensorProto& initializer : graph.sparse_initializer()) {
    initializers.insert(initializer.values().name());
  }
  std::set<std::string> op_types;
  for (const onnx::NodeProto& node : graph.node()) {
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    op_types.insert(default_domain ? node.op_type() : node.domain() + ":" + node.op_type());
  }
  info.op_types.assign(op_types.begin(), op_types.end());
  std::set<std::string> read_first, read_later;  // by a node's input 0, by its others
  for (const onnx::NodeProto& node : graph.node()) {
    for (int i = 0; i < node.input_size(); ++i) (i == 0 ? read_first : read_later).insert(node.input(i));
  }
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (initializers.count(input.name()) != 0) continue;
    if (info.non_tensor.empty()) info.non_tensor = non_tensor_reason("input", input);
    const bool parameter = read_first.count(input.name()) == 0 && read_later.count(input.name()) != 0;
    info.inputs.push_back(GraphValue{input.name(), is_dynamic(input), parameter});
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    if (info.non_tensor.empty()) info.non_tensor = non_tensor_reason("output", output);
    info.outputs.push_back(GraphValue{output.name(), is_dynamic(output), false});
  }
  for (const onnx::ValueInfoProto& value : graph.value_info()) {
    if (info.non_tensor.empty()) info.non_tensor = non_tensor_reason("value", value);
  }
  return info;
}

Result<std::string> freeze_inputs(const std::string& path, const std::map<std::string, std::string>& frozen) {
  PLUGRT_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status(Error::kInvalidArgument, path + ": not an ONNX ModelProto");
  }
  onnx::GraphProto& graph = *model.mutable_graph();
  for (const auto& [name, file] : frozen) {
    int index = -1;
    for (int i = 0; i < graph.input_size(); ++i) {
      if (graph.input(i).name() == name) index = i;
    }
    if (index < 0) return Status(Error::kNotFound, path + ": no graph input '" + name + "'");
    // Any element type: what the importer makes of the constant is its own answer.
    PLUGRT_ASSIGN_OR_RETURN(std::string tensor_bytes, read_file(file));
    onnx::TensorProto& initializer = *graph.add_initializer();
    if (!initializer.ParseFromString(tensor_bytes))
      return Status(Error::kInvalidArgument, file + ": not a TensorProto");
    initializer.set_name(name);
    // NumPy has no bfloat16, so the test data stores a bfloat16 tensor as its uint16 bits.
    const onnx::TypeProto& declared = graph.input(index).type();
    if (declared.has_tensor_type() && declared.tensor_type().elem_type() == onnx::TensorProto::BFLOAT16 &&
        initializer.data_type() == onnx::TensorProto::UINT16) {
      initializer.set_data_type(onnx::TensorProto::BFLOAT16);
    }
    // From IR version 4 an initializer need not be a graph input; before, it must be.
    if (model.ir_version() >= 4) graph.mutable_input()->DeleteSubrange(index, 1);
  }
  std::string out;
  if (!model.SerializeToString(&out)) return Status(Error::kInternal, path + ": cannot serialize the frozen model");
  return out;
}

Result<HostTensor> read_tensor_file(const std::string& path) {
  PLUGRT_ASSIGN_OR_RETURN(std::string file, read_file(path));
  onnx::TensorProto proto;
  if (file.size() > static_cast<size_t>(INT_MAX) || !proto.ParseFromArray(file.data(), static_cast<int>(file.size()))) {
    return Status(Error::kInvalidArgument, path + ": not a TensorProto");
  }
  HostTensor tensor;
  tensor.name = proto.name();
  if (proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL || proto.external_data_size() > 0) {
    return Status(Error::kNotSupported, path + ": the tensor's data is external");
  }
  if (proto.has_segment()) return Status(Error::kNotSupported, path + ": the tensor is segmented");
  tensor.dtype = to_dtype(proto.data_type());
  if (tensor.dtype == DType::kUndefined) {
    return Status(Error::kNotSupported,
                  path + ": " + onnx_type_name(proto.data_type()) + " elements, which plugrt programs do not carry");
  }
  uint64_t count = 1;
  for (int64_t dim : proto.dims()) {
    if (dim < 0) return Status(Error::kInvalidArgument, path + ": negative dimension " + std::to_string(dim));
    if (dim != 0 && count > kMaxElements / static_cast<uint64_t>(dim)) {
      return Status(Error::kNotSupported, path + ": more elements than this runner reads");
    }
    count *= static_cast<uint64_t>(dim);
    tensor.shape.push_back(dim);
  }
  if (count > kMaxElements) return Status(Error::kNotSupported, path + ": more elements than this runner reads");
  tensor.num_elements = static_cast<size_t>(count);
  const size_t element_size = dtype_size(tensor.dtype);
  const size_t expected_bytes = tensor.num_elements * element_size;
  if (proto.has_raw_data()) {
    if (!is_little_endian()) return Status(Error::kNotSupported, path + ": raw data on a big-endian host");
    if (proto.raw_data().size() != expected_bytes) {
      return Status(Error::kInvalidArgument, path + ": raw_data holds " + std::to_string(proto.raw_data().size()) +
                                                 " bytes, expected " + std::to_string(expected_bytes));
    }
    tensor.bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
    if (tensor.dtype == DType::kBool) {
      for (uint8_t& b : tensor.bytes) b = b != 0 ? 1 : 0;
    }
    return tensor;
  }
  // Typed fields: float32 in float_data, int64 in int64_data, the narrower integer types,
  // bool and float16 (as its bits) in int32_data.
  int typed_count = 0;
  switch (tensor.dtype) {
    case DType::kFloat32:
      typed_count = proto.float_data_size();
      copy_narrowed<float>(proto.float_data(), tensor.bytes);
      break;
    case DType::kInt64:
      typed_count = proto.int64_data_size();
      copy_narrowed<int64_t>(proto.int64_data(), tensor.bytes);
      break;
    case DType::kInt32:
      typed_count = proto.int32_data_size();
      copy_narrowed<int32_t>(proto.int32_data(), tensor.bytes);
      break;
    case DType::kInt8:
      typed_count = proto.int32_data_size();
      copy_narrowed<int8_t>(proto.int32_data(), tensor.bytes);
      break;
    case DType::kUInt8:
      typed_count = proto.int32_data_size();
      copy_narrowed<uint8_t>(proto.int32_data(), tensor.bytes);
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kUInt16:
      typed_count = proto.int32_data_size();
      copy_narrowed<uint16_t>(proto.int32_data(), tensor.bytes);
      break;
    case DType::kInt16:
      typed_count = proto.int32_data_size();
      copy_narrowed<int16_t>(proto.int32_data(), tensor.bytes);
      break;
    case DType::kDouble:
      typed_count = proto.double_data_size();
      copy_narrowed<double>(proto.double_data(), tensor.bytes);
      break;
    case DType::kUInt32:
      typed_count = static_cast<int>(proto.uint64_data_size());
      copy_narrowed<uint32_t>(proto.uint64_data(), tensor.bytes);
      break;
    case DType::kUInt64:
      typed_count = static_cast<int>(proto.uint64_data_size());
      copy_narrowed<uint64_t>(proto.uint64_data(), tensor.bytes);
      break;
    case DType::kBool:
      typed_count = proto.int32_data_size();
      tensor.bytes.resize(static_cast<size_t>(typed_count));
      for (int i = 0; i < typed_count; ++i) tensor.bytes[static_cast<size_t>(i)] = proto.int32_data(i) != 0 ? 1 : 0;
      break;
    case DType::kUndefined: break;
  }
  if (static_cast<uint64_t>(typed_count) != count) {
    return Status(Error::kInvalidArgument, path + ": holds " + std::to_string(typed_count) + " " +
                                               std::string(to_string(tensor.dtype)) + " values, expected " +
                                               std::to_string(count));
  }
  return tensor;
}

Result<std::vector<DataSet>> list_data_sets(const std::string& test_dir) {
  std::map<int64_t, std::string> found;
  std::error_code error;
  fs::directory_iterator it(test_dir, error);
  const std::string prefix = "test_data_set_";
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code ignored;
    if (!it->is_directory(ignored) || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    found[std::stoll(digits)] = it->path().string();
  }
  if (error) return Status(Error::kAccessFailed, test_dir + ": " + error.message());
  if (found.empty()) return Status(Error::kInvalidArgument, test_dir + ": no test_data_set_N directory");
  std::vector<DataSet> sets;
  for (const auto& [n, path] : found) {
    DataSet set;
    set.name = fs::path(path).filename().string();
    PLUGRT_ASSIGN_OR_RETURN(set.inputs, numbered_files(path, "input_"));
    PLUGRT_ASSIGN_OR_RETURN(set.outputs, numbered_files(path, "output_"));
    if (set.outputs.empty()) return Status(Error::kInvalidArgument, path + ": no output_K.pb");
    sets.push_back(std::move(set));
  }
  return sets;
}

}  // namespace plugrt::conformance
