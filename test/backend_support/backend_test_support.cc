// SPDX-License-Identifier: Apache-2.0
#include "backend_test_support.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npy.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"

namespace plugrt::backend_test {

namespace {

std::string model_path(const std::string& file) { return std::string(PLUGRT_MODELS_DIR) + "/" + file; }

}  // namespace

PluginEnvironment::PluginEnvironment(const std::string& plugin_file) {
  EXPECT_TRUE(register_builtin_backends(registry_).is_ok());
  loader_ = std::make_unique<plugins::PluginLoader>(registry_, plugins::SearchPathOptions::explicit_files_only());
  Result<PluginId> loaded = loader_->load(plugin_file);
  EXPECT_TRUE(loaded.is_ok()) << loaded.status().to_string();
}

compiler::CompiledModel PluginEnvironment::compile(const std::vector<uint8_t>& graph,
                                                   const std::vector<std::string>& backends) {
  compiler::CompileOptions options;
  options.backends = backends;
  Result<compiler::CompiledModel> compiled = compiler::compile_graph(graph, registry_, options);
  EXPECT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  if (!compiled.is_ok()) return {};
  return std::move(compiled).value();
}

compiler::CompiledModel PluginEnvironment::compile_model(const std::string& name,
                                                         const std::vector<std::string>& backends, bool fallback) {
  compiler::CompileOptions options;
  options.backends = backends;
  options.fallback = fallback;
  Result<compiler::CompiledModel> compiled =
      compiler::compile_onnx_file(model_path(name + ".onnx"), registry_, options);
  EXPECT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  if (!compiled.is_ok()) return {};
  return std::move(compiled).value();
}

Result<Method> PluginEnvironment::load(const std::vector<uint8_t>& bytes, const MethodOptions& options) {
  Result<Program> program = Program::from_bytes(bytes, "test.prt");
  if (!program.is_ok()) return program.status();
  return Method::load(*program, "forward", registry_, options);
}

std::vector<std::vector<float>> run_with_seed(Method& method, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    const TensorSpec& spec = method.input_spec(i);
    std::vector<float> values(spec.num_bytes() / sizeof(float));
    for (float& value : values) value = uniform(generator);
    std::vector<int64_t> indices;  // int64 inputs are indices into tables of 4 rows or more
    if (spec.dtype == DType::kInt64) {
      std::uniform_int_distribution<int64_t> row(-4, 3);
      for (size_t k = 0; k < spec.num_bytes() / sizeof(int64_t); ++k) indices.push_back(row(generator));
    }
    std::vector<int64_t> shape = spec.shape;
    DLTensor tensor{
        values.data(), {kDLCPU, 0}, static_cast<int32_t>(shape.size()), {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
    if (spec.dtype == DType::kInt64) {
      tensor.data = indices.data();
      tensor.dtype = {kDLInt, 64, 1};
    }
    Status status = method.set_input(i, tensor);
    EXPECT_TRUE(status.is_ok()) << status.to_string();
  }
  Status status = method.execute();
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  std::vector<std::vector<float>> outputs;
  for (size_t o = 0; o < method.num_outputs(); ++o) {
    const DLTensor& tensor = method.output(o);
    const size_t count = method.output_spec(o).num_bytes() / sizeof(float);
    const float* data = static_cast<const float*>(tensor.data);
    outputs.emplace_back(data, data + count);
  }
  return outputs;
}

double relative_difference(const std::vector<float>& actual, const std::vector<float>& expected) {
  if (actual.size() != expected.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], b = expected[i];
    if (std::isnan(a) != std::isnan(b)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::fabs(a - b) / std::max(1.0, std::fabs(b)));
  }
  return worst;
}

double difference_from_pytorch(Method& method, const std::string& name) {
  Result<tools::NpyArray> input = tools::read_npy(model_path(name + ".input.npy"));
  Result<tools::NpyArray> expected = tools::read_npy(model_path(name + ".output.npy"));
  EXPECT_TRUE(input.is_ok() && expected.is_ok());
  if (!input.is_ok() || !expected.is_ok()) return 1e9;
  DLTensor tensor{input->data.data(),
                  {kDLCPU, 0},
                  static_cast<int32_t>(input->shape.size()),
                  to_dlpack(input->dtype),
                  input->shape.data(),
                  nullptr,
                  0};
  Status status = method.set_input(0, tensor);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  status = method.execute();
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_EQ(method.output_spec(0).shape, expected->shape);
  const float* actual = static_cast<const float*>(method.output(0).data);
  std::vector<float> want(expected->data.size() / sizeof(float));
  std::memcpy(want.data(), expected->data.data(), expected->data.size());
  return relative_difference(std::vector<float>(actual, actual + want.size()), want);
}

std::vector<uint8_t> conv_relu_graph() {
  GraphBuilder graph;
  ValueId x = graph.add_value("x", DType::kFloat32, {1, 4, 6, 6});
  std::vector<float> weights(8 * 4 * 3 * 3);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = std::sin(static_cast<float>(i)) * 0.3f;
  ValueId w = graph.add_constant_f32("w", {8, 4, 3, 3}, weights);
  ValueId conv = graph.add_value("conv", DType::kFloat32, {1, 8, 6, 6});
  ValueId y = graph.add_value("y", DType::kFloat32, {1, 8, 6, 6});
  graph.add_node("Conv", "conv", {x, w}, {conv}, {Attribute::Ints("pads", {1, 1, 1, 1})});
  graph.add_node("Relu", "relu", {conv}, {y});
  graph.add_input(x);
  graph.add_output(y);
  return graph.finish();
}

void expect_parked_workers_wake_for_the_next_call(PluginEnvironment& env, const std::string& backend_name) {
  Result<RegisteredBackend> backend = env.registry().find_backend(backend_name);
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  Result<std::vector<uint8_t>> blob = backend->preprocess(conv_relu_graph());
  ASSERT_TRUE(blob.is_ok()) << blob.status().to_string();
  InitOptions options;
  options.blob = blob->data();
  options.blob_size = blob->size();
  options.num_threads = 2;
  Result<DelegateHandle> handle = backend->init(options);
  ASSERT_TRUE(handle.is_ok()) << handle.status().to_string();

  std::vector<float> in(1 * 4 * 6 * 6), out(1 * 8 * 6 * 6);
  for (size_t i = 0; i < in.size(); ++i) in[i] = std::cos(static_cast<float>(i));
  int64_t in_shape[] = {1, 4, 6, 6}, out_shape[] = {1, 8, 6, 6};
  DLTensor input{in.data(), {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, in_shape, nullptr, 0};
  DLTensor output{out.data(), {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, out_shape, nullptr, 0};
  const DLTensor* inputs[] = {&input};
  const DLTensor* outputs[] = {&output};
  std::vector<float> first;
  for (int call = 0; call < 6; ++call) {
    std::fill(out.begin(), out.end(), -1.0f);
    const plugrt_execute_flags flags = call % 2 == 0 ? PLUGRT_EXECUTE_PARK_WORKERS : 0;
    Status status = handle->execute(inputs, outputs, flags);
    ASSERT_TRUE(status.is_ok()) << "call " << call << ": " << status.to_string();
    if (call == 0) first = out;
    EXPECT_EQ(relative_difference(out, first), 0.0) << "call " << call;
  }
  EXPECT_THAT(first, ::testing::Each(::testing::Ge(0.0f)));  // the Relu ran
}

void expect_blob_of_another_version_falls_back(PluginEnvironment& env, const std::string& backend,
                                               const std::string& magic) {
  compiler::CompiledModel compiled = env.compile(conv_relu_graph(), {backend});
  Result<Method> reference = env.load(compiled.program);
  ASSERT_TRUE(reference.is_ok());
  const std::vector<float> expected = run_with_seed(*reference, 5).at(0);

  std::vector<uint8_t> patched = compiled.program;
  auto found = std::search(patched.begin(), patched.end(), magic.begin(), magic.end());
  ASSERT_NE(found, patched.end()) << "no blob header " << magic;
  found[8] = 99;  // version 99, little-endian
  Result<Method> method = env.load(patched);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  const DelegatePlacement& placement = method->report().delegates.at(0);
  EXPECT_EQ(placement.requested_backend, backend);
  EXPECT_EQ(placement.backend, "portable");
  EXPECT_TRUE(placement.fell_back);
  EXPECT_THAT(placement.reason, ::testing::HasSubstr("version 99"));
  EXPECT_LT(relative_difference(run_with_seed(*method, 5).at(0), expected), 1e-4);
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Status init_status(const RegisteredBackend& backend, const std::vector<uint8_t>& bytes) {
  std::vector<uint64_t> aligned(bytes.size() / 8 + 1);
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  InitOptions options;
  options.blob = aligned.data();
  options.blob_size = bytes.size();
  return backend.init(options).status();
}

}  // namespace plugrt::backend_test
