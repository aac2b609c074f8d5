// SPDX-License-Identifier: Apache-2.0
#include "src/threading.h"

#include <climits>

#include <dlfcn.h>

#include <oneapi/dnnl/dnnl.hpp>

#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
#include <omp.h>
#endif

namespace plugrt::onednn {

#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP

int resolve_thread_count(size_t requested) {
  if (requested == 0) return omp_get_max_threads();
  return requested > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(requested);
}

ThreadLimit::ThreadLimit(int threads) : previous_(omp_get_max_threads()), changed_(threads != previous_) {
  if (changed_) omp_set_num_threads(threads);
}

ThreadLimit::~ThreadLimit() {
  if (changed_) omp_set_num_threads(previous_);
}

void run_on_fewer_threads(int threads, void (*body)(void*), void* context) {
  if (threads < 1 || omp_in_parallel()) {
    body(context);
    return;
  }
  ThreadLimit limit(threads);
#ifdef _OPENMP
  // One team, on the calling thread: the region only sets the limit for what it runs.
#pragma omp teams num_teams(1) thread_limit(threads)
  body(context);
#else
  body(context);  // without OpenMP's compiler support only the limit of parallel_nd applies
#endif
}

const char* cpu_runtime_name() { return "OpenMP"; }

#else
// Other runtimes (TBB, threadpool, sequential) are not capped per call here: the
// handle runs with whatever the runtime gives it. README.md says so.

int resolve_thread_count(size_t requested) {
  return requested > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(requested);
}

ThreadLimit::ThreadLimit(int) : previous_(0), changed_(false) {}
ThreadLimit::~ThreadLimit() = default;

void run_on_fewer_threads(int, void (*body)(void*), void* context) { body(context); }

const char* cpu_runtime_name() {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_TBB
  return "TBB";
#elif DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_SEQ
  return "sequential";
#else
  return "threadpool";
#endif
}

#endif

void keep_onednn_loaded() {
  static const bool pinned = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&dnnl_engine_get_count), &info) == 0 || info.dli_fname == nullptr) return false;
    // RTLD_NOLOAD takes a reference to the copy already mapped; RTLD_NODELETE keeps it
    // mapped when the last reference goes. The handle is deliberately never closed.
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
  }();
  (void)pinned;
}

}  // namespace plugrt::onednn
