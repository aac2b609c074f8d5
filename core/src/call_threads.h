// SPDX-License-Identifier: Apache-2.0
// How many threads each call of a method keeps busy: the method's budget, or one while
// one runs it faster. Fewer threads win when other work holds the cores (a worker that
// is not scheduled stalls every parallel region of a call), when another method of the
// process runs at the same time, and for a program too small to share. The chooser
// measures both counts on the method's own calls and follows the faster one; the process
// share keeps methods that run at once within the cores together.
#ifndef PLUGRT_CORE_SRC_CALL_THREADS_H_
#define PLUGRT_CORE_SRC_CALL_THREADS_H_

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>

namespace plugrt::internal {

/// Chooses each call's thread count between a method's budget and one, from the latency
/// of its recent calls. A comparison runs the count not followed for a block of calls
/// and sets its median against the followed count's recent calls; it comes again after a
/// gap of calls that grows while the choice holds. Between comparisons, calls on the
/// budget that stay slower than one thread move to one thread at once. Not thread-safe: a method runs one
/// call at a time.
class ThreadChooser {
 public:
  /// Samples per count that a comparison uses (their median): enough that a few calls
  /// slowed by a burst of other work do not decide.
  static constexpr size_t kSamples = 5;
  /// The method's first calls, on the budget, are not measured (caches, the pools'
  /// threads starting); nor is the first call after every switch of count, which pays
  /// for it (workers that slept while one thread ran, what a backend makes for one).
  static constexpr size_t kWarmupCalls = 2;
  /// Calls on the budget in a row slower than one thread that move to one thread.
  static constexpr size_t kSlowStreak = 4;
  /// Stalls among the last kStallWindow calls on the budget that move to one thread: a
  /// stall is a call more than twice one thread's median, as when another process's
  /// threads take a core from a worker for a time slice and every parallel region
  /// waits for it. Each one alone does not move the median, but it is the caller's tail.
  static constexpr size_t kStalls = 4;
  static constexpr size_t kStallWindow = 32;
  /// A block of the count not followed ends after this many samples when each is slower
  /// than the followed count's median by a quarter or more: no median of the rest could
  /// win, and each of its calls is a slow one for the method's caller.
  static constexpr size_t kShortBlock = 2;
  /// Calls between two comparisons, at first and at most.
  static constexpr uint64_t kFirstGap = 64;
  static constexpr uint64_t kLongestGap = 1024;

  /// `budget`: the method's thread budget. `adapt` false keeps every call at the budget.
  ThreadChooser(size_t budget, bool adapt);

  /// The thread count for the next call.
  size_t next() const;
  /// The last call ran on `threads` threads and took `nanoseconds`.
  void record(size_t threads, uint64_t nanoseconds);

  /// The count the chooser follows now (the budget or 1).
  size_t chosen() const { return counts_[chosen_]; }
  /// Whether the first comparison has ended (always, when not adapting): from then on
  /// calls run on the chosen count but for the rare comparisons.
  bool settled() const { return !adapt_ || decided_; }

 private:
  struct Samples {
    std::array<uint64_t, kSamples> recent{};
    size_t size = 0;  // how many of `recent` hold samples, up to kSamples
    size_t next = 0;  // where the next sample goes
    void add(uint64_t nanoseconds);
    uint64_t median() const;
  };
  size_t other() const { return 1 - chosen_; }
  /// Runs `which` (0: the budget, 1: one thread) for `discard` calls and kSamples more.
  void start_block(size_t which, size_t discard);
  /// Counts a call on the followed budget; whether the budget now loses to one thread
  /// without waiting for a comparison.
  bool budget_losing(uint64_t nanoseconds);
  /// Whether the block under way, of the count not followed, has lost already.
  bool block_lost() const;
  void end_block();
  /// The faster count, by 5% or more, is chosen.
  void decide();

  std::array<size_t, 2> counts_;  // [0]: the budget, [1]: one thread
  std::array<Samples, 2> samples_;
  size_t chosen_ = 0;
  size_t block_which_ = 0;
  size_t block_discard_ = 0;
  size_t block_left_ = 0;  // measured calls left in the block under way; 0: none
  uint64_t calls_until_comparison_ = 0;
  uint64_t gap_ = kFirstGap;
  bool decided_ = false;              // the first comparison has ended
  bool skip_next_ = false;            // the next call is the first on the chosen count after a block
  size_t slow_streak_ = 0;            // calls on the budget in a row slower than one thread
  std::bitset<kStallWindow> stalls_;  // bit i: the call on the budget i calls ago stalled
  bool adapt_;
};

/// The process's share of the cores: every method's call takes its threads from it
/// before it runs and gives them back after, so methods running at once do not ask for
/// more threads than the process has cores. A call always gets at least one thread (the
/// one calling it).
class CoreShare {
 public:
  /// Takes up to `wanted` threads out of `cores`: fewer when other calls hold them.
  static size_t take(size_t wanted, size_t cores);
  static void give_back(size_t threads);
};

}  // namespace plugrt::internal

#endif  // PLUGRT_CORE_SRC_CALL_THREADS_H_
