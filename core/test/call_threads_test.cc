// SPDX-License-Identifier: Apache-2.0
// The thread chooser follows the faster count of a method's calls, and the process
// share keeps methods that run at once within the cores.
#include "call_threads.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

namespace plugrt::internal {
namespace {

constexpr uint64_t kMs = 1'000'000;
// The first comparison: the warm-up and the budget's block, then one thread's block.
constexpr int kFirstCalls = static_cast<int>(ThreadChooser::kWarmupCalls + 1 + 2 * ThreadChooser::kSamples);

/// Runs calls until the first comparison ends; returns how many ran.
int settle(ThreadChooser& chooser, uint64_t budget_ns, uint64_t one_ns, size_t budget = 2) {
  int calls = 0;
  for (; !chooser.settled() && calls < 100; ++calls) {
    const size_t threads = chooser.next();
    chooser.record(threads, threads == budget ? budget_ns : one_ns);
  }
  return calls;
}

/// Runs `calls` calls, each taking `budget_ns` on the budget and `one_ns` on one thread;
/// returns how many ran on one thread.
int run(ThreadChooser& chooser, int calls, uint64_t budget_ns, uint64_t one_ns, size_t budget = 2) {
  int on_one_thread = 0;
  for (int i = 0; i < calls; ++i) {
    const size_t threads = chooser.next();
    on_one_thread += threads == 1;
    chooser.record(threads, threads == budget ? budget_ns : one_ns);
  }
  return on_one_thread;
}

TEST(ThreadChooser, MeasuresBothCountsAfterAWarmUpAndFollowsTheFaster) {
  ThreadChooser chooser(4, true);
  std::vector<size_t> first;
  for (int i = 0; i < kFirstCalls; ++i) {
    first.push_back(chooser.next());
    // The warm-up and the first call on one thread are slow, and not measured.
    chooser.record(first.back(), i < 2 || i == 7 ? 50 * kMs : first.back() == 4 ? 30 * kMs : 36 * kMs);
  }
  EXPECT_EQ(first, (std::vector<size_t>{4, 4, 4, 4, 4, 4, 4, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(chooser.chosen(), 4u);
  EXPECT_TRUE(chooser.settled());

  ThreadChooser small(2, true);
  run(small, kFirstCalls, 2 * kMs, kMs);  // a program too small to share
  EXPECT_EQ(small.chosen(), 1u);
  EXPECT_EQ(small.next(), 1u);
}

TEST(ThreadChooser, ABlockThatHasLostEndsEarly) {
  ThreadChooser chooser(2, true);
  EXPECT_FALSE(chooser.settled());
  // One thread's first two samples are each a quarter or more slower than the budget:
  // its block ends there, three calls on one thread instead of six.
  EXPECT_EQ(settle(chooser, 10 * kMs, 13 * kMs),
            static_cast<int>(ThreadChooser::kWarmupCalls + ThreadChooser::kSamples + 1 + ThreadChooser::kShortBlock));
  EXPECT_EQ(chooser.chosen(), 2u);
  // One sample within the quarter keeps the block going.
  ThreadChooser close(2, true);
  std::vector<size_t> counts;
  for (int i = 0; i < kFirstCalls; ++i) {
    counts.push_back(close.next());
    close.record(counts.back(), counts.back() == 2 ? 10 * kMs : i == 9 ? 12 * kMs : 13 * kMs);
  }
  EXPECT_EQ(std::count(counts.begin(), counts.end(), size_t{1}), static_cast<long>(ThreadChooser::kSamples + 1));
}

TEST(ThreadChooser, SlowCallsOnTheBudgetMoveToOneThreadAtOnce) {
  ThreadChooser chooser(2, true);
  settle(chooser, kMs, 2 * kMs);
  ASSERT_EQ(chooser.chosen(), 2u);
  chooser.record(2, 50 * kMs);  // the first call after a block is not measured
  // A hiccup: three calls slower than one thread (not twice as slow: no stalls), then
  // one as before.
  for (int i = 0; i < 3; ++i) chooser.record(2, 3 * kMs);
  chooser.record(2, kMs);
  EXPECT_EQ(chooser.chosen(), 2u);
  // Another workload takes the cores: four slow calls in a row.
  for (int i = 0; i < 3; ++i) chooser.record(2, 3 * kMs);
  EXPECT_EQ(chooser.chosen(), 2u);
  chooser.record(2, 3 * kMs);
  EXPECT_EQ(chooser.chosen(), 1u);
  // Stalls, more than twice one thread's time, need not come in a row.
  ThreadChooser stalled(2, true);
  settle(stalled, kMs, 2 * kMs);
  stalled.record(2, 50 * kMs);  // not measured
  for (int i = 0; i < 3; ++i) stalled.record(2, 50 * kMs), stalled.record(2, kMs);
  EXPECT_EQ(stalled.chosen(), 2u);
  stalled.record(2, 50 * kMs);
  EXPECT_EQ(stalled.chosen(), 1u);
}

/// Runs `calls` calls on a chooser that follows the budget of 2, one thread taking 1.1
/// ms and the budget 1 ms but every `every`-th call on it 10 ms (a stalled worker);
/// returns the call at which the chooser moved to one thread, or -1.
int stalled_calls(ThreadChooser& chooser, int calls, int every) {
  int on_budget = 0;
  for (int i = 0; i < calls; ++i) {
    const size_t threads = chooser.next();
    if (threads == 1 && chooser.chosen() == 1) return i;
    const bool stall = threads == 2 && ++on_budget % every == 0;
    chooser.record(threads, threads == 1 ? 11 * kMs / 10 : stall ? 10 * kMs : kMs);
  }
  return -1;
}

TEST(ThreadChooser, StallsOnTheBudgetMoveToOneThread) {
  // Medians a tenth apart, within reach of the hysteresis: the stalls decide. One call in
  // six stalls: the fourth stall is within the window, after 24 calls at most.
  ThreadChooser chooser(2, true);
  settle(chooser, kMs, 11 * kMs / 10);
  ASSERT_EQ(chooser.chosen(), 2u);
  const int moved = stalled_calls(chooser, 200, 6);
  EXPECT_GE(moved, 19);
  EXPECT_LE(moved, 26);
  EXPECT_EQ(chooser.chosen(), 1u);
  // One in twelve: never four in a window of 32 calls.
  ThreadChooser rare(2, true);
  settle(rare, kMs, 11 * kMs / 10);
  EXPECT_EQ(stalled_calls(rare, 2000, 12), -1);
  EXPECT_EQ(rare.chosen(), 2u);
}

TEST(ThreadChooser, SlowCallsOnOneThreadWaitForAComparison) {
  ThreadChooser chooser(2, true);
  run(chooser, kFirstCalls, 2 * kMs, kMs);
  ASSERT_EQ(chooser.chosen(), 1u);
  for (int i = 0; i < 5; ++i) chooser.record(1, 9 * kMs);  // bursts of other work
  EXPECT_EQ(chooser.chosen(), 1u);
}

TEST(ThreadChooser, AComparisonFindsTheBudgetFasterAgainWhenTheContentionPasses) {
  ThreadChooser chooser(2, true);
  settle(chooser, kMs, 2 * kMs);
  for (int i = 0; i < 5; ++i) chooser.record(2, 50 * kMs);
  ASSERT_EQ(chooser.chosen(), 1u);
  // The cores are free again: within a gap and a comparison, the budget is back.
  run(chooser, static_cast<int>(ThreadChooser::kFirstGap + ThreadChooser::kSamples + 1), kMs, 2 * kMs);
  EXPECT_EQ(chooser.chosen(), 2u);
}

TEST(ThreadChooser, ComparisonsGrowRarerWhileTheChoiceHolds) {
  ThreadChooser chooser(2, true);
  settle(chooser, kMs, 2 * kMs);
  // Comparisons after 64, 128, 256, 512, 1024 and 1024 calls, on one thread: the call not
  // measured, and a block that has lost after kShortBlock samples.
  EXPECT_EQ(run(chooser, 4000, kMs, 2 * kMs), 6 * static_cast<int>(ThreadChooser::kShortBlock + 1));
  EXPECT_EQ(chooser.chosen(), 2u);
}

TEST(ThreadChooser, CountsThatRunAlikeDoNotTakeTurns) {
  ThreadChooser chooser(2, true);
  run(chooser, kFirstCalls, 100 * kMs, 97 * kMs);  // one thread 3% faster: within the hysteresis
  EXPECT_EQ(chooser.chosen(), 2u);
}

TEST(ThreadChooser, AFixedMethodOrABudgetOfOneAlwaysRunsTheBudget) {
  ThreadChooser fixed(2, false);
  EXPECT_EQ(run(fixed, 20, 2 * kMs, kMs), 0);
  ThreadChooser one(1, true);
  run(one, 20, kMs, kMs, 1);
  EXPECT_EQ(one.next(), 1u);
}

TEST(ThreadChooser, ACountBetweenTheTwoIsNoSample) {
  ThreadChooser chooser(4, true);
  for (int i = 0; i < 20; ++i) chooser.record(3, kMs);  // the process share gave 3
  EXPECT_EQ(chooser.next(), 4u);                        // still in the budget's first block
}

TEST(CoreShare, MethodsRunningAtOnceShareTheCores) {
  const size_t first = CoreShare::take(2, 2);
  const size_t second = CoreShare::take(2, 2);
  EXPECT_EQ(first, 2u);
  EXPECT_EQ(second, 1u);  // a call always keeps its own thread
  CoreShare::give_back(second);
  CoreShare::give_back(first);
  EXPECT_EQ(CoreShare::take(2, 2), 2u);
  CoreShare::give_back(2);
}

}  // namespace
}  // namespace plugrt::internal
