// One registered plugin as the host holds it. Shared by the registry and by every
// Backend and DelegateHandle taken from it; the last owner lets the code go.
#ifndef PLUGRT_CORE_PLUGIN_RECORD_H_
#define PLUGRT_CORE_PLUGIN_RECORD_H_

#include <memory>
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
};

}  // namespace plugrt::internal

#endif  // PLUGRT_CORE_PLUGIN_RECORD_H_
