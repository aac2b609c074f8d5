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
    : counts_{std::max<size_t>(budget, 1), 1}, adapt_(adapt && budget > 1) {}

size_t ThreadChooser::next() const {
  if (!adapt_) return counts_[0];
  // The first calls measure both counts: the budget's first, then one thread's.
  if (!measured_) return counts_[samples_[0].size < kSamples ? 0 : 1];
  return counts_[trial_left_ > 0 ? other() : chosen_];
}

void ThreadChooser::record(size_t threads, uint64_t nanoseconds) {
  if (!adapt_) return;
  // The process share may have given a count between the two: not a sample of either.
  if (threads != counts_[0] && threads != counts_[1]) return;
  const size_t which = threads == counts_[chosen_] ? chosen_ : other();
  samples_[which].add(nanoseconds);
  if (trial_left_ > 0) {
    if (which != other() || --trial_left_ > 0) return;
    // The trial is over: keep the count it measured if faster; trials grow rarer while
    // the choice holds.
    const size_t before = chosen_;
    compare();
    if (chosen_ == before) trial_gap_ = std::min(trial_gap_ * 2, kLongestTrialGap);
    calls_until_trial_ = trial_gap_;
    return;
  }
  if (!measured_) {  // the first calls
    measured_ = samples_[0].size == kSamples && samples_[1].size == kSamples;
    if (measured_) {
      compare();
      calls_until_trial_ = trial_gap_;
    }
    return;
  }
  // On the budget, recent calls against one thread's last trial: calls that slow down
  // (other work took cores) move to one thread at once. Back to the budget only by a
  // trial: its samples from before the contention say nothing of now.
  if (chosen_ == 0) compare();
  if (calls_until_trial_ > 0 && --calls_until_trial_ == 0) {
    trial_left_ = kSamples;
    samples_[other()] = Samples{};  // the trial measures the other count afresh
  }
}

void ThreadChooser::compare() {
  const uint64_t mine = samples_[chosen_].median();
  const uint64_t theirs = samples_[other()].median();
  // 5% of hysteresis, so that two counts that run alike do not take turns.
  if (theirs + theirs / 20 >= mine) return;
  chosen_ = other();
  trial_gap_ = kFirstTrialGap;
  calls_until_trial_ = trial_gap_;
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
