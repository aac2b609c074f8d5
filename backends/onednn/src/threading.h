// SPDX-License-Identifier: Apache-2.0
// Capping oneDNN's threads for one handle. Debian's oneDNN 2.x uses the OpenMP runtime
// (DNNL_CPU_RUNTIME == OMP): a primitive sizes its work split from the calling
// thread's OpenMP thread limit when it is created, and opens its parallel regions
// with that limit when it runs. So a handle sets the limit on the calling thread while
// it builds its primitives (init) and again around every execute, then puts the
// caller's own value back. omp_set_num_threads only changes the calling thread's
// setting: handles on other threads, with other counts, are not affected.
#ifndef PLUGRT_BACKENDS_ONEDNN_SRC_THREADING_H_
#define PLUGRT_BACKENDS_ONEDNN_SRC_THREADING_H_

#include <cstddef>

namespace plugrt::onednn {

/// The thread count a handle runs with: `requested`, or for 0 the OpenMP default of the
/// process (OMP_NUM_THREADS when set, otherwise one per core).
int resolve_thread_count(size_t requested);

/// Sets the calling thread's OpenMP thread limit for the scope's lifetime.
class ThreadLimit {
 public:
  explicit ThreadLimit(int threads);
  ~ThreadLimit();
  ThreadLimit(const ThreadLimit&) = delete;
  ThreadLimit& operator=(const ThreadLimit&) = delete;

 private:
  int previous_;
  bool changed_;
};

/// Runs `body` on at most `threads` threads, although the primitives it runs were made
/// for the handle's larger count (a call the host gives fewer threads: ABI 1.7). A
/// primitive plans its work split for a thread count when it is made and asks OpenMP for
/// exactly that team when it runs; a thread limit caps the team instead (OpenMP's
/// thread-limit-var, set by a host `teams` region around the call), and oneDNN then runs
/// each parallel region as thread 0 of a team of one, the same call it makes when it is
/// called from inside a parallel region. Below one or inside a parallel region, `body`
/// runs unchanged. `body(context)` must not throw; nothing here allocates.
void run_on_fewer_threads(int threads, void (*body)(void*), void* context);

/// How this oneDNN build schedules its threads, for messages ("OpenMP", "TBB", ...).
const char* cpu_runtime_name();

/// Keeps libdnnl (and with it libgomp) loaded for the rest of the process. OpenMP's
/// worker threads outlive every handle, parked in libgomp's code with thread-local
/// storage of both libraries; unloading this plugin must not unmap those under them.
/// Call before the first oneDNN call.
void keep_onednn_loaded();

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_THREADING_H_
