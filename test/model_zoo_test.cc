// SPDX-License-Identifier: Apache-2.0
// The model zoo in models/ (recurrent taggers, a GroupNorm CNN, an einsum attention
// block, a head with an If that folds, an RNN cell in a Loop with an If at run time;
// exported from PyTorch by models/export_models.py with
// PyTorch's outputs):
// compiled from ONNX for each backend set that is built, run, and checked against
// PyTorch. A backend takes what its partition accepts; the rest runs on portable.
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backend_test_support.h"
#include "npy.h"
#include "plugrt/builtin_backends.h"

namespace plugrt::testing {
namespace {

using backend_test::PluginEnvironment;

/// The plugin file of a backend built with the tests, or "" when it is not built.
std::string plugin_file_of(const std::string& backend) {
  if (backend == "xnnpack") return PLUGRT_XNNPACK_PLUGIN_FILE;
  if (backend == "onednn") return PLUGRT_ONEDNN_PLUGIN_FILE;
  return {};
}

using ZooParam = std::tuple<std::string, std::string>;  // model, backend

class ModelZooTest : public ::testing::TestWithParam<ZooParam> {};

std::string zoo_test_name(const ::testing::TestParamInfo<ZooParam>& param) {
  return std::get<0>(param.param) + "_" + std::get<1>(param.param);
}

/// Compiles models/<model>.onnx for `backends` with `registry`, its input's shape taken
/// from models/<model>.input.npy (control_flow_head has a dynamic dimension), and loads it.
Result<Method> compile_and_load(Registry& registry, const std::string& model,
                                const std::vector<std::string>& backends) {
  const std::string stem = std::string(PLUGRT_MODELS_DIR) + "/" + model;
  PLUGRT_ASSIGN_OR_RETURN(tools::NpyArray input, tools::read_npy(stem + ".input.npy"));
  compiler::CompileOptions options;
  options.backends = backends;
  compiler::ImportOptions import_options;
  import_options.input_shapes["input"] = input.shape;
  PLUGRT_ASSIGN_OR_RETURN(compiler::CompiledModel compiled,
                          compiler::compile_onnx_file(stem + ".onnx", registry, options, import_options));
  PLUGRT_ASSIGN_OR_RETURN(Program program, Program::from_bytes(compiled.program, model + ".prt"));
  return Method::load(program, "forward", registry);
}

TEST_P(ModelZooTest, MatchesPyTorch) {
  const auto& [model, backend] = GetParam();
  Registry builtin_only;
  std::unique_ptr<PluginEnvironment> env;
  Registry* registry = &builtin_only;
  if (backend == "portable") {
    ASSERT_TRUE(register_builtin_backends(builtin_only).is_ok());
  } else {
    const std::string plugin = plugin_file_of(backend);
    if (plugin.empty()) GTEST_SKIP() << "the " << backend << " backend is not built";
    env = std::make_unique<PluginEnvironment>(plugin);
    registry = &env->registry();
  }
  Result<Method> method = compile_and_load(*registry, model, {backend});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_LT(backend_test::difference_from_pytorch(*method, model), 1e-4) << "largest relative difference";
}

INSTANTIATE_TEST_SUITE_P(Zoo, ModelZooTest,
                         ::testing::Combine(::testing::Values("lstm_tagger", "gru_tagger", "groupnorm_cnn",
                                                              "einsum_attention", "control_flow_head", "loop_rnn"),
                                            ::testing::Values("portable", "xnnpack", "onednn")),
                         zoo_test_name);

}  // namespace
}  // namespace plugrt::testing
