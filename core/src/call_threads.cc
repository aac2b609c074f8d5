// SPDX-License-Identifier: Apache-2.0
#include "call_threads.h"

#include <algorithm>
#include <atomic>

namespace plugrt::internal {

void ThreadChooser::Samples::add(uint64_t nanoseconds) {
  recent[next] = nanoseconds;
  next = (next + 1) % kSamples;
  size = std::min(size + 1, kSamples);
}

uint64_t ThreadChooser::Samples::median() const {
  std::array<uint64_t, kSamples> sorted = recent;
  for (size_t i = 1; i < size; ++i) {  // insertion sort of the samples held
    for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; --j) std::swap(sorted[j - 1], sorted[j]);
  }
  return size == 0 ? 0 : sorted[size / 2];
}

ThreadChooser::ThreadChooser(size_t budget, bool adapt)
    : counts_{std::max<size_t>(budget, 1), 1}, adapt_(adapt && budget > 1) {
  if (adapt_) start_block(0, kWarmupCalls);
}

size_t ThreadChooser::next() const {
  if (!adapt_) return counts_[0];
  return counts_[block_left_ > 0 ? block_which_ : chosen_];
}

void ThreadChooser::record(size_t threads, uint64_t nanoseconds) {
  if (!adapt_) return;
  // The process share may have given a count between the two: not a sample of either.
  if (threads != counts_[0] && threads != counts_[1]) return;
  const size_t which = threads == counts_[0] ? 0 : 1;
  if (block_left_ > 0 && which == block_which_) {
    if (block_discard_ > 0) {
      --block_discard_;
      return;
    }
    samples_[which].add(nanoseconds);
    if (--block_left_ == 0 || block_lost()) {
      block_left_ = 0;
      end_block();
    }
    return;
  }
  if (block_left_ > 0) return;
  if (skip_next_) {  // the first call back on the chosen count pays for the switch
    skip_next_ = false;
    return;
  }
  samples_[which].add(nanoseconds);
  // Back to the budget only by a comparison: one thread's samples from before say
  // nothing of now.
  if (chosen_ == 0 && budget_losing(nanoseconds)) {
    chosen_ = 1;
    gap_ = kFirstGap;
    calls_until_comparison_ = gap_;
    return;
  }
  if (--calls_until_comparison_ == 0) start_block(other(), 1);
}

bool ThreadChooser::budget_losing(uint64_t nanoseconds) {
  // Against one thread's last block: kSlowStreak calls in a row slower than one thread
  // (other work took cores; one or two alone are a hiccup), or kStalls calls of the
  // last kStallWindow more than twice as slow (a worker that lost its core for a time
  // slice, again and again).
  const uint64_t one = samples_[1].median();
  slow_streak_ = nanoseconds > one + one / 20 ? slow_streak_ + 1 : 0;
  stalls_ <<= 1;
  stalls_[0] = one > 0 && nanoseconds > 2 * one;
  if (slow_streak_ < kSlowStreak && stalls_.count() < kStalls) return false;
  slow_streak_ = 0;
  stalls_.reset();
  return true;
}

void ThreadChooser::start_block(size_t which, size_t discard) {
  samples_[which] = Samples{};
  block_which_ = which;
  block_discard_ = discard;
  block_left_ = kSamples;
}

bool ThreadChooser::block_lost() const {
  const Samples& block = samples_[block_which_];
  const Samples& followed = samples_[chosen_];
  if (block_which_ == chosen_ || block.size < kShortBlock || followed.size == 0) return false;
  const uint64_t bar = followed.median() + followed.median() / 4;
  for (size_t i = 0; i < block.size; ++i) {
    if (block.recent[i] <= bar) return false;
  }
  return true;
}

void ThreadChooser::end_block() {
  if (!decided_ && block_which_ == 0) {
    start_block(1, 1);  // the first comparison: the budget's block, then one thread's
    return;
  }
  decide();
}

void ThreadChooser::decide() {
  const size_t before = chosen_;
  const uint64_t budget = samples_[0].median(), one = samples_[1].median();
  // 5% of hysteresis, so that two counts that run alike do not take turns.
  if (chosen_ == 0 && one + one / 20 < budget) chosen_ = 1;
  if (chosen_ == 1 && budget + budget / 20 < one) chosen_ = 0;
  gap_ = chosen_ == before && decided_ ? std::min(gap_ * 2, kLongestGap) : kFirstGap;
  if (chosen_ != before) {  // what the budget's calls did before the switch says nothing of now
    stalls_.reset();
    slow_streak_ = 0;
  }
  decided_ = true;
  skip_next_ = chosen_ != block_which_;
  calls_until_comparison_ = gap_;
}

namespace {

std::atomic<size_t>& threads_in_use() {
  static std::atomic<size_t> in_use{0};
  return in_use;
}

}  // namespace

size_t CoreShare::take(size_t wanted, size_t cores) {
  std::atomic<size_t>& in_use = threads_in_use();
  size_t held = in_use.load(std::memory_order_relaxed);
  size_t granted = 1;
  do {
    const size_t free = held < cores ? cores - held : 0;
    granted = std::max<size_t>(1, std::min(wanted, free));
  } while (!in_use.compare_exchange_weak(held, held + granted, std::memory_order_relaxed));
  return granted;
}

void CoreShare::give_back(size_t threads) { threads_in_use().fetch_sub(threads, std::memory_order_relaxed); }

}  // namespace plugrt::internal
