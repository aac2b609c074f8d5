#include "backend_test_support.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"

namespace plugrt::backend_test {

namespace {

plugins::SearchPathOptions nowhere() {
  plugins::SearchPathOptions options;
  options.use_environment = false;
  options.use_install_directory = false;
  options.use_executable_directory = false;
  return options;
}

}  // namespace

PluginEnvironment::PluginEnvironment(const std::string& plugin_file) {
  EXPECT_TRUE(register_builtin_backends(registry_).is_ok());
  loader_ = std::make_unique<plugins::PluginLoader>(registry_, nowhere());
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
    std::vector<int64_t> shape = spec.shape;
    DLTensor tensor{values.data(), {kDLCPU, 0}, static_cast<int32_t>(shape.size()), {kDLFloat, 32, 1},
                    shape.data(), nullptr, 0};
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

}  // namespace plugrt::backend_test
