// SPDX-License-Identifier: Apache-2.0
#include "src/threadpool.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

#include <cpuinfo.h>

namespace plugrt::xnnpack {

namespace {

struct SharedPool {
  pthreadpool_t pool = nullptr;
  size_t references = 0;
};

std::mutex& pools_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<size_t, SharedPool>& pools() {
  static std::map<size_t, SharedPool> by_thread_count;
  return by_thread_count;
}

void do_nothing(void*, size_t) {}

}  // namespace

size_t resolve_thread_count(size_t requested) {
  if (requested != 0) return requested;
  if (!cpuinfo_initialize()) return 1;
  const uint32_t cores = cpuinfo_get_cores_count();
  return cores == 0 ? 1 : cores;
}

pthreadpool_t acquire_threadpool(size_t threads) {
  if (threads <= 1) return nullptr;
  std::lock_guard<std::mutex> lock(pools_mutex());
  SharedPool& shared = pools()[threads];
  if (shared.pool == nullptr) {
    shared.pool = pthreadpool_create(threads);
    if (shared.pool == nullptr) {
      pools().erase(threads);
      return nullptr;
    }
  }
  ++shared.references;
  return shared.pool;
}

void release_threadpool(pthreadpool_t pool) {
  if (pool == nullptr) return;
  std::lock_guard<std::mutex> lock(pools_mutex());
  for (auto it = pools().begin(); it != pools().end(); ++it) {
    if (it->second.pool != pool) continue;
    if (--it->second.references == 0) {
      pthreadpool_destroy(it->second.pool);
      pools().erase(it);
    }
    return;
  }
}

void park_workers(pthreadpool_t pool) {
  if (pool == nullptr) return;
  // An empty region whose flag sends every worker to a futex wait when it is done. The
  // range covers every thread: a range of 1 would run on the caller alone.
  pthreadpool_parallelize_1d(pool, do_nothing, nullptr, pthreadpool_get_threads_count(pool),
                             PTHREADPOOL_FLAG_YIELD_WORKERS);
}

void keep_cpuinfo_loaded() {
  static const bool pinned = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&cpuinfo_initialize), &info) == 0 || info.dli_fname == nullptr) return false;
    // RTLD_NOLOAD only takes a reference to the copy already mapped; RTLD_NODELETE makes
    // it stay when the last reference goes. The handle is deliberately never closed.
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
  }();
  (void)pinned;
}

}  // namespace plugrt::xnnpack
