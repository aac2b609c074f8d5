// SPDX-License-Identifier: Apache-2.0
// The model zoo in models/ (recurrent taggers, a GroupNorm CNN, an einsum attention
// block, a head with an If that folds, an RNN cell in a Loop with an If at run time;
// exported from PyTorch by models/export_models.py with
// PyTorch's outputs):
// compiled from ONNX for each backend set that is built, run, and checked against
// PyTorch. A backend takes what its partition accepts; the rest runs on portable.
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
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
Result<Method> compile_and_load(Registry& registry, const std::string& model, const std::vector<std::string>& backends,
                                const MethodOptions& method_options = {}) {
  const std::string stem = std::string(PLUGRT_MODELS_DIR) + "/" + model;
  PLUGRT_ASSIGN_OR_RETURN(tools::NpyArray input, tools::read_npy(stem + ".input.npy"));
  compiler::CompileOptions options;
  options.backends = backends;
  compiler::ImportOptions import_options;
  import_options.input_shapes["input"] = input.shape;
  PLUGRT_ASSIGN_OR_RETURN(compiler::CompiledModel compiled,
                          compiler::compile_onnx_file(stem + ".onnx", registry, options, import_options));
  PLUGRT_ASSIGN_OR_RETURN(Program program, Program::from_bytes(compiled.program, model + ".prt"));
  return Method::load(program, "forward", registry, method_options);
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

/// Each call checked against PyTorch, its output poisoned first, on a budget of two
/// threads: the first calls run on two, the next on one (the method's chooser measures
/// both) with the handles made for two. `options`: the backends' runtime options.
void check_every_thread_count(Registry& registry, const std::string& model, const std::string& backend,
                              Span<const plugrt_option> options) {
  MethodOptions method_options;
  method_options.num_threads = 2;
  method_options.runtime_options = options;
  Result<Method> method = compile_and_load(registry, model, {backend}, method_options);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  std::set<size_t> counts;
  for (int call = 0; call < 12; ++call) {
    float* output = static_cast<float*>(method->output(0).data);
    std::fill(output, output + method->output_spec(0).num_bytes() / sizeof(float), std::nanf(""));
    EXPECT_LT(backend_test::difference_from_pytorch(*method, model), 1e-4) << "call " << call;
    counts.insert(method->last_call_threads());
  }
  EXPECT_EQ(counts, (std::set<size_t>{1, 2}));
}

class ModelZooThreadsTest : public ::testing::TestWithParam<ZooParam> {};

TEST_P(ModelZooThreadsTest, MatchesPyTorchOnTwoThreadsAndOnOne) {
  const auto& [model, backend] = GetParam();
  const std::string plugin = plugin_file_of(backend);
  if (plugin.empty()) GTEST_SKIP() << "the " << backend << " backend is not built";
  PluginEnvironment env(plugin);
  check_every_thread_count(env.registry(), model, backend, {});
  if (backend == "onednn") {
    // Its plans for two threads capped to one, rather than a plan made for one.
    static constexpr char kKey[] = "one_thread_plan_max_bytes";  // oneDNN's
    const plugrt_option capped{{kKey, sizeof(kKey) - 1}, "0", 1};
    check_every_thread_count(env.registry(), model, backend, Span<const plugrt_option>(&capped, 1));
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ModelZooTest,
                         ::testing::Combine(::testing::Values("lstm_tagger", "gru_tagger", "groupnorm_cnn",
                                                              "einsum_attention", "control_flow_head", "loop_rnn"),
                                            ::testing::Values("portable", "xnnpack", "onednn")),
                         zoo_test_name);
// The portable backend runs every call on one thread.
INSTANTIATE_TEST_SUITE_P(Zoo, ModelZooThreadsTest,
                         ::testing::Combine(::testing::Values("lstm_tagger", "gru_tagger", "groupnorm_cnn",
                                                              "einsum_attention", "control_flow_head", "loop_rnn"),
                                            ::testing::Values("xnnpack", "onednn")),
                         zoo_test_name);

}  // namespace
}  // namespace plugrt::testing
