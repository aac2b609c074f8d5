// SPDX-License-Identifier: Apache-2.0
#include "plugin_session.h"

#include "plugrt/plugins/plugin_metadata.h"

namespace plugrt::contract_runner {

namespace {

/// A runtime of the plugin at `path` alone, isolated or not.
Result<std::unique_ptr<Runtime>> runtime_of(const std::string& path, bool isolated) {
  PLUGRT_ASSIGN_OR_RETURN(RuntimeOptions options, RuntimeOptions::from_environment());
  options.builtin_backends = false;
  options.plugins.search = false;
  options.plugins.plugin_files = {path};
  options.plugins.isolate = isolated ? std::vector<std::string>{"all"} : std::vector<std::string>{};
  return Runtime::create(options);
}

}  // namespace

Result<std::unique_ptr<PluginSession>> PluginSession::open(const std::string& path, const std::string& backend,
                                                           bool isolated) {
  std::unique_ptr<PluginSession> session(new PluginSession());
  PLUGRT_ASSIGN_OR_RETURN(plugins::PluginFileInfo info, plugins::inspect_plugin_file(path));
  PLUGRT_ASSIGN_OR_RETURN(session->runtime_, runtime_of(path, false));
  if (isolated) {
    PLUGRT_ASSIGN_OR_RETURN(session->isolated_, runtime_of(path, true));
  }
  for (const std::string& name : info.metadata.backends) {
    if (!backend.empty() && name != backend) continue;
    PLUGRT_ASSIGN_OR_RETURN(plugrt::RegisteredBackend found, session->registry().find_backend(name));
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
