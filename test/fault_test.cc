// SPDX-License-Identifier: Apache-2.0
// Faults: backends whose init or execute fails (the "faulty" test plugin, driven by its
// options), plugin files removed or replaced while loaded, and error reports that must
// not outlive the call they were made in.
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

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
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

CompileSpec spec(const std::string& key, const std::string& value) {
  return CompileSpec{key, std::vector<uint8_t>(value.begin(), value.end())};
}

/// A registry with the built-in backends and a loader over a directory holding the
/// faulty and good test plugins.
class Faults : public ::testing::Test {
 protected:
  void SetUp() override {
    faulty_path_ = plugins_.add_plugin("faulty");
    good_path_ = plugins_.add_plugin("good");
    ASSERT_TRUE(register_builtin_backends(registry_).is_ok());
    loader_ = std::make_unique<PluginLoader>(registry_, only({plugins_.path()}));
    loader_->discover();
  }
  /// "forward" of a program whose delegates run on `backend` and add 1.5 each.
  Result<Method> load(const std::string& backend, std::vector<CompileSpec> specs = {}, int num_delegates = 1) {
    OffsetProgramOptions options;
    options.backend = backend;
    options.compile_specs = std::move(specs);
    options.num_delegates = num_delegates;
    Result<Program> program = Program::from_bytes(offset_program(options), backend + ".prt");
    if (!program.is_ok()) return program.status();
    return Method::load(*program, "forward", registry_);
  }
  /// Runs `method` on x = {base, base + 1, ...}; the Status of execute().
  static Status run(Method& method, float base) {
    std::vector<float> x;
    for (int i = 0; i < 6; ++i) x.push_back(base + static_cast<float>(i));
    PLUGRT_RETURN_IF_ERROR(set_floats(method, 0, x));
    return method.execute();
  }
  static std::vector<float> plus(float base, float offset) {
    std::vector<float> y;
    for (int i = 0; i < 6; ++i) y.push_back(base + static_cast<float>(i) + offset);
    return y;
  }

  TempDirectory plugins_;
  std::string faulty_path_, good_path_;
  Registry registry_;
  std::unique_ptr<PluginLoader> loader_;
};

TEST_F(Faults, AnInitFailureFallsBackWithTheBackendsMessage) {
  Result<Method> method = load("faulty", {spec("init_error", "the device fell off the bus")});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  const DelegatePlacement& placement = method->report().delegates.at(0);
  EXPECT_TRUE(placement.fell_back);
  EXPECT_EQ(placement.backend, "portable");
  EXPECT_THAT(placement.reason, HasSubstr("init failed: the device fell off the bus"));
  ASSERT_TRUE(run(*method, 2).is_ok());
  EXPECT_EQ(output_floats(*method, 0), plus(2, 1.5f));

  // The process is fine: the same plugin, and others, load and run.
  Result<Method> healthy = load("faulty");
  ASSERT_TRUE(healthy.is_ok()) << healthy.status().to_string();
  ASSERT_TRUE(run(*healthy, 0).is_ok());
  EXPECT_EQ(output_floats(*healthy, 0), plus(0, 1.5f));
  Result<Method> other = load("offset");
  ASSERT_TRUE(other.is_ok()) << other.status().to_string();
  ASSERT_TRUE(run(*other, 10).is_ok());
  EXPECT_EQ(output_floats(*other, 0), plus(10, 1.5f));
}

TEST_F(Faults, AnInitFailureWithoutAFallbackFailsTheLoadWithTheBackendsMessage) {
  OffsetProgramOptions options;
  options.backend = "faulty";
  options.with_fallback = false;
  options.compile_specs = {spec("init_error", "the device fell off the bus")};
  Result<Program> program = Program::from_bytes(offset_program(options), "faulty.prt");
  ASSERT_TRUE(program.is_ok());
  Result<Method> method = Method::load(*program, "forward", registry_);
  ASSERT_FALSE(method.is_ok());
  EXPECT_EQ(method.code(), Error::kDelegateUnavailable);
  EXPECT_THAT(method.status().message(), AllOf(HasSubstr("method 'forward': delegate 'faulty:0' (backend 'faulty')"),
                                               HasSubstr("init failed: the device fell off the bus")));
}

TEST_F(Faults, AnInitThatFindsTheBlobIncompatibleFallsBackWithItsMessage) {
  Result<Method> method = load("faulty", {spec("init_incompatible", "blob format 7 is too new")});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  const DelegatePlacement& placement = method->report().delegates.at(0);
  EXPECT_TRUE(placement.fell_back);
  EXPECT_EQ(placement.backend, "portable");
  EXPECT_THAT(placement.reason, HasSubstr("init failed: blob format 7 is too new"));
  ASSERT_TRUE(run(*method, 1).is_ok());
  EXPECT_EQ(output_floats(*method, 0), plus(1, 1.5f));
}

TEST_F(Faults, InitFailuresAreKeptForTheLoadersReport) {
  EXPECT_TRUE(load("faulty", {spec("init_error", "no device")}).is_ok());  // each fell back
  EXPECT_TRUE(load("faulty", {spec("init_error", "still no device")}).is_ok());
  EXPECT_TRUE(load("faulty", {spec("init_incompatible", "blob format 9")}).is_ok());

  bool reported = false;
  for (const plugins::PluginReport& report : loader_->report()) {
    if (report.path != faulty_path_) continue;
    reported = true;
    EXPECT_EQ(report.state, plugins::PluginReport::State::kLoaded);
    ASSERT_EQ(report.init_failures.size(), 1u);
    EXPECT_EQ(report.init_failures[0].first, "faulty");
    EXPECT_EQ(report.init_failures[0].second.count, 3u);
    EXPECT_EQ(report.init_failures[0].second.last.code(), Error::kDelegateInvalidCompatibility);
    EXPECT_THAT(report.init_failures[0].second.last.message(), HasSubstr("init failed: blob format 9"));
  }
  EXPECT_TRUE(reported);
  // The registry lists the same; the good plugin, never failed, has none.
  for (const BackendInfo& backend : registry_.list_backends()) {
    EXPECT_EQ(backend.init_failures.count, backend.name == "faulty" ? 3u : 0u) << backend.name;
  }
}

TEST_F(Faults, ASecondThreadsCallOnTheSameMethodIsRefusedNotRaced) {
  Result<Method> method = load("faulty", {spec("execute_sleep_ms", "1500")});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  ASSERT_TRUE(set_floats(*method, 0, {0, 1, 2, 3, 4, 5}).is_ok());
  Status first;
  std::thread running([&] { first = method->execute(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the first call is asleep in its backend
  const Status second = method->execute();
  EXPECT_EQ(second.code(), Error::kInvalidState);
  EXPECT_THAT(second.message(), HasSubstr("already executing on another thread"));
  running.join();
  ASSERT_TRUE(first.is_ok()) << first.to_string();
  EXPECT_EQ(output_floats(*method, 0), plus(0, 1.5f));
  ASSERT_TRUE(run(*method, 1).is_ok());  // one at a time works, as before
}

TEST_F(Faults, AFailedExecuteSaysWhyAndTheNextCallWorks) {
  Result<Method> method = load("faulty", {spec("execute_fails_every", "3")});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  for (int call = 1; call <= 7; ++call) {
    const float base = static_cast<float>(call * 10);
    Status status = run(*method, base);
    if (call % 3 == 0) {
      EXPECT_EQ(status.code(), Error::kInternal) << "call " << call;
      EXPECT_THAT(status.message(), AllOf(HasSubstr("method 'forward', delegate 'faulty:0'"),
                                          HasSubstr("backend 'faulty' (" + faulty_path_ + "): execute failed"),
                                          HasSubstr("execute call " + std::to_string(call) + " failed on purpose")));
    } else {
      ASSERT_TRUE(status.is_ok()) << "call " << call << ": " << status.to_string();
      // The failed call scribbled over the output; the next one computes it afresh.
      EXPECT_EQ(output_floats(*method, 0), plus(base, 1.5f)) << "call " << call;
    }
  }
}

TEST_F(Faults, FailuresAnywhereInAChainLeaveTheMethodUsable) {
  // Three faulty delegates in a row, each failing every second call on its handle: the
  // failures land on different delegates as their counters drift apart, with the
  // intermediate values half written. Every call either fails cleanly, naming the
  // delegate, or gives the right answer.
  Result<Method> method = load("faulty", {spec("execute_fails_every", "2")}, 3);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  std::set<std::string> failed_delegates;
  int successes_after_a_failure = 0;
  for (int call = 0; call < 12; ++call) {
    const float base = static_cast<float>(call);
    Status status = run(*method, base);
    if (status.is_ok()) {
      EXPECT_EQ(output_floats(*method, 0), plus(base, 4.5f)) << "call " << call;
      if (!failed_delegates.empty()) ++successes_after_a_failure;
      continue;
    }
    EXPECT_EQ(status.code(), Error::kInternal);
    EXPECT_THAT(status.message(), HasSubstr("failed on purpose"));
    for (const char* label : {"faulty:0", "faulty:1", "faulty:2"}) {
      if (status.message().find(std::string("delegate '") + label + "'") != std::string::npos) {
        failed_delegates.insert(label);
      }
    }
  }
  EXPECT_THAT(failed_delegates, ElementsAre("faulty:0", "faulty:1", "faulty:2"));
  EXPECT_GT(successes_after_a_failure, 0);
}

TEST_F(Faults, AFailureWithoutAMessageSaysTheBackendGaveNone) {
  Result<Method> method = load("faulty", {spec("execute_fails_every", "1"), spec("execute_silent", "1")});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  Status status = run(*method, 0);
  EXPECT_EQ(status.code(), Error::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("execute failed with Internal and reported no reason"));
}

TEST_F(Faults, AReportBeforeASuccessfulCallIsNotBlamedOnALaterFailure) {
  // One method's backend reports an error but returns OK; the next failure on the same
  // thread, from another backend that gives no reason, must not borrow that report.
  Result<Method> chatty = load("faulty", {spec("report_on_success", "a complaint about nothing")});
  Result<Method> silent = load("faulty", {spec("execute_fails_every", "1"), spec("execute_silent", "1")});
  ASSERT_TRUE(chatty.is_ok() && silent.is_ok());
  ASSERT_TRUE(run(*chatty, 0).is_ok());
  EXPECT_EQ(output_floats(*chatty, 0), plus(0, 1.5f));
  Status status = run(*silent, 0);
  EXPECT_EQ(status.code(), Error::kInternal);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("reported no reason"), Not(HasSubstr("a complaint about nothing"))));
}

TEST_F(Faults, AFailingMethodDoesNotDisturbOthersRunningAtTheSameTime) {
  // Two threads run a method that fails every other call; four run healthy ones (on the
  // same plugin and on another). Every result and every failure is checked.
  constexpr int kRuns = 400;
  std::atomic<int> wrong{0}, failed_as_expected{0};
  std::mutex mutex;
  std::string first_problem;
  auto problem = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex);
    if (wrong++ == 0) first_problem = what;
  };
  auto thread_body = [&](const std::string& backend, bool failing, int seed) {
    // The failing ones have one delegate, so exactly every other call fails.
    Result<Method> method = failing ? load(backend, {spec("execute_fails_every", "2")}) : load(backend, {}, 2);
    if (!method.is_ok()) return problem(method.status().to_string());
    for (int i = 1; i <= kRuns; ++i) {
      const float base = static_cast<float>(seed * 1000 + i);
      Status status = run(*method, base);
      if (failing && i % 2 == 0) {
        if (status.code() == Error::kInternal && status.message().find("failed on purpose") != std::string::npos) {
          failed_as_expected++;
        } else {
          problem("call " + std::to_string(i) + " should have failed: " + status.to_string());
        }
      } else if (!status.is_ok()) {
        problem(status.to_string());
      } else if (output_floats(*method, 0) != plus(base, failing ? 1.5f : 3.0f)) {
        problem(backend + ": wrong result on call " + std::to_string(i));
      }
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(thread_body, "faulty", true, 1);
  threads.emplace_back(thread_body, "faulty", true, 2);
  threads.emplace_back(thread_body, "faulty", false, 3);
  threads.emplace_back(thread_body, "faulty", false, 4);
  threads.emplace_back(thread_body, "offset", false, 5);
  threads.emplace_back(thread_body, "offset", false, 6);
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0) << "first problem: " << first_problem;
  EXPECT_EQ(failed_as_expected.load(), 2 * kRuns / 2);
}

TEST_F(Faults, APluginFileRemovedWhileLoadedKeepsWorking) {
  Result<Method> method = load("offset");
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  ASSERT_EQ(unlink(good_path_.c_str()), 0);

  ASSERT_TRUE(run(*method, 0).is_ok());
  EXPECT_EQ(output_floats(*method, 0), plus(0, 1.5f));
  // The plugin is still registered: new instances use it, and a rescan keeps it.
  loader_->discover();
  Result<Method> another = load("offset");
  ASSERT_TRUE(another.is_ok()) << another.status().to_string();
  EXPECT_FALSE(another->report().delegates.at(0).fell_back);
  ASSERT_TRUE(run(*another, 5).is_ok());
  EXPECT_EQ(output_floats(*another, 0), plus(5, 1.5f));
}

TEST_F(Faults, APluginFileReplacedWhileLoadedKeepsWorking) {
  Result<Method> method = load("offset");
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  // Replace the file the way an installer should: write another file, rename it over.
  // First another plugin (private_a adds 1 more than good), then something not a plugin.
  for (const std::string replacement : {"plugin", "text"}) {
    const std::string staged = plugins_.path() + "/staged.tmp";
    if (replacement == "plugin") {
      std::filesystem::copy_file(plugin_file("private_a"), staged);
    } else {
      plugins_.write("staged.tmp", "not a plugin any more");
    }
    ASSERT_EQ(rename(staged.c_str(), good_path_.c_str()), 0);
    loader_->discover();  // the loaded plugin keeps the verdict it was loaded on

    ASSERT_TRUE(run(*method, 0).is_ok());
    EXPECT_EQ(output_floats(*method, 0), plus(0, 1.5f)) << "after the " << replacement << " replacement";
    Result<Method> another = load("offset");
    ASSERT_TRUE(another.is_ok()) << another.status().to_string();
    EXPECT_EQ(another->report().delegates.at(0).backend, "offset");
    ASSERT_TRUE(run(*another, 3).is_ok());
    EXPECT_EQ(output_floats(*another, 0), plus(3, 1.5f)) << "after the " << replacement << " replacement";
  }
  // Unloaded and asked for by path again while its code is still in use: what is loaded
  // is what the path names now (checked on the descriptor that is mapped), which is not
  // a plugin any more: refused, saying why; the method loaded before keeps working.
  ASSERT_TRUE(loader_->unload(good_path_).is_ok());
  Result<PluginId> again = loader_->load(good_path_);
  ASSERT_FALSE(again.is_ok());
  EXPECT_THAT(again.status().message(), HasSubstr(good_path_));
  ASSERT_TRUE(run(*method, 0).is_ok());
  EXPECT_EQ(output_floats(*method, 0), plus(0, 1.5f));
}

}  // namespace
}  // namespace plugrt::testing
