// SPDX-License-Identifier: Apache-2.0
#include "kernel_test_support.h"

#include <cstring>
#include <memory>
#include <random>

#include "compiled_graph.h"

namespace plugrt::portable::testing {

namespace {

template <typename T>
std::vector<uint8_t> to_bytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> from_bytes(const std::vector<uint8_t>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

size_t num_elements(const std::vector<int64_t>& shape) {
  size_t count = 1;
  for (int64_t dim : shape) count *= static_cast<size_t>(dim);
  return count;
}

}  // namespace

TestTensor TestTensor::f32(std::vector<int64_t> shape, const std::vector<float>& values) {
  return TestTensor{DType::kFloat32, std::move(shape), to_bytes(values), false};
}
TestTensor TestTensor::i64(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  return TestTensor{DType::kInt64, std::move(shape), to_bytes(values), false};
}
TestTensor TestTensor::i32(std::vector<int64_t> shape, const std::vector<int32_t>& values) {
  return TestTensor{DType::kInt32, std::move(shape), to_bytes(values), false};
}
TestTensor TestTensor::boolean(std::vector<int64_t> shape, const std::vector<bool>& values) {
  std::vector<uint8_t> bytes(values.begin(), values.end());
  return TestTensor{DType::kBool, std::move(shape), bytes, false};
}
TestTensor TestTensor::as_constant() const {
  TestTensor copy = *this;
  copy.constant = true;
  return copy;
}
std::vector<float> TestTensor::floats() const { return from_bytes<float>(bytes); }
std::vector<int64_t> TestTensor::ints() const { return from_bytes<int64_t>(bytes); }
std::vector<int32_t> TestTensor::int32s() const { return from_bytes<int32_t>(bytes); }
std::vector<bool> TestTensor::bools() const { return std::vector<bool>(bytes.begin(), bytes.end()); }

/// A DLTensor over a test tensor's bytes. A tensor with no elements gets an address all
/// the same (the graph refuses null data), as an application's empty buffer has one.
DLTensor view_of(TestTensor& tensor) {
  static uint8_t no_elements = 0;
  return DLTensor{tensor.bytes.empty() ? &no_elements : tensor.bytes.data(),
                  {kDLCPU, 0},
                  static_cast<int32_t>(tensor.shape.size()),
                  to_dlpack(tensor.dtype),
                  tensor.shape.data(),
                  nullptr,
                  0};
}

NodeRun run_graph(const std::vector<uint8_t>& graph, const std::vector<TestTensor>& inputs,
                  const std::vector<OutputSpec>& outputs) {
  NodeRun run;
  std::string error;
  CompileFailure failure{};
  std::unique_ptr<CompiledGraph> compiled = CompiledGraph::compile(graph.data(), graph.size(), &error, &failure);
  if (compiled == nullptr) {
    run.error = error;
    return run;
  }
  std::vector<TestTensor> input_copies = inputs;
  std::vector<DLTensor> tensors;
  tensors.reserve(inputs.size() + outputs.size());
  for (TestTensor& tensor : input_copies) {
    tensors.push_back(view_of(tensor));
  }
  for (const OutputSpec& spec : outputs) {
    TestTensor out{spec.dtype, spec.shape, std::vector<uint8_t>(num_elements(spec.shape) * dtype_size(spec.dtype)),
                   false};
    run.outputs.push_back(std::move(out));
  }
  for (TestTensor& tensor : run.outputs) {
    tensors.push_back(view_of(tensor));
  }
  std::vector<const DLTensor*> pointers;
  for (const DLTensor& tensor : tensors) pointers.push_back(&tensor);
  char message[256];
  if (!compiled->run(pointers.data(), inputs.size(), pointers.data() + inputs.size(), outputs.size(), message,
                     sizeof(message))) {
    run.error = message;
    run.outputs.clear();
  }
  return run;
}

std::vector<float> random_floats(size_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& value : values) value = distribution(engine);
  return values;
}

std::vector<float> iota_floats(size_t count, float first) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = first + static_cast<float>(i);
  return values;
}

NodeRun run_node(const NodeSpec& spec) {
  GraphBuilder builder(spec.opset);
  std::vector<ValueId> node_inputs;
  std::vector<TestTensor> graph_inputs;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const std::optional<TestTensor>& input = spec.inputs[i];
    if (!input) {
      node_inputs.push_back(kNoValue);
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    if (input->constant) {
      node_inputs.push_back(builder.add_constant(name, input->dtype, input->shape, input->bytes));
    } else {
      ValueId id = builder.add_value(name, input->dtype, input->shape);
      builder.add_input(id);
      node_inputs.push_back(id);
      graph_inputs.push_back(*input);
    }
  }
  std::vector<ValueId> node_outputs;
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    ValueId id = builder.add_value("out" + std::to_string(i), spec.outputs[i].dtype, spec.outputs[i].shape);
    builder.add_output(id);
    node_outputs.push_back(id);
  }
  builder.add_node(spec.op_type, "node", node_inputs, node_outputs, spec.attributes);
  return run_graph(builder.finish(), graph_inputs, spec.outputs);
}

}  // namespace plugrt::portable::testing
