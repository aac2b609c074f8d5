// SPDX-License-Identifier: Apache-2.0
// Registering an isolated plugin: one backend host process describes the plugin (and
// exits), then proxy tables for its backends are registered like any plugin's.
#include "plugrt/isolation/isolated_plugin.h"

#include "backend_host_process.h"
#include "isolated_plugin_internal.h"

namespace plugrt::isolation {
namespace {

// Registry::register_plugin takes a plain entry function; the descriptor it must hand
// back is passed beside it, on the registering thread.
thread_local const plugrt_plugin_descriptor* t_pending_descriptor = nullptr;

plugrt_status proxy_entry(const plugrt_host_services* host, const plugrt_plugin_descriptor** descriptor) {
  (void)host;
  if (t_pending_descriptor == nullptr) return PLUGRT_STATUS_INVALID_STATE;
  *descriptor = t_pending_descriptor;
  return PLUGRT_STATUS_OK;
}

constexpr size_t kMaxText = 4096;

Result<std::shared_ptr<IsolatedPlugin>> describe(const std::string& path, const IsolationOptions& options) {
  PLUGRT_ASSIGN_OR_RETURN(std::unique_ptr<BackendHostProcess> process, BackendHostProcess::start(path, options));
  Frame response;
  PLUGRT_RETURN_IF_ERROR(
      process->call(CallKind::kDescribe, {}, -1, options.init_timeout_ms, "--init-timeout-ms", &response));
  PayloadReader reader(response.payload);
  std::string message;
  if (response.header.status != PLUGRT_STATUS_OK) {
    reader.bytes(&message, kMaxText);
    return Status(error_from_abi(response.header.status), message);
  }
  auto plugin = std::make_shared<IsolatedPlugin>();
  plugin->path = path;
  plugin->options = options;
  uint32_t num_backends = 0;
  reader.bytes(&plugin->name, kMaxText);
  reader.bytes(&plugin->version, kMaxText);
  reader.u32(&plugin->abi_major);
  reader.u32(&plugin->abi_minor);
  reader.u32(&num_backends);
  if (!reader.ok() || num_backends == 0 || num_backends > 256) {
    return Status(Error::kPluginInvalid, "the backend host's description of the plugin is malformed");
  }
  for (uint32_t i = 0; i < num_backends; ++i) {
    auto backend = std::make_unique<ProxyBackend>();
    uint64_t capabilities = 0;
    uint32_t available = 0;
    reader.bytes(&backend->name, kMaxText);
    reader.bytes(&backend->description, kMaxText);
    reader.u64(&capabilities);
    reader.u32(&available);
    reader.bytes(&backend->unavailable_reason, kMaxText);
    // One process serves one handle, one call at a time: the host serialises them.
    backend->capabilities = capabilities & ~PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE;
    backend->available = available != 0;
    backend->plugin = plugin.get();
    plugin->backends.push_back(std::move(backend));
  }
  if (!reader.at_end()) {
    return Status(Error::kPluginInvalid, "the backend host's description of the plugin is malformed");
  }
  return plugin;
}

}  // namespace

void IsolatedPlugin::record_crash(const std::string& backend, const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  CrashRecord& record = crashes_[backend];
  ++record.count;
  record.last = message;
}

std::vector<std::pair<std::string, CrashRecord>> IsolatedPlugin::crashes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {crashes_.begin(), crashes_.end()};
}

const plugrt_backend* proxy_table(const IsolatedPlugin& plugin, std::string_view name) {
  for (const auto& backend : plugin.backends) {
    if (backend->name == name) return &backend->table;
  }
  return nullptr;
}

std::vector<std::pair<std::string, CrashRecord>> crash_records(const IsolatedPlugin& plugin) {
  return plugin.crashes();
}

Result<IsolatedRegistration> register_isolated_plugin(Registry& registry, const std::string& path, int64_t rank,
                                                      const IsolationOptions& options) {
  Result<std::shared_ptr<IsolatedPlugin>> described = describe(path, options);
  if (!described.is_ok()) return described.status().with_context(path + ": isolated");
  std::shared_ptr<IsolatedPlugin> plugin = std::move(described).value();
  for (const auto& backend : plugin->backends) {
    fill_proxy_table(backend.get());
    plugin->tables.push_back(&backend->table);
  }
  plugrt_plugin_descriptor& d = plugin->descriptor;
  d.struct_size = sizeof(d);
  d.abi_major = plugin->abi_major;
  d.abi_minor = plugin->abi_minor;
  d.name = {plugin->name.data(), plugin->name.size()};
  d.version = {plugin->version.data(), plugin->version.size()};
  d.backends = plugin->tables.data();
  d.num_backends = plugin->tables.size();

  PluginSource source;
  source.origin = path;
  source.code = plugin;
  source.rank = rank;
  source.isolated = true;
  t_pending_descriptor = &plugin->descriptor;
  Result<PluginId> id = registry.register_plugin(proxy_entry, std::move(source));
  t_pending_descriptor = nullptr;
  if (!id.is_ok()) return id.status();
  return IsolatedRegistration{*id, std::move(plugin)};
}

}  // namespace plugrt::isolation
