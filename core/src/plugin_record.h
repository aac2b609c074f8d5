// SPDX-License-Identifier: Apache-2.0
// One registered plugin as the host holds it. Shared by the registry and by every
// RegisteredBackend and DelegateHandle taken from it; the last owner lets the code go.
#ifndef PLUGRT_CORE_PLUGIN_RECORD_H_
#define PLUGRT_CORE_PLUGIN_RECORD_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "abi_validation.h"
#include "plugrt/backend.h"
#include "plugrt/host_services.h"

namespace plugrt::internal {

struct PluginRecord {
  // Declared first so it is released last, after nothing can call into the code.
  std::shared_ptr<void> code;
  std::unique_ptr<PluginHostServices> host;
  PluginInfo info;
  std::vector<BackendTable> backends;

  /// Init failures per backend name, for reports. Recorded by RegisteredBackend::init.
  void record_init_failure(const std::string& backend, const Status& status) const {
    std::lock_guard<std::mutex> lock(init_failures_mutex_);
    InitFailures& failures = init_failures_[backend];
    ++failures.count;
    failures.last = status;
  }
  InitFailures init_failures(const std::string& backend) const {
    std::lock_guard<std::mutex> lock(init_failures_mutex_);
    auto found = init_failures_.find(backend);
    return found == init_failures_.end() ? InitFailures{} : found->second;
  }

 private:
  mutable std::mutex init_failures_mutex_;
  mutable std::map<std::string, InitFailures> init_failures_;
};

}  // namespace plugrt::internal

#endif  // PLUGRT_CORE_PLUGIN_RECORD_H_
