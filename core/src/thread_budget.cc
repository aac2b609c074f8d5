// SPDX-License-Identifier: Apache-2.0
#include "plugrt/thread_budget.h"

#include <sched.h>
#include <unistd.h>

namespace plugrt {

size_t available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return static_cast<size_t>(count);
  }
  // More CPUs than a cpu_set_t holds, or no affinity support: what is online.
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<size_t>(online) : 1;
}

size_t resolve_thread_budget(size_t requested) { return requested != 0 ? requested : available_cores(); }

}  // namespace plugrt
