#include "plugrt/builtin_backends.h"

#include <limits>

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

const Backend& builtin_portable_backend() {
  // Leaked on purpose: method instances may outlive static destruction order.
  static const Backend* const backend = [] {
    auto* registry = new Registry();
    Status status = register_builtin_backends(*registry);
    (void)status;  // the built-in table is validated by tests; it cannot fail here
    return new Backend(registry->find_registered_backend(kPortableBackendName).value());
  }();
  return *backend;
}

}  // namespace plugrt
