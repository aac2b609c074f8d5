// SPDX-License-Identifier: Apache-2.0
#include "plugrt/builtin_backends.h"

#include <limits>

#include "compiled_graph.h"

extern "C" plugrt_status plugrt_static_entry_portable(const plugrt_host_services* host,
                                                      const plugrt_plugin_descriptor** descriptor);

namespace plugrt {

namespace {
// Plugin files get ranks >= 0 from the loader; built-ins come first.
constexpr int64_t kBuiltinRank = std::numeric_limits<int64_t>::min();
}  // namespace

Status register_builtin_backends(Registry& registry) {
  PluginSource source;
  source.origin = "built-in";
  source.rank = kBuiltinRank;
  PLUGRT_RETURN_IF_ERROR(registry.register_plugin(plugrt_static_entry_portable, std::move(source)));
  return Status::ok();
}

const RegisteredBackend& builtin_portable_backend() {
  // Never destroyed: method instances may outlive static destruction order.
  static Registry* const registry = [] {
    auto* builtins = new Registry();
    Status status = register_builtin_backends(*builtins);
    (void)status;  // the built-in table is validated by tests; it cannot fail here
    return builtins;
  }();
  static const RegisteredBackend* const backend =
      new RegisteredBackend(registry->find_registered_backend(kPortableBackendName).value());
  return *backend;
}

Result<std::vector<std::string>> portable_node_support(Span<const uint8_t> graph) {
  std::string error;
  std::vector<std::string> reasons = portable::node_support(graph.data(), graph.size(), &error);
  if (!error.empty()) return Status(Error::kInvalidArgument, error);
  return reasons;
}

}  // namespace plugrt
