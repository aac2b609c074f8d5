// SPDX-License-Identifier: Apache-2.0
#include "kit_plugin.h"

#include "kit_backend_options.h"
#include "plugrt/plugins/search_path.h"

namespace plugrt::sdk::testing::kit {

ContractConfig& config() {
  static ContractConfig instance;
  return instance;
}

/// The host the kit plays: this kit's own ABI, or an older minor (--host-abi).
HostAbi host_abi() {
  HostAbi abi;
  if (config().host_abi_minor >= 0) abi.minor = static_cast<uint32_t>(config().host_abi_minor);
  return abi;
}

std::string name_of(plugrt_status s) {
  return std::string(to_string(error_from_abi(s))) + " (" + std::to_string(s) + ")";
}
std::string text(plugrt_string s) { return s.data == nullptr ? std::string() : std::string(s.data, s.size); }

LoadedPlugin load_plugin(const plugrt_host_services* host) {
  LoadedPlugin plugin;
  Result<std::shared_ptr<plugins::PluginLibrary>> library = plugins::PluginLibrary::open(config().plugin_path);
  if (!library.is_ok()) {
    plugin.error = "dlopen failed: " + library.status().message();
    return plugin;
  }
  plugin.library = library.value();
  auto entry = reinterpret_cast<plugrt_plugin_entry_fn>(plugin.library->symbol(PLUGRT_PLUGIN_ENTRY_SYMBOL));
  if (entry == nullptr) {
    plugin.error = std::string("the plugin does not export ") + PLUGRT_PLUGIN_ENTRY_SYMBOL +
                   ": define it with PLUGRT_SDK_EXPORT_PLUGIN (or PLUGRT_PLUGIN_ENTRY)";
    return plugin;
  }
  plugrt_status status = entry(host, &plugin.descriptor);
  if (status != PLUGRT_STATUS_OK || plugin.descriptor == nullptr) {
    plugin.error = "the entry function failed with " + name_of(status);
    plugin.descriptor = nullptr;
  }
  return plugin;
}

ChildOutcome run_guarded(const std::function<std::string()>& body) {
  if (!config().isolated) return run_in_child(body);
  ChildOutcome outcome;
  outcome.exited = true;
  outcome.message = body();
  return outcome;
}

std::unique_ptr<IsolatedSession> register_isolated() {
  auto session = std::make_unique<IsolatedSession>();
  isolation::IsolationOptions options;
  options.backend_host = plugins::default_backend_host();
  Result<isolation::IsolatedRegistration> registered =
      isolation::register_isolated_plugin(session->registry, config().plugin_path, 0, options);
  if (!registered.is_ok()) {
    session->error = "the plugin does not start isolated: " + registered.status().to_string();
  } else {
    session->plugin = registered->plugin;
  }
  return session;
}

plugrt_init_args init_args(const std::vector<uint8_t>& blob) {
  plugrt_init_args args{};
  play_size(&args, host_abi().init_args_size());
  args.blob = blob.empty() ? nullptr : blob.data();
  args.blob_size = blob.size();
  give_init_options(&args);
  return args;
}

}  // namespace plugrt::sdk::testing::kit
