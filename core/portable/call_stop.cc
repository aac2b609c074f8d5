// SPDX-License-Identifier: Apache-2.0
#include "call_stop.h"

namespace plugrt::portable {
namespace {

struct RunningCall {
  const sdk::Arguments* args = nullptr;
  bool stopped = false;
};
thread_local RunningCall running;

}  // namespace

CallStopScope::CallStopScope(const sdk::Arguments& args) { running = RunningCall{&args, false}; }

CallStopScope::~CallStopScope() { running = RunningCall{}; }

bool CallStopScope::stopped() const { return running.stopped; }

bool stop_requested() {
  if (running.args == nullptr || !running.args->stop_requested()) return false;
  running.stopped = true;
  return true;
}

}  // namespace plugrt::portable
