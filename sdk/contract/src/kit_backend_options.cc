// SPDX-License-Identifier: Apache-2.0
#include "kit_backend_options.h"

#include "plugrt/backend_options.h"

namespace plugrt::sdk::testing {

namespace {

struct KitOptions {
  BackendOptions compile_specs, runtime_options;
  std::vector<plugrt_option> selected_specs, selected_options;
};

KitOptions& kit() {
  static KitOptions instance;
  return instance;
}

std::string parse(const std::vector<std::string>& texts, const char* flag, const std::vector<std::string>& backends,
                  BackendOptions* out) {
  if (Status added = out->add_all(texts); !added.is_ok()) return std::string(flag) + ": " + added.message();
  if (backends.empty()) return "";  // an unreadable plugin: the checks say why
  for (const std::string& name : out->backends()) {
    bool known = false;
    for (const std::string& backend : backends) known = known || backend == name;
    if (!known) return std::string(flag) + " names backend '" + name + "', which this plugin does not provide";
  }
  return "";
}

}  // namespace

std::string set_kit_backend_options(const std::vector<std::string>& compile_specs,
                                    const std::vector<std::string>& runtime_options,
                                    const std::vector<std::string>& plugin_backends) {
  kit() = KitOptions{};
  std::string error = parse(compile_specs, "--compile-spec", plugin_backends, &kit().compile_specs);
  if (error.empty()) error = parse(runtime_options, "--runtime-option", plugin_backends, &kit().runtime_options);
  return error;
}

void select_kit_backend(const std::string& backend) {
  kit().selected_specs = kit().compile_specs.for_backend(backend);
  kit().selected_options = kit().runtime_options.for_backend(backend);
}

const std::vector<plugrt_option>& kit_compile_specs() { return kit().selected_specs; }
const std::vector<plugrt_option>& kit_runtime_options() { return kit().selected_options; }

}  // namespace plugrt::sdk::testing
