// SPDX-License-Identifier: Apache-2.0
// The models in models/ (exported from PyTorch by models/export_models.py, with the
// outputs PyTorch computed): compiled from ONNX, run, and checked against PyTorch.
#include <cmath>
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler.h"
#include "npy.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/method.h"

namespace plugrt::testing {
namespace {

using ::testing::HasSubstr;

std::string model_path(const std::string& file) { return std::string(PLUGRT_MODELS_DIR) + "/" + file; }

class ModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelTest, MatchesPyTorchOnThePortableBackend) {
  const std::string name = GetParam();
  Registry registry;
  ASSERT_TRUE(register_builtin_backends(registry).is_ok());
  compiler::CompileOptions options;
  options.backends = {"portable"};
  Result<compiler::CompiledModel> compiled = compiler::compile_onnx_file(model_path(name + ".onnx"), registry, options);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();

  Result<Program> program = Program::from_bytes(compiled->program, name + ".prt");
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  Result<Method> method = Method::load(*program, "forward", registry);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();

  Result<tools::NpyArray> input = tools::read_npy(model_path(name + ".input.npy"));
  Result<tools::NpyArray> expected = tools::read_npy(model_path(name + ".output.npy"));
  ASSERT_TRUE(input.is_ok() && expected.is_ok());
  DLTensor tensor{input->data.data(),
                  {kDLCPU, 0},
                  static_cast<int32_t>(input->shape.size()),
                  to_dlpack(input->dtype),
                  input->shape.data(),
                  nullptr,
                  0};
  ASSERT_TRUE(method->set_input(0, tensor).is_ok());
  Status status = method->execute();
  ASSERT_TRUE(status.is_ok()) << status.to_string();

  ASSERT_EQ(method->output_spec(0).shape, expected->shape);
  const float* actual = static_cast<const float*>(method->output(0).data);
  const size_t count = expected->data.size() / sizeof(float);
  double worst = 0;
  for (size_t i = 0; i < count; ++i) {
    float want;
    std::memcpy(&want, expected->data.data() + i * sizeof(float), sizeof(float));
    worst = std::max(worst, static_cast<double>(std::fabs(actual[i] - want)));
  }
  EXPECT_LT(worst, 1e-4) << name << ": largest difference from PyTorch";
}

INSTANTIATE_TEST_SUITE_P(Bundled, ModelTest, ::testing::Values("tiny_cnn", "mlp", "tiny_encoder"));

TEST(ModelImport, AMissingModelNamesTheFile) {
  Registry registry;
  Result<compiler::CompiledModel> compiled =
      compiler::compile_onnx_file(model_path("no_such_model.onnx"), registry, compiler::CompileOptions{});
  ASSERT_FALSE(compiled.is_ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("no_such_model.onnx"));
}

}  // namespace
}  // namespace plugrt::testing
