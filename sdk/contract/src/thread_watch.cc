// SPDX-License-Identifier: Apache-2.0
#include "thread_watch.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace plugrt::sdk::testing {

namespace {

int count_own_threads() {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(tasks);
  return count;
}

/// A process's parent and thread count from /proc/<pid>/stat (fields 4 and 20, counted
/// after the command name, which may hold spaces and parentheses); false if it is gone.
bool read_stat(const char* pid, long* parent, long* threads) {
  char path[64], text[1024];
  std::snprintf(path, sizeof path, "/proc/%s/stat", pid);
  FILE* file = std::fopen(path, "r");
  if (file == nullptr) return false;
  const size_t size = std::fread(text, 1, sizeof text - 1, file);
  std::fclose(file);
  text[size] = '\0';
  const char* field = std::strrchr(text, ')');
  if (field == nullptr) return false;
  for (int number = 2; number < 20 && field != nullptr; ++number) {  // field 2 ends at ')'
    field = std::strchr(field + 1, ' ');
    if (number == 3 && field != nullptr) *parent = std::strtol(field + 1, nullptr, 10);
  }
  if (field == nullptr) return false;
  *threads = std::strtol(field + 1, nullptr, 10);
  return true;
}

int count_child_threads() {
  DIR* processes = opendir("/proc");
  if (processes == nullptr) return -1;
  const long self = static_cast<long>(getpid());
  int count = 0;
  while (const dirent* entry = readdir(processes)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    long parent = 0, threads = 0;
    if (read_stat(entry->d_name, &parent, &threads) && parent == self) count += static_cast<int>(threads);
  }
  closedir(processes);
  return count;
}

}  // namespace

int count_threads(ThreadScope scope) {
  return scope == ThreadScope::kThisProcess ? count_own_threads() : count_child_threads();
}

ThreadWatch::ThreadWatch(ThreadScope scope)
    : watcher_([this, scope] {
        // Reads until stopped, with no pause: a thread that lives for a millisecond is seen.
        const int watcher = scope == ThreadScope::kThisProcess ? 1 : 0;
        while (!stopping_.load(std::memory_order_relaxed)) {
          const int now = count_threads(scope);
          if (now < 0) {
            peak_ = -1;
            started_ = true;
            return;
          }
          peak_ = std::max(peak_.load(), now - watcher);
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
