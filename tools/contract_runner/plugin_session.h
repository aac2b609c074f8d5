// SPDX-License-Identifier: Apache-2.0
// What both correctness modes of the kit start with: a runtime holding only the plugin
// under test, loaded from its path (no search path, no built-in backend, so a plugin that
// provides "portable" is the one checked; the compiler's own portable backend still takes
// what no backend does, which these modes then refuse); with --isolate, a second runtime
// where it runs isolated. Both take the environment's other settings (PLUGRT_LOG, the
// allow-list) as every runtime does.
#ifndef PLUGRT_TOOLS_CONTRACT_RUNNER_PLUGIN_SESSION_H_
#define PLUGRT_TOOLS_CONTRACT_RUNNER_PLUGIN_SESSION_H_

#include <memory>
#include <string>
#include <vector>

#include "plugrt/registry.h"
#include "plugrt/runtime/runtime.h"

namespace plugrt::contract_runner {

class PluginSession {
 public:
  /// Loads the plugin at `path`. `backend`: the one to check, or empty for each the
  /// plugin provides. Errors name the file and say why.
  /// `isolated`: methods run the plugin in plugrt-backend-host processes (run_registry()).
  static Result<std::unique_ptr<PluginSession>> open(const std::string& path, const std::string& backend,
                                                     bool isolated = false);

  /// Where models are compiled: the plugin in process (partition and preprocess).
  Registry& registry() { return runtime_->registry(); }
  /// Where methods are loaded: the plugin isolated with --isolate, else registry().
  Registry& run_registry() { return (isolated_ ? isolated_ : runtime_)->registry(); }
  /// The backends to check, in the plugin's order; each is available here.
  const std::vector<std::string>& backends() const { return backends_; }

 private:
  PluginSession() = default;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<Runtime> isolated_;
  std::vector<std::string> backends_;
};

}  // namespace plugrt::contract_runner

#endif  // PLUGRT_TOOLS_CONTRACT_RUNNER_PLUGIN_SESSION_H_
