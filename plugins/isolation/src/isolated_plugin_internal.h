// SPDX-License-Identifier: Apache-2.0
// The host-side objects behind an isolated plugin: the proxy backend tables the registry
// holds, and what they share.
#ifndef PLUGRT_ISOLATION_ISOLATED_PLUGIN_INTERNAL_H_
#define PLUGRT_ISOLATION_ISOLATED_PLUGIN_INTERNAL_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugrt/isolation/isolated_plugin.h"
#include "plugrt/plugrt_abi.h"

namespace plugrt::isolation {

/// One backend of an isolated plugin: the proxy table and what it answers for itself.
struct ProxyBackend {
  IsolatedPlugin* plugin = nullptr;
  std::string name;
  std::string description;
  plugrt_backend_capabilities capabilities = 0;
  bool available = false;
  std::string unavailable_reason;
  plugrt_backend table{};
};

class IsolatedPlugin {
 public:
  std::string path;
  IsolationOptions options;
  std::string name;
  std::string version;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::vector<std::unique_ptr<ProxyBackend>> backends;
  std::vector<const plugrt_backend*> tables;
  plugrt_plugin_descriptor descriptor{};

  void record_crash(const std::string& backend, const std::string& message);
  std::vector<std::pair<std::string, CrashRecord>> crashes() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, CrashRecord> crashes_;
};

/// Fills `backend->table` with the proxy functions (proxy_backend.cc).
void fill_proxy_table(ProxyBackend* backend);

}  // namespace plugrt::isolation

#endif  // PLUGRT_ISOLATION_ISOLATED_PLUGIN_INTERNAL_H_
