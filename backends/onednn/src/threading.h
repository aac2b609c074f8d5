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

/// The end of a turn (PLUGRT_EXECUTE_PARK_WORKERS): another backend is about to run on
/// the same cores, so the calling thread's OpenMP workers must not keep spinning.
void park_workers();

/// How this oneDNN build schedules its threads, for messages ("OpenMP", "TBB", ...).
const char* cpu_runtime_name();

/// Keeps libdnnl (and with it libgomp) loaded for the rest of the process. OpenMP's
/// worker threads outlive every handle, parked in libgomp's code with thread-local
/// storage of both libraries; unloading this plugin must not unmap those under them.
/// Call before the first oneDNN call.
void keep_onednn_loaded();

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_THREADING_H_
