// SPDX-License-Identifier: Apache-2.0
// plugrt::Runtime: the environment's settings, opening .prt and .onnx files, sessions of
// one runtime running in threads at once.
#include "plugrt/runtime/runtime.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler.h"
#include "npy.h"
#include "program_session.h"

namespace plugrt {
namespace {

using ::testing::HasSubstr;

/// Sets a variable for one scope.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedVariable() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(RuntimeOptions, TheEnvironmentSetsTheDefaultsAndNamesWhatItRefuses) {
  {
    ScopedVariable placement("PLUGRT_PLACEMENT", "as-compiled"), threads("PLUGRT_NUM_THREADS", "3"),
        verify("PLUGRT_VERIFY", "yes"), isolate("PLUGRT_ISOLATE", "xnnpack,onednn");
    Result<RuntimeOptions> options = RuntimeOptions::from_environment();
    ASSERT_TRUE(options.is_ok()) << options.status().message();
    EXPECT_EQ(options->load.placement, "as-compiled");
    EXPECT_EQ(options->load.threads, 3u);
    EXPECT_TRUE(options->load.verify);
    EXPECT_EQ(options->plugins.isolate, (std::vector<std::string>{"xnnpack", "onednn"}));
  }
  EXPECT_EQ(RuntimeOptions::from_environment()->load.placement, "auto");  // the command's default
  {
    ScopedVariable placement("PLUGRT_PLACEMENT", "fastest");
    EXPECT_THAT(RuntimeOptions::from_environment().status().message(),
                HasSubstr("PLUGRT_PLACEMENT='fastest': expected auto or as-compiled"));
  }
  {
    ScopedVariable threads("PLUGRT_NUM_THREADS", "two");
    EXPECT_THAT(RuntimeOptions::from_environment().status().message(), HasSubstr("PLUGRT_NUM_THREADS='two'"));
  }
  {
    ScopedVariable verify("PLUGRT_VERIFY", "maybe");
    EXPECT_THAT(Runtime::from_environment().status().message(), HasSubstr("PLUGRT_VERIFY='maybe'"));
  }
}

TEST(Runtime, AnUnreadableAllowListIsRefusedUpFront) {
  RuntimeOptions options;
  options.plugins.allow_list = "no-such-allow-list.txt";
  Result<std::unique_ptr<Runtime>> runtime = Runtime::create(options);
  ASSERT_FALSE(runtime.is_ok());
  EXPECT_THAT(runtime.status().message(), HasSubstr("no-such-allow-list.txt"));
}

// A runtime of one named plugin file (the contract kit's): that plugin's backends and
// nothing else, neither the built-in portable backend nor the plugins of any directory.
TEST(Runtime, OfOnePluginFileHoldsThatPluginAlone) {
  const std::string file = std::string(PLUGRT_IN_TREE_PLUGIN_DIR) + "/libplugrt_xnnpack.so";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "this build has no XNNPACK plugin (PLUGRT_BUILD_XNNPACK off)";
  RuntimeOptions options;
  options.builtin_backends = false;
  options.plugins.search = false;
  options.plugins.plugin_dirs = {PLUGRT_IN_TREE_PLUGIN_DIR};  // not searched
  options.plugins.plugin_files = {file};
  Result<std::unique_ptr<Runtime>> runtime = Runtime::create(options);
  ASSERT_TRUE(runtime.is_ok()) << runtime.status().to_string();
  (*runtime)->load_all();
  EXPECT_EQ((*runtime)->registry().backend_names(), std::vector<std::string>{"xnnpack"});

  options.plugins.plugin_files = {"no-such-plugin.so"};
  Result<std::unique_ptr<Runtime>> missing = Runtime::create(options);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("no-such-plugin.so"));
}

/// The in-tree plugins, the blob cache left alone.
RuntimeOptions in_tree_options() {
  RuntimeOptions options;
  options.plugins.plugin_dirs = {PLUGRT_IN_TREE_PLUGIN_DIR};
  options.load.no_cache = true;
  return options;
}

/// Runs `session` on the model's bundled input and checks its bundled output.
void expect_bundled_output(Session& session, const std::string& model) {
  Result<tools::NpyArray> input = tools::read_npy(std::string(PLUGRT_MODELS_DIR "/") + model + ".input.npy");
  Result<tools::NpyArray> expected = tools::read_npy(std::string(PLUGRT_MODELS_DIR "/") + model + ".output.npy");
  ASSERT_TRUE(input.is_ok() && expected.is_ok());
  DLTensor view = tools::dltensor_view(*input);
  const DLTensor* inputs[] = {&view};
  ASSERT_TRUE(session.run(inputs).is_ok());
  const tools::NpyArray actual = tools::output_array(session.method(), 0);
  EXPECT_LT(tools::max_abs_difference(actual, *expected), 1e-3) << model;
}

TEST(Runtime, OpensAnOnnxModelAndTheProgramCompiledFromIt) {
  Result<std::unique_ptr<Runtime>> runtime = Runtime::create(in_tree_options());
  ASSERT_TRUE(runtime.is_ok()) << runtime.status().message();
  Result<Session> from_onnx = (*runtime)->open(PLUGRT_MODELS_DIR "/tiny_cnn.onnx");
  ASSERT_TRUE(from_onnx.is_ok()) << from_onnx.status().message();
  EXPECT_EQ(from_onnx->num_inputs(), 1u);
  expect_bundled_output(*from_onnx, "tiny_cnn");

  // The same model as a .prt file, as `plugrt compile` writes it.
  const std::string path = ::testing::TempDir() + "runtime_test_tiny_cnn.prt";
  {
    Result<compiler::CompiledModel> compiled =
        compiler::compile_onnx_file(PLUGRT_MODELS_DIR "/tiny_cnn.onnx", (*runtime)->registry(), {});
    ASSERT_TRUE(compiled.is_ok()) << compiled.status().message();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(compiled->program.data()),
              static_cast<std::streamsize>(compiled->program.size()));
  }
  Result<Session> from_program = (*runtime)->open(path);
  ASSERT_TRUE(from_program.is_ok()) << from_program.status().message();
  expect_bundled_output(*from_program, "tiny_cnn");
  std::filesystem::remove(path);
}

TEST(Runtime, ErrorsNameTheFileAndTheInput) {
  Result<std::unique_ptr<Runtime>> runtime = Runtime::create(in_tree_options());
  ASSERT_TRUE(runtime.is_ok());
  EXPECT_THAT((*runtime)->open("missing.prt").status().message(), HasSubstr("missing.prt"));
  EXPECT_THAT((*runtime)->open("missing.onnx").status().message(), HasSubstr("missing.onnx"));
  Result<Session> session = (*runtime)->open(PLUGRT_MODELS_DIR "/mlp.onnx");
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  EXPECT_THAT(session->run({}).message(), HasSubstr("takes 1 inputs; 0 were given"));
  const DLTensor* null_input[] = {nullptr};
  EXPECT_THAT(session->run(null_input).message(), HasSubstr("input 0 ('" + session->input_spec(0).name));
}

TEST(Runtime, SessionsOfOneRuntimeRunInThreadsAtOnce) {
  Result<std::unique_ptr<Runtime>> runtime = Runtime::create(in_tree_options());
  ASSERT_TRUE(runtime.is_ok());
  std::vector<std::thread> threads;
  std::vector<double> differences(4, -1);
  for (size_t t = 0; t < differences.size(); ++t) {
    threads.emplace_back([&, t] {
      Result<Session> session = (*runtime)->open(PLUGRT_MODELS_DIR "/mlp.onnx");
      if (!session.is_ok()) return;
      Result<tools::NpyArray> input = tools::read_npy(PLUGRT_MODELS_DIR "/mlp.input.npy");
      Result<tools::NpyArray> expected = tools::read_npy(PLUGRT_MODELS_DIR "/mlp.output.npy");
      DLTensor view = tools::dltensor_view(*input);
      const DLTensor* inputs[] = {&view};
      double worst = 0;
      for (int i = 0; i < 20; ++i) {
        if (!session->run(inputs).is_ok()) return;
        worst = std::max(worst, tools::max_abs_difference(tools::output_array(session->method(), 0), *expected));
      }
      differences[t] = worst;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (double difference : differences) {
    EXPECT_GE(difference, 0);
    EXPECT_LT(difference, 1e-4);
  }
}

TEST(Runtime, ASessionRunFromTwoThreadsAtOnceIsRefusedNotMixed) {
  Result<std::unique_ptr<Runtime>> runtime = Runtime::create(in_tree_options());
  ASSERT_TRUE(runtime.is_ok());
  Result<Session> session = (*runtime)->open(PLUGRT_MODELS_DIR "/mlp.onnx");
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  Result<tools::NpyArray> input = tools::read_npy(PLUGRT_MODELS_DIR "/mlp.input.npy");
  Result<tools::NpyArray> expected = tools::read_npy(PLUGRT_MODELS_DIR "/mlp.output.npy");
  ASSERT_TRUE(input.is_ok() && expected.is_ok());
  std::atomic<int> refused{0}, other{0};
  auto hammer = [&] {
    DLTensor view = tools::dltensor_view(*input);
    const DLTensor* inputs[] = {&view};
    for (int i = 0; i < 300; ++i) {
      const Status status = session->run(inputs);
      if (status.code() == Error::kInvalidState) {
        ++refused;
      } else if (!status.is_ok()) {
        ++other;
      }
    }
  };
  std::thread first(hammer), second(hammer);
  first.join();
  second.join();
  EXPECT_EQ(other.load(), 0);
  // Whatever ran last left a whole, right result.
  EXPECT_LT(tools::max_abs_difference(tools::output_array(session->method(), 0), *expected), 1e-4);
  std::printf("%d of 600 calls were refused as concurrent\n", refused.load());
}

}  // namespace
}  // namespace plugrt
