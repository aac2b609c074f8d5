// SPDX-License-Identifier: Apache-2.0
// The process-wide pthreadpools the XNNPACK runtimes share.
#ifndef PLUGRT_BACKENDS_XNNPACK_SRC_THREADPOOL_H_
#define PLUGRT_BACKENDS_XNNPACK_SRC_THREADPOOL_H_

#include <cstddef>

#include <pthreadpool.h>

namespace plugrt::xnnpack {

/// The thread count a handle runs with: `requested`, or for 0 the number of cores
/// cpuinfo reports (1 when it cannot tell).
size_t resolve_thread_count(size_t requested);

/// A reference to the process's pool of `threads` threads: one pool per distinct count,
/// created by the first handle that asks for it and destroyed when the last handle
/// holding it releases it (so unloading the plugin leaves no thread behind). One thread
/// needs no pool: acquire(1) returns nullptr, and XNNPACK then runs on the caller's
/// thread. pthreadpool serialises the parallel regions of handles that share a pool.
pthreadpool_t acquire_threadpool(size_t threads);
void release_threadpool(pthreadpool_t pool);

/// Puts the pool's workers to sleep now, instead of leaving them spin-waiting for the
/// next parallel region (pthreadpool spins a million pause instructions, tens of
/// milliseconds, before it sleeps): one empty region whose flag sends each worker to a
/// futex wait. For the end of every call on the pool. The next region wakes them.
void park_workers(pthreadpool_t pool);

/// Keeps libcpuinfo loaded for the rest of the process. cpuinfo_initialize (which
/// xnn_initialize calls) allocates cpuinfo's tables once and never frees them; if
/// unloading this plugin also unloaded cpuinfo, every later load of the plugin would
/// allocate them again and leak the previous copy. Call before xnn_initialize.
void keep_cpuinfo_loaded();

}  // namespace plugrt::xnnpack

#endif  // PLUGRT_BACKENDS_XNNPACK_SRC_THREADPOOL_H_
