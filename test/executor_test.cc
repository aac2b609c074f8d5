// SPDX-License-Identifier: Apache-2.0
// The executor over real plugins: where each delegate runs, the portable fallback when
// a backend is missing, unavailable or refuses its blob, and parallel method instances.
#include <algorithm>
#include <atomic>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/method.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "program_fixtures.h"
#include "test_plugin_files.h"

namespace plugrt::testing {
namespace {

using plugins::PluginLoader;
using plugins::SearchPathOptions;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// A registry with the built-in backends and a loader over one directory of test plugins.
class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(register_builtin_backends(registry_).is_ok());
    loader_ = std::make_unique<PluginLoader>(registry_, only({plugins_.path()}));
  }
  /// Makes a test plugin discoverable, then rescans the directory.
  void install(const std::string& plugin) {
    plugins_.add_plugin(plugin);
    loader_->discover();
  }
  Program program(const OffsetProgramOptions& options = {}) {
    Result<Program> loaded = Program::from_bytes(offset_program(options), "offset.prt");
    EXPECT_TRUE(loaded.is_ok()) << loaded.status().to_string();
    return std::move(loaded).value();
  }

  TempDirectory plugins_;
  Registry registry_;
  std::unique_ptr<PluginLoader> loader_;
};

TEST_F(ExecutorTest, RunsADelegateOnItsPluginLoadedOnFirstUse) {
  install("good");
  EXPECT_FALSE(is_mapped(plugins_.path() + "/libplugrt_good.so"));
  Result<Method> method = Method::load(program(), "forward", registry_);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_TRUE(is_mapped(plugins_.path() + "/libplugrt_good.so"));

  const DelegatePlacement& placement = method->report().delegates.at(0);
  EXPECT_EQ(placement.backend, "offset");
  EXPECT_FALSE(placement.fell_back);
  EXPECT_THAT(placement.origin, HasSubstr("libplugrt_good.so"));

  ASSERT_TRUE(set_floats(*method, 0, {0, 1, 2, 3, 4, 5}).is_ok());
  ASSERT_TRUE(method->execute().is_ok());
  EXPECT_THAT(output_floats(*method, 0), ElementsAre(1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f));
}

TEST_F(ExecutorTest, FallsBackWhenTheBackendIsNotInstalled) {
  Result<Method> method = Method::load(program(), "forward", registry_);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  const DelegatePlacement& placement = method->report().delegates.at(0);
  EXPECT_EQ(placement.requested_backend, "offset");
  EXPECT_EQ(placement.backend, "portable");
  EXPECT_EQ(placement.origin, "built-in");
  EXPECT_TRUE(placement.fell_back);
  EXPECT_THAT(placement.reason, HasSubstr("backend 'offset' is not installed"));
  EXPECT_THAT(method->report().to_string(), HasSubstr("offset:0 -> portable (built-in), fallback: "));

  ASSERT_TRUE(set_floats(*method, 0, {0, 1, 2, 3, 4, 5}).is_ok());
  ASSERT_TRUE(method->execute().is_ok());
  EXPECT_THAT(output_floats(*method, 0), ElementsAre(1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f));
}

TEST_F(ExecutorTest, FallsBackWhenTheBackendIsUnavailable) {
  install("unavailable");  // backend "offline"
  OffsetProgramOptions options;
  options.backend = "offline";
  Result<Method> method = Method::load(program(options), "forward", registry_);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  const DelegatePlacement& placement = method->report().delegates.at(0);
  EXPECT_TRUE(placement.fell_back);
  EXPECT_THAT(placement.reason, HasSubstr("unavailable: no test accelerator is attached"));
  ASSERT_TRUE(set_floats(*method, 0, {0, 0, 0, 0, 0, 0}).is_ok());
  ASSERT_TRUE(method->execute().is_ok());
  EXPECT_THAT(output_floats(*method, 0), ElementsAre(1.5f, 1.5f, 1.5f, 1.5f, 1.5f, 1.5f));
}

TEST_F(ExecutorTest, FallsBackWhenInitFindsTheBlobIncompatible) {
  install("good");
  OffsetProgramOptions options;
  options.blob = {1, 2, 3, 4, 5, 6, 7, 8};  // the plugin reads exactly 4 bytes
  Result<Method> method = Method::load(program(options), "forward", registry_);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  const DelegatePlacement& placement = method->report().delegates.at(0);
  EXPECT_TRUE(placement.fell_back);
  EXPECT_THAT(placement.reason, HasSubstr("blob must be exactly one float32 offset"));
  ASSERT_TRUE(set_floats(*method, 0, {1, 1, 1, 1, 1, 1}).is_ok());
  ASSERT_TRUE(method->execute().is_ok());
  EXPECT_THAT(output_floats(*method, 0), ElementsAre(2.5f, 2.5f, 2.5f, 2.5f, 2.5f, 2.5f));
}

TEST_F(ExecutorTest, FallsBackWhenTheBackendIsNotAllowed) {
  install("good");
  MethodOptions options;
  options.allowed_backends = {"xnnpack"};
  Result<Method> method = Method::load(program(), "forward", registry_, options);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_TRUE(method->report().delegates.at(0).fell_back);
  EXPECT_THAT(method->report().delegates.at(0).reason, HasSubstr("not among the allowed backends"));
}

TEST_F(ExecutorTest, AnInitFailureOtherThanIncompatibilityFallsBackSayingWhy) {
  install("init_fails");  // backend "flaky": init reports DelegateUnavailable
  OffsetProgramOptions options;
  options.backend = "flaky";
  Result<Method> method = Method::load(program(options), "forward", registry_);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_TRUE(method->report().delegates.at(0).fell_back);
  EXPECT_THAT(method->report().delegates.at(0).reason, HasSubstr("the test device stopped responding"));

  options.with_fallback = false;  // without one, the load fails with the backend's message
  Result<Method> failed = Method::load(program(options), "forward", registry_);
  ASSERT_FALSE(failed.is_ok());
  EXPECT_EQ(failed.code(), Error::kDelegateUnavailable);
  EXPECT_THAT(failed.status().message(), HasSubstr("method 'forward': delegate 'flaky:0' (backend 'flaky')"));
  EXPECT_THAT(failed.status().message(), HasSubstr("the test device stopped responding"));
}

TEST_F(ExecutorTest, WithoutAFallbackAMissingBackendIsAnError) {
  OffsetProgramOptions options;
  options.with_fallback = false;
  Result<Method> method = Method::load(program(options), "forward", registry_);
  ASSERT_FALSE(method.is_ok());
  EXPECT_EQ(method.code(), Error::kDelegateUnavailable);
  EXPECT_THAT(method.status().message(),
              HasSubstr("backend 'offset' is not installed, and the program has no portable fallback for it"));
}

TEST_F(ExecutorTest, UnknownMethodNamesTheOnesThatExist) {
  Result<Method> method = Method::load(program(), "backward", registry_);
  ASSERT_FALSE(method.is_ok());
  EXPECT_EQ(method.code(), Error::kNotFound);
  EXPECT_THAT(method.status().message(), HasSubstr("no method 'backward' (the program has: forward)"));
}

TEST_F(ExecutorTest, SetInputChecksTheShape) {
  Result<Method> method = Method::load(program(), "forward", registry_);
  ASSERT_TRUE(method.is_ok());
  std::vector<float> values(4);
  std::vector<int64_t> shape = {2, 2};
  DLTensor wrong{values.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
  Status status = method->set_input(0, wrong);
  EXPECT_EQ(status.code(), Error::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("input 0 'x': expected shape [2, 3], got [2, 2]"));
}

TEST_F(ExecutorTest, TeardownDestroysEveryHandleAndReleasesThePlugin) {
  install("good");
  OffsetProgramOptions options;
  options.num_delegates = 3;
  {
    Result<Method> method = Method::load(program(options), "forward", registry_);
    ASSERT_TRUE(method.is_ok()) << method.status().to_string();
    ASSERT_TRUE(set_floats(*method, 0, {0, 0, 0, 0, 0, 0}).is_ok());
    ASSERT_TRUE(method->execute().is_ok());
    EXPECT_THAT(output_floats(*method, 0), ElementsAre(4.5f, 4.5f, 4.5f, 4.5f, 4.5f, 4.5f));
  }
  // With the method gone nothing pins the plugin, so it can be unloaded.
  EXPECT_TRUE(loader_->unload(plugins_.path() + "/libplugrt_good.so").is_ok());
  EXPECT_FALSE(is_mapped(plugins_.path() + "/libplugrt_good.so"));
}

TEST_F(ExecutorTest, FourThreadsRunSeparateInstancesOfOneProgram) {
  install("good");
  OffsetProgramOptions options;
  options.num_delegates = 4;
  Program shared = program(options);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Result<Method> method = Method::load(shared, "forward", registry_);
      if (!method.is_ok()) {
        ++failures;
        return;
      }
      for (int i = 0; i < 500; ++i) {
        const float base = static_cast<float>(t * 1000 + i);
        if (!set_floats(*method, 0, {base, base, base, base, base, base}).is_ok() || !method->execute().is_ok() ||
            output_floats(*method, 0) != std::vector<float>(6, base + 6.0f)) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

/// Records what the executor and backends report to the profiler.
class RecordingProfiler : public Profiler {
 public:
  uint64_t begin(std::string_view source, std::string_view event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    events.push_back(std::string(source) + "/" + std::string(event));
    return events.size();
  }
  void end(uint64_t token) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ended.push_back(token);
  }
  std::vector<std::string> events;
  std::vector<uint64_t> ended;

 private:
  std::mutex mutex_;
};

TEST_F(ExecutorTest, EachDelegateCallIsAProfilingEvent) {
  install("good");
  OffsetProgramOptions options;
  options.num_delegates = 2;
  RecordingProfiler profiler;
  registry_.environment().set_profiler(&profiler);
  Result<Method> method = Method::load(program(options), "forward", registry_);
  ASSERT_TRUE(method.is_ok());
  ASSERT_TRUE(method->execute().is_ok());
  registry_.environment().set_profiler(nullptr);
  EXPECT_THAT(profiler.events, ElementsAre("offset/offset:0", "offset/offset:1"));
  EXPECT_THAT(profiler.ended, ElementsAre(1u, 2u));
}

TEST_F(ExecutorTest, AProgramOutlivesItsProgramObject) {
  Result<Method> method = [&] { return Method::load(program(), "forward", registry_); }();
  ASSERT_TRUE(method.is_ok());
  ASSERT_TRUE(set_floats(*method, 0, {1, 2, 3, 4, 5, 6}).is_ok());
  ASSERT_TRUE(method->execute().is_ok());
  EXPECT_THAT(output_floats(*method, 0), ElementsAre(2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f));
}

// ---- Dimensions that vary (format 1.2) ------------------------------------------------

/// Runs `method` on x of shape [n, 4] (element i is i - 2n); the output, or the error.
Result<std::vector<float>> run_rows(Method& method, int64_t n, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {n, 4};
  std::vector<float> x(static_cast<size_t>(std::max<int64_t>(0, n) * 4));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - static_cast<float>(2 * n);
  DLTensor view{x.data(), {kDLCPU, 0}, static_cast<int32_t>(shape.size()), {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
  PLUGRT_RETURN_IF_ERROR(method.set_input(0, view));
  PLUGRT_RETURN_IF_ERROR(method.execute());
  const DLTensor& y = method.output(0);
  if (y.ndim != 1 || y.shape[0] != 4 * n) return Status(Error::kInternal, "the output's shape is not [4n]");
  const auto* data = static_cast<const float*>(y.data);
  return std::vector<float>(data, data + 4 * n);
}

TEST(VaryingDimensions, AMethodRunsAtEachCallsShapeWithinItsBounds) {
  Result<Program> program = Program::from_bytes(relu_flatten_program(32));
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  EXPECT_EQ(program->format_minor(), 2u);
  Registry registry;
  ASSERT_TRUE(register_builtin_backends(registry).is_ok());
  Result<Method> method = Method::load(*program, "forward", registry);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_TRUE(method->input_spec(0).varies());
  EXPECT_EQ(method->input_spec(0).shape, (std::vector<int64_t>{32, 4}));  // the bounds
  for (int64_t n : {int64_t{3}, int64_t{32}, int64_t{1}, int64_t{3}}) {
    Result<std::vector<float>> y = run_rows(*method, n);
    ASSERT_TRUE(y.is_ok()) << n << ": " << y.status().to_string();
    for (size_t i = 0; i < y->size(); ++i) {
      EXPECT_EQ((*y)[i], std::max(0.0f, static_cast<float>(i) - static_cast<float>(2 * n))) << n;
    }
  }
}

TEST(VaryingDimensions, ShapesOutsideTheBoundsAreRefusedNamingInputDimensionAndBound) {
  Result<Program> program = Program::from_bytes(relu_flatten_program(32));
  ASSERT_TRUE(program.is_ok());
  Registry registry;
  ASSERT_TRUE(register_builtin_backends(registry).is_ok());
  Result<Method> method = Method::load(*program, "forward", registry);
  ASSERT_TRUE(method.is_ok());
  Result<std::vector<float>> above = run_rows(*method, 33);
  EXPECT_EQ(above.code(), Error::kInvalidArgument);
  EXPECT_THAT(above.status().message(),
              HasSubstr("input 0 'x': dimension 0 is 33; its bound is 32 (shape up to [32, 4])"));
  Result<std::vector<float>> below = run_rows(*method, 0);
  EXPECT_EQ(below.code(), Error::kInvalidArgument);
  EXPECT_THAT(below.status().message(), HasSubstr("input 0 ('x') dimension 0 is 0, below 1, the smallest 'n' may be"));
  Result<std::vector<float>> fixed = run_rows(*method, 2, {2, 5});
  EXPECT_THAT(fixed.status().message(), HasSubstr("dimension 1 is 5; it is always 4"));
  Result<std::vector<float>> rank = run_rows(*method, 2, {8});
  EXPECT_THAT(rank.status().message(), HasSubstr("expected rank 2 (shape up to [32, 4]), got shape [8]"));
  // Still usable.
  EXPECT_TRUE(run_rows(*method, 5).is_ok());
}

}  // namespace
}  // namespace plugrt::testing
