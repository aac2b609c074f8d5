// SPDX-License-Identifier: Apache-2.0
#include "plugin_session.h"

#include "plugrt/plugins/plugin_metadata.h"

namespace plugrt::contract_runner {

namespace {

// Only the plugin named: no search path, so no other plugin can stand in for it.
plugins::SearchPathOptions nowhere() {
  plugins::SearchPathOptions options;
  options.use_environment = options.use_install_directory = options.use_executable_directory = false;
  return options;
}

plugins::SearchPathOptions isolating_all() {
  plugins::SearchPathOptions options = nowhere();
  options.isolated_backends = {"all"};
  return options;
}

}  // namespace

struct PluginSession::Isolated {
  Isolated() : registry(HostEnvironment::from_environment()), loader(registry, isolating_all()) {}
  Registry registry;
  plugins::PluginLoader loader;
};

PluginSession::PluginSession() : registry_(HostEnvironment::from_environment()), loader_(registry_, nowhere()) {}
PluginSession::~PluginSession() = default;

Registry& PluginSession::run_registry() { return isolated_ ? isolated_->registry : registry_; }

Result<std::unique_ptr<PluginSession>> PluginSession::open(const std::string& path, const std::string& backend,
                                                           bool isolated) {
  std::unique_ptr<PluginSession> session(new PluginSession());
  PLUGRT_ASSIGN_OR_RETURN(plugins::PluginFileInfo info, plugins::inspect_plugin_file(path));
  Result<PluginId> loaded = session->loader_.load(path);
  if (!loaded.is_ok()) return loaded.status();
  if (isolated) {
    session->isolated_ = std::make_unique<Isolated>();
    Result<PluginId> isolated_id = session->isolated_->loader.load(path);
    if (!isolated_id.is_ok()) return isolated_id.status();
  }
  for (const std::string& name : info.metadata.backends) {
    if (!backend.empty() && name != backend) continue;
    PLUGRT_ASSIGN_OR_RETURN(plugrt::RegisteredBackend found, session->registry_.find_backend(name));
    if (!found.has_aot()) {
      return plugrt::Status(Error::kNotSupported,
                            path + ": backend '" + name +
                                "' has no ahead-of-time table (partition/preprocess): the kit cannot "
                                "compile models for it");
    }
    const plugrt::Availability availability = found.is_available();
    if (!availability.available) {
      return plugrt::Status(Error::kDelegateUnavailable,
                            path + ": backend '" + name + "' is unavailable here: " + availability.reason);
    }
    session->backends_.push_back(name);
  }
  if (session->backends_.empty()) {
    return plugrt::Status(Error::kNotFound, path + ": the plugin has no backend named '" + backend + "'");
  }
  return session;
}

}  // namespace plugrt::contract_runner
