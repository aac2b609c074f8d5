// SPDX-License-Identifier: Apache-2.0
// Counting threads while a backend runs, for the kit's thread-budget check: a watcher
// thread reads /proc over and over and keeps the largest count. In process, it counts
// the process's own threads (/proc/self/task); under --isolate, where the backend runs in
// backend host processes the kit started, the threads of this process's children.
#ifndef PLUGRT_SDK_CONTRACT_THREAD_WATCH_H_
#define PLUGRT_SDK_CONTRACT_THREAD_WATCH_H_

#include <atomic>
#include <thread>

namespace plugrt::sdk::testing {

/// Whose threads to count.
enum class ThreadScope {
  kThisProcess,  ///< the entries of /proc/self/task
  kChildren,     ///< num_threads of every process whose parent is this one
};

/// The number of threads in `scope` now, or -1 when /proc cannot be read.
int count_threads(ThreadScope scope = ThreadScope::kThisProcess);

/// Watches the thread count of `scope` from its construction (which returns once the
/// first count is in) to stop(). The watcher's own thread is not counted.
class ThreadWatch {
 public:
  explicit ThreadWatch(ThreadScope scope = ThreadScope::kThisProcess);
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
