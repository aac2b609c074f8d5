// SPDX-License-Identifier: Apache-2.0
// The executor over real plugins: where each delegate runs, the portable fallback when
// a backend is missing, unavailable or refuses its blob, and parallel method instances.
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

TEST_F(ExecutorTest, AnInitFailureOtherThanIncompatibilityFailsTheLoad) {
  install("init_fails");  // backend "flaky": init reports DelegateUnavailable
  OffsetProgramOptions options;
  options.backend = "flaky";
  Result<Method> method = Method::load(program(options), "forward", registry_);
  ASSERT_FALSE(method.is_ok());
  EXPECT_EQ(method.code(), Error::kDelegateUnavailable);
  EXPECT_THAT(method.status().message(), HasSubstr("method 'forward': delegate 'flaky:0' (backend 'flaky')"));
  EXPECT_THAT(method.status().message(), HasSubstr("the test device stopped responding"));
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

}  // namespace
}  // namespace plugrt::testing
