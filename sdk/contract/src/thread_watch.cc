// SPDX-License-Identifier: Apache-2.0
#include "thread_watch.h"

#include <dirent.h>

#include <algorithm>

namespace plugrt::sdk::testing {

int count_threads() {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(tasks);
  return count;
}

ThreadWatch::ThreadWatch()
    : watcher_([this] {
        // Reads until stopped, with no pause: a thread that lives for a millisecond is seen.
        while (!stopping_.load(std::memory_order_relaxed)) {
          const int now = count_threads();
          if (now < 0) {
            peak_ = -1;
            started_ = true;
            return;
          }
          peak_ = std::max(peak_.load(), now - 1);
          started_ = true;
        }
      }) {
  // The first count is in before anything watched runs.
  while (!started_ && peak_.load() >= 0) std::this_thread::yield();
}

ThreadWatch::~ThreadWatch() { (void)stop(); }

int ThreadWatch::stop() {
  stopping_ = true;
  if (watcher_.joinable()) watcher_.join();
  return peak_.load();
}

}  // namespace plugrt::sdk::testing
