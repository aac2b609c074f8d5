// SPDX-License-Identifier: Apache-2.0
// Whether the call running on this thread was asked to stop (plugrt_execute_args's
// stop_flag and deadline_ns, ABI 1.8). The delegate's execute sets the call for its
// thread; the kernels that may run long (Loop, Scan) ask between iterations.
#ifndef PLUGRT_PORTABLE_CALL_STOP_H_
#define PLUGRT_PORTABLE_CALL_STOP_H_

#include "plugrt/sdk/tensor.h"

namespace plugrt::portable {

/// Makes `args` this thread's running call until destroyed, and notes whether a kernel
/// stopped for it.
class CallStopScope {
 public:
  explicit CallStopScope(const sdk::Arguments& args);
  ~CallStopScope();
  CallStopScope(const CallStopScope&) = delete;
  CallStopScope& operator=(const CallStopScope&) = delete;

  /// Whether a kernel stopped this call because it was asked to.
  bool stopped() const;
};

/// True when this thread's running call was asked to stop; the kernel that asks then
/// fails, and the call reports PLUGRT_STATUS_CANCELLED. False outside a call.
bool stop_requested();

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_CALL_STOP_H_
