// SPDX-License-Identifier: Apache-2.0
// The thread budget of a method: how many threads its backends may keep busy at once.
//
// The runtime owns it. Every delegate of a method gets the whole budget at init; the
// delegates run one after another, and the call that ends a backend's turn carries
// PLUGRT_EXECUTE_PARK_WORKERS, so that backend's idle workers sleep instead of spinning on
// the cores the next backend runs on. Each call may run on fewer threads than the budget
// (MethodOptions::adapt_threads, plugrt_execute_args.num_threads).
#ifndef PLUGRT_THREAD_BUDGET_H_
#define PLUGRT_THREAD_BUDGET_H_

#include <cstddef>

namespace plugrt {

/// The CPUs this process may run on (its affinity mask), at least 1.
size_t available_cores();

/// The budget for a request: `requested`, or available_cores() for 0.
size_t resolve_thread_budget(size_t requested);

}  // namespace plugrt

#endif  // PLUGRT_THREAD_BUDGET_H_
