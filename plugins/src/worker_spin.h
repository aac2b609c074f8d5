// SPDX-License-Identifier: Apache-2.0
// How long a plugin's idle worker threads spin before they sleep. Worker pools spin so
// that the next parallel region starts at once; while they spin they hold a core that
// another backend of the method, another method or another process needs. The host
// bounds the spin of the pools it can reach before they start: libgomp's (oneDNN's
// OpenMP runtime), which reads GOMP_SPINCOUNT once, when it is loaded.
#ifndef PLUGRT_PLUGINS_SRC_WORKER_SPIN_H_
#define PLUGRT_PLUGINS_SRC_WORKER_SPIN_H_

#include <cstdint>

namespace plugrt::plugins {

/// The spin budget when PLUGRT_SPIN_US does not set one, in microseconds. Long enough that
/// the gaps between one call's parallel regions, and between calls run back to back, find
/// the workers awake; short enough that a worker whose region waits on a preempted
/// teammate, or whose process is idle, gives the core back soon when another process wants
/// it (bench/shared_cores.py; docs/benchmarks.md, "Shared cores").
constexpr uint64_t kDefaultSpinMicroseconds = 100;

/// Before the first plugin loads: unless the environment already says how OpenMP waits
/// (GOMP_SPINCOUNT or OMP_WAIT_POLICY) or libgomp is loaded (it has read it then), sets
/// GOMP_SPINCOUNT to the pause instructions this CPU runs in PLUGRT_SPIN_US microseconds
/// (default kDefaultSpinMicroseconds). Once per process; the later calls do nothing. The
/// plugin loader calls it when it is made (an application makes it before its threads run
/// models: setenv is not safe against other threads' getenv) and before each dlopen.
void bound_worker_spinning();

/// The pause instructions this CPU runs in `microseconds`, measured (at least 1).
uint64_t pauses_in(uint64_t microseconds);

}  // namespace plugrt::plugins

#endif  // PLUGRT_PLUGINS_SRC_WORKER_SPIN_H_
