// SPDX-License-Identifier: Apache-2.0
// Runs one node through the portable kernels, for the kernel tests.
#ifndef PLUGRT_PORTABLE_TEST_KERNEL_TEST_SUPPORT_H_
#define PLUGRT_PORTABLE_TEST_KERNEL_TEST_SUPPORT_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "plugrt/dtype.h"
#include "plugrt/graph_builder.h"

namespace plugrt::portable::testing {

/// A tensor with its bytes. `constant` makes it a constant of the graph instead of a
/// graph input (needed for shape-like inputs such as Reshape's shape).
struct TestTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  bool constant = false;

  static TestTensor f32(std::vector<int64_t> shape, const std::vector<float>& values);
  static TestTensor i64(std::vector<int64_t> shape, const std::vector<int64_t>& values);
  static TestTensor i32(std::vector<int64_t> shape, const std::vector<int32_t>& values);
  static TestTensor boolean(std::vector<int64_t> shape, const std::vector<bool>& values);
  /// The same tensor as a constant.
  TestTensor as_constant() const;

  std::vector<float> floats() const;
  std::vector<int64_t> ints() const;
  std::vector<int32_t> int32s() const;
  std::vector<bool> bools() const;
};

/// A tensor of any dtype from values of its C++ element type (bool as uint8_t).
template <typename T>
TestTensor typed_tensor(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return TestTensor{dtype, std::move(shape), std::move(bytes), false};
}

/// The elements of a tensor as its C++ element type.
template <typename T>
std::vector<T> values_of(const TestTensor& tensor) {
  std::vector<T> values(tensor.bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), tensor.bytes.data(), values.size() * sizeof(T));
  return values;
}

/// What one output should look like (the graph IR carries static shapes).
struct OutputSpec {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
};

struct NodeSpec {
  std::string op_type;
  std::vector<Attribute> attributes;
  /// nullopt: an absent optional input.
  std::vector<std::optional<TestTensor>> inputs;
  std::vector<OutputSpec> outputs;
  int opset = 17;
};

/// The outputs, or the error of compiling or running the node.
struct NodeRun {
  std::string error;
  std::vector<TestTensor> outputs;
  bool ok() const { return error.empty(); }
};

NodeRun run_node(const NodeSpec& spec);

/// `count` floats uniform in [-1, 1], the same for the same seed.
std::vector<float> random_floats(size_t count, uint32_t seed);
/// first, first + 1, first + 2, ...
std::vector<float> iota_floats(size_t count, float first = 0.0f);
/// A float32 output of `shape`.
inline OutputSpec f32_out(std::vector<int64_t> shape) { return {DType::kFloat32, std::move(shape)}; }

/// Runs a whole graph IR buffer with these inputs and output specs.
NodeRun run_graph(const std::vector<uint8_t>& graph, const std::vector<TestTensor>& inputs,
                  const std::vector<OutputSpec>& outputs);

}  // namespace plugrt::portable::testing

#endif  // PLUGRT_PORTABLE_TEST_KERNEL_TEST_SUPPORT_H_
