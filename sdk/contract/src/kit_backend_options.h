// SPDX-License-Identifier: Apache-2.0
// The compile specs and runtime options the kit gives a backend (--compile-spec and
// --runtime-option NAME.KEY=VALUE), as `plugrt compile --backend-option` and
// `plugrt run --backend-option` give them: partition and preprocess get the backend's
// compile specs, every init its compile specs and runtime options.
#ifndef PLUGRT_SDK_CONTRACT_KIT_BACKEND_OPTIONS_H_
#define PLUGRT_SDK_CONTRACT_KIT_BACKEND_OPTIONS_H_

#include <string>
#include <vector>

#include "plugrt/plugrt_abi.h"

namespace plugrt::sdk::testing {

/// Parses the flags' texts. Returns "" or what is wrong: a malformed text, or one that
/// names a backend `plugin_backends` lacks.
std::string set_kit_backend_options(const std::vector<std::string>& compile_specs,
                                    const std::vector<std::string>& runtime_options,
                                    const std::vector<std::string>& plugin_backends);

/// The backend whose options the calls below give (each check sets it up first).
void select_kit_backend(const std::string& backend);
const std::vector<plugrt_option>& kit_compile_specs();
const std::vector<plugrt_option>& kit_runtime_options();

/// Sets a partition's, preprocess's or init's compile specs.
template <typename Args>
void give_compile_specs(Args* args) {
  const std::vector<plugrt_option>& specs = kit_compile_specs();
  args->compile_specs = specs.empty() ? nullptr : specs.data();
  args->num_compile_specs = specs.size();
}

/// Sets init's compile specs and runtime options.
inline void give_init_options(plugrt_init_args* args) {
  give_compile_specs(args);
  const std::vector<plugrt_option>& options = kit_runtime_options();
  args->runtime_options = options.empty() ? nullptr : options.data();
  args->num_runtime_options = options.size();
}

}  // namespace plugrt::sdk::testing

#endif  // PLUGRT_SDK_CONTRACT_KIT_BACKEND_OPTIONS_H_
