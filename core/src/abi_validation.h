// SPDX-License-Identifier: Apache-2.0
// Checking what a plugin's entry function hands back, and copying it into host-owned
// tables that have every field this host knows (absent ones zero), whichever minor
// version the plugin was built with.
#ifndef PLUGRT_CORE_ABI_VALIDATION_H_
#define PLUGRT_CORE_ABI_VALIDATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plugrt/plugrt_abi.h"
#include "plugrt/status.h"

namespace plugrt::internal {

/// One backend table, as this host reads it.
struct BackendTable {
  std::string name;
  std::string description;  // empty when the plugin predates ABI 1.1
  plugrt_backend_capabilities capabilities = 0;
  void* context = nullptr;
  decltype(plugrt_backend::is_available) is_available = nullptr;
  decltype(plugrt_backend::init) init = nullptr;
  decltype(plugrt_backend::execute) execute = nullptr;
  decltype(plugrt_backend::destroy) destroy = nullptr;
  decltype(plugrt_aot_backend::partition) partition = nullptr;    // null without AOT
  decltype(plugrt_aot_backend::preprocess) preprocess = nullptr;  // null without AOT
};

/// A plugin descriptor, as this host reads it.
struct PluginDescription {
  std::string name;
  std::string version;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::vector<BackendTable> backends;
};

/// Validates `descriptor` (sizes, ABI major, names, required functions) and copies it.
/// Errors: kPluginAbiMismatch for another major, kPluginInvalid for everything else;
/// each message names the field and what is wrong with it.
Result<PluginDescription> read_plugin_descriptor(const plugrt_plugin_descriptor* descriptor);

}  // namespace plugrt::internal

#endif  // PLUGRT_CORE_ABI_VALIDATION_H_
