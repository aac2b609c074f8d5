// SPDX-License-Identifier: Apache-2.0
// The method's thread budget and the hand-off between backends, seen from real plugins:
// the probe test plugins log the budget init gets and the flags of every execute call.
#include <sched.h>

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/method.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "plugrt/thread_budget.h"
#include "program_fixtures.h"
#include "test_plugin_files.h"

namespace plugrt::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kPark = std::to_string(PLUGRT_EXECUTE_PARK_WORKERS);

class ThreadBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(register_builtin_backends(registry_).is_ok());
    for (const char* plugin : {"probe_a", "probe_b", "older_minor", "newer_minor"}) plugins_.add_plugin(plugin);
    loader_ = std::make_unique<plugins::PluginLoader>(registry_, only({plugins_.path()}));
    loader_->discover();
  }

  /// Loads a chain of delegates on `backends` (each adds 1.5) with `threads`, runs it
  /// once on {0..5}, and checks the result.
  Result<Method> run(const std::vector<std::string>& backends, size_t threads) {
    OffsetProgramOptions options;
    options.backends = backends;
    Result<Program> program = Program::from_bytes(offset_program(options), "chain.prt");
    if (!program.is_ok()) return program.status();
    MethodOptions method_options;
    method_options.num_threads = threads;
    Result<Method> method = Method::load(*program, "forward", registry_, method_options);
    if (!method.is_ok()) return method;
    for (const DelegatePlacement& placement : method->report().delegates) {
      EXPECT_FALSE(placement.fell_back) << placement.delegate << ": " << placement.reason;
    }
    PLUGRT_RETURN_IF_ERROR(set_floats(*method, 0, {0, 1, 2, 3, 4, 5}));
    PLUGRT_RETURN_IF_ERROR(method->execute());
    const float added = 1.5f * static_cast<float>(backends.size());
    EXPECT_THAT(output_floats(*method, 0), ElementsAre(added, 1 + added, 2 + added, 3 + added, 4 + added, 5 + added));
    return method;
  }

  /// The probes' log lines that contain `what`, in order.
  std::vector<std::string> probe_lines(const std::string& what) const {
    std::vector<std::string> found;
    for (const std::string& line : log_.lines()) {
      const size_t at = line.find(what);
      if (at != std::string::npos) found.push_back(line.substr(at));
    }
    return found;
  }

  TempDirectory plugins_;
  Registry registry_;
  LogCapture log_{registry_.environment()};
  std::unique_ptr<plugins::PluginLoader> loader_;
};

TEST_F(ThreadBudgetTest, EveryDelegateGetsTheMethodsBudget) {
  Result<Method> method = run({"probe_a", "probe_b", "probe_a"}, 3);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_EQ(method->report().num_threads, 3u);
  EXPECT_THAT(probe_lines("init "), ElementsAre("init num_threads=3", "init num_threads=3", "init num_threads=3"));
}

TEST_F(ThreadBudgetTest, TheDefaultBudgetIsTheCoresTheProcessMayUse) {
  Result<Method> method = run({"probe_a"}, 0);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const size_t cores = static_cast<size_t>(CPU_COUNT(&set));
  EXPECT_EQ(method->report().num_threads, cores);
  EXPECT_THAT(probe_lines("init "), ElementsAre("init num_threads=" + std::to_string(cores)));
}

TEST_F(ThreadBudgetTest, AvailableCoresFollowsTheAffinityMask) {
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof(original), &original), 0);
  int first = 0;
  while (!CPU_ISSET(first, &original)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const size_t pinned = available_cores();
  ASSERT_EQ(sched_setaffinity(0, sizeof(original), &original), 0);
  EXPECT_EQ(pinned, 1u);
  EXPECT_EQ(available_cores(), static_cast<size_t>(CPU_COUNT(&original)));
  EXPECT_EQ(resolve_thread_budget(5), 5u);
}

TEST_F(ThreadBudgetTest, TheCallThatEndsABackendsTurnParksItsWorkers) {
  // a, a, b, then a again at the next execute: the second a and the b end their turns.
  Result<Method> method = run({"probe_a", "probe_a", "probe_b"}, 2);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_THAT(probe_lines("execute "),
              ElementsAre("execute flags=0", "execute flags=" + kPark, "execute flags=" + kPark));
}

TEST_F(ThreadBudgetTest, OneBackendAloneNeverParks) {
  Result<Method> method = run({"probe_a", "probe_a"}, 2);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  ASSERT_TRUE(method->execute().is_ok());
  EXPECT_THAT(probe_lines("execute "),
              ElementsAre("execute flags=0", "execute flags=0", "execute flags=0", "execute flags=0"));
}

TEST_F(ThreadBudgetTest, PluginsOfAnOlderAndANewerMinorTakeTurnsWithTheHandOff) {
  // The 1.0 plugin's table ends before 1.1; the newer one claims a minor above this
  // host's. Both read only what they know of the 1.2 execute args and give their result.
  Result<Method> method = run({"older", "probe_a", "newer", "older"}, 2);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_THAT(probe_lines("execute "), ElementsAre("execute flags=" + kPark));
}

TEST_F(ThreadBudgetTest, EachCallSaysHowManyThreadsItMayUse) {
  // The chooser's first calls: a warm-up and a block on the budget, then a block on one
  // thread; a fixed method keeps the budget on every call.
  Result<Method> method = run({"probe_a"}, 2);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_EQ(method->last_call_threads(), 2u);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(method->execute().is_ok());
  EXPECT_EQ(method->last_call_threads(), 1u);
  const std::vector<std::string> lines = probe_lines("call threads=");
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(lines[6], "call threads=2");
  EXPECT_EQ(lines[7], "call threads=1");
}

TEST_F(ThreadBudgetTest, AnOlderPluginRunsCallsOnItsBudget) {
  // The 1.0 plugin's execute args end before num_threads: it reads none and runs.
  Result<Method> method = run({"older", "probe_a"}, 2);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(method->execute().is_ok());
  EXPECT_THAT(probe_lines("call threads="), ::testing::SizeIs(10));
}

}  // namespace
}  // namespace plugrt::testing
