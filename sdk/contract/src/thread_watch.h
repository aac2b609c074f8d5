// SPDX-License-Identifier: Apache-2.0
// Counting the threads of the process while a backend runs, for the kit's thread-budget
// check: a watcher thread reads /proc/self/task over and over and keeps the largest count.
#ifndef PLUGRT_SDK_CONTRACT_THREAD_WATCH_H_
#define PLUGRT_SDK_CONTRACT_THREAD_WATCH_H_

#include <atomic>
#include <thread>

namespace plugrt::sdk::testing {

/// The number of threads of this process now (the entries of /proc/self/task), or -1
/// when /proc cannot be read.
int count_threads();

/// Watches the process's thread count from its construction (which returns once the
/// first count is in) to stop(). The watcher's own thread is not counted.
class ThreadWatch {
 public:
  ThreadWatch();
  ~ThreadWatch();
  ThreadWatch(const ThreadWatch&) = delete;
  ThreadWatch& operator=(const ThreadWatch&) = delete;

  /// Stops watching; returns the most threads seen at once, the watcher left out
  /// (-1 when /proc could not be read).
  int stop();

 private:
  std::atomic<bool> stopping_{false};
  std::atomic<bool> started_{false};
  std::atomic<int> peak_{0};
  std::thread watcher_;
};

}  // namespace plugrt::sdk::testing

#endif  // PLUGRT_SDK_CONTRACT_THREAD_WATCH_H_
