// SPDX-License-Identifier: Apache-2.0
// What every check of the contract kit shares: its settings (ContractConfig, the host it
// plays), the plugin loaded with a given host, or registered isolated, and init's args.
#ifndef PLUGRT_SDK_CONTRACT_KIT_PLUGIN_H_
#define PLUGRT_SDK_CONTRACT_KIT_PLUGIN_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host_abi.h"
#include "isolation.h"
#include "plugrt/isolation/isolated_plugin.h"
#include "plugrt/plugins/plugin_library.h"
#include "plugrt/plugrt_abi.h"
#include "plugrt/registry.h"
#include "plugrt/sdk/testing/contract.h"

namespace plugrt::sdk::testing::kit {

// Under AddressSanitizer resident memory grows with every load whatever the plugin does:
// freed memory waits in the sanitizer's quarantine (256 MiB by default) and the shadow of
// each unloaded copy stays mapped. There LeakSanitizer's report at exit is the leak check,
// and the resident-memory bound below is not applied.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kResidentMemoryIsMeaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kResidentMemoryIsMeaningful = false;
#else
constexpr bool kResidentMemoryIsMeaningful = true;
#endif
#else
constexpr bool kResidentMemoryIsMeaningful = true;
#endif

/// The kit's settings, set by run_contract_tests.
ContractConfig& config();
/// The host the kit plays: this kit's own ABI, or an older minor (--host-abi).
HostAbi host_abi();
/// "InvalidArgument (2)".
std::string name_of(plugrt_status s);
std::string text(plugrt_string s);

struct LoadedPlugin {
  std::shared_ptr<plugins::PluginLibrary> library;
  const plugrt_plugin_descriptor* descriptor = nullptr;
  std::string error;  // set when loading failed

  const plugrt_backend* backend(const std::string& name) const {
    for (size_t i = 0; descriptor != nullptr && i < descriptor->num_backends; ++i) {
      const plugrt_backend* b = descriptor->backends[i];
      if (b != nullptr && text(b->name) == name) return b;
    }
    return nullptr;
  }
};

LoadedPlugin load_plugin(const plugrt_host_services* host);

/// Runs a crash-prone check. In process, in a forked child, so a crash is a failure; with
/// --isolate the backend already runs in a process of its own (and a fork would not
/// carry the runtime's process-starting thread), so here.
ChildOutcome run_guarded(const std::function<std::string()>& body);

/// The plugin registered isolated, as the runtime's loader registers it with --isolate.
struct IsolatedSession {
  Registry registry;
  std::shared_ptr<isolation::IsolatedPlugin> plugin;
  std::string error;  // set when registering failed
};

std::unique_ptr<IsolatedSession> register_isolated();

/// init's args for `blob`, as the played host fills them (with the backend's options).
plugrt_init_args init_args(const std::vector<uint8_t>& blob);

}  // namespace plugrt::sdk::testing::kit

#endif  // PLUGRT_SDK_CONTRACT_KIT_PLUGIN_H_
