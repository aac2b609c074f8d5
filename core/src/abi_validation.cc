// SPDX-License-Identifier: Apache-2.0
#include "abi_validation.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "plugrt/names.h"

namespace plugrt::internal {
namespace {

// Bounds that no honest plugin comes near; past them a table is garbage.
constexpr size_t kMaxBackendsPerPlugin = 1024;
constexpr size_t kMaxStructSize = 64 * 1024;
constexpr size_t kMaxVersionLength = 31;
constexpr size_t kMaxDescriptionLength = 1024;

Status invalid(std::string message) { return Status(Error::kPluginInvalid, std::move(message)); }

std::string version_text(uint32_t major, uint32_t minor) { return std::to_string(major) + "." + std::to_string(minor); }

// The capability bits a plugin built for `minor` may set.
plugrt_backend_capabilities known_capabilities(uint32_t minor) {
  return PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE | (minor >= 5 ? PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS : 0);
}

// The smallest backend table a plugin built for `minor` may hand over.
size_t min_backend_size(uint32_t minor) { return minor >= 1 ? PLUGRT_BACKEND_SIZE_1_1 : PLUGRT_BACKEND_SIZE_1_0; }

// Reads a plugrt_string the plugin owns, refusing one whose pointer and size disagree.
Result<std::string> read_string(plugrt_string text, size_t max_size, const std::string& what) {
  if (text.size > max_size) {
    return invalid(what + " is " + std::to_string(text.size) + " bytes, more than the " + std::to_string(max_size) +
                   " allowed");
  }
  if (text.data == nullptr && text.size != 0) return invalid(what + " has a NULL pointer");
  return std::string(text.data == nullptr ? "" : text.data, text.size);
}

// Copies the first `struct_size` bytes the plugin wrote into a zeroed host struct, so
// fields from a newer minor are dropped and fields an older minor lacks read as zero.
template <typename T>
T copy_known_prefix(const T* source, size_t struct_size) {
  T copy;
  std::memset(&copy, 0, sizeof(copy));
  std::memcpy(&copy, source, std::min(struct_size, sizeof(T)));
  return copy;
}

Result<BackendTable> read_backend(const plugrt_backend* backend, uint32_t plugin_minor, size_t index) {
  const std::string where = "backend #" + std::to_string(index);
  if (backend == nullptr) return invalid(where + " is NULL");
  const size_t size = backend->struct_size;
  const size_t needed = min_backend_size(std::min<uint32_t>(plugin_minor, PLUGRT_ABI_MINOR));
  if (size < needed || size > kMaxStructSize) {
    return invalid(where + ": struct_size is " + std::to_string(size) + " bytes; a table for ABI " +
                   version_text(PLUGRT_ABI_MAJOR, plugin_minor) + " needs at least " + std::to_string(needed));
  }
  const plugrt_backend known = copy_known_prefix(backend, size);

  BackendTable table;
  PLUGRT_ASSIGN_OR_RETURN(table.name, read_string(known.name, kMaxNameLength, where + " name"));
  if (!is_valid_name(table.name)) {
    return invalid(where + " has the invalid name '" + table.name + "' (1 to 63 characters of a-z, 0-9 and _)");
  }
  const std::string named = "backend '" + table.name + "'";
  if (size >= PLUGRT_BACKEND_SIZE_1_1) {
    PLUGRT_ASSIGN_OR_RETURN(table.description,
                            read_string(known.description, kMaxDescriptionLength, named + " description"));
  }
  const std::pair<const char*, bool> required[] = {
      {"is_available", known.is_available != nullptr},
      {"init", known.init != nullptr},
      {"execute", known.execute != nullptr},
      {"destroy", known.destroy != nullptr},
  };
  for (const auto& [function, present] : required) {
    if (!present) return invalid(named + ": required function '" + function + "' is NULL");
  }
  // A bit means what the plugin's minor says: bits it could not know are dropped.
  table.capabilities = known.capabilities & known_capabilities(plugin_minor);
  table.context = known.context;
  table.is_available = known.is_available;
  table.init = known.init;
  table.execute = known.execute;
  table.destroy = known.destroy;

  if (known.aot != nullptr) {
    const size_t aot_size = known.aot->struct_size;
    if (aot_size < PLUGRT_AOT_BACKEND_SIZE_1_0 || aot_size > kMaxStructSize) {
      return invalid(named + ": AOT table struct_size is " + std::to_string(aot_size) + " bytes, at least " +
                     std::to_string(PLUGRT_AOT_BACKEND_SIZE_1_0) + " needed");
    }
    const plugrt_aot_backend aot = copy_known_prefix(known.aot, aot_size);
    if (aot.partition == nullptr || aot.preprocess == nullptr) {
      return invalid(named + ": an AOT table needs both 'partition' and 'preprocess'");
    }
    table.partition = aot.partition;
    table.preprocess = aot.preprocess;
  }
  return table;
}

}  // namespace

Result<PluginDescription> read_plugin_descriptor(const plugrt_plugin_descriptor* descriptor) {
  if (descriptor == nullptr) return invalid("the entry function returned no descriptor");
  const size_t size = descriptor->struct_size;
  if (size < PLUGRT_PLUGIN_DESCRIPTOR_SIZE_1_0 || size > kMaxStructSize) {
    return invalid("descriptor struct_size is " + std::to_string(size) + " bytes; at least " +
                   std::to_string(PLUGRT_PLUGIN_DESCRIPTOR_SIZE_1_0) + " needed");
  }
  const plugrt_plugin_descriptor known = copy_known_prefix(descriptor, size);

  PluginDescription description;
  description.abi_major = known.abi_major;
  description.abi_minor = known.abi_minor;
  if (known.abi_major != PLUGRT_ABI_MAJOR) {
    return Status(Error::kPluginAbiMismatch, "plugin built for ABI " + version_text(known.abi_major, known.abi_minor) +
                                                 ", this host implements ABI " +
                                                 version_text(PLUGRT_ABI_MAJOR, PLUGRT_ABI_MINOR) +
                                                 " (majors must match)");
  }
  PLUGRT_ASSIGN_OR_RETURN(description.name, read_string(known.name, kMaxNameLength, "plugin name"));
  if (!is_valid_name(description.name)) {
    return invalid("invalid plugin name '" + description.name + "' (1 to 63 characters of a-z, 0-9 and _)");
  }
  PLUGRT_ASSIGN_OR_RETURN(description.version, read_string(known.version, kMaxVersionLength, "plugin version"));
  if (description.version.empty()) return invalid("plugin version is empty");

  if (known.num_backends == 0) return invalid("the plugin provides no backends");
  if (known.num_backends > kMaxBackendsPerPlugin) {
    return invalid("num_backends is " + std::to_string(known.num_backends) + ", more than " +
                   std::to_string(kMaxBackendsPerPlugin));
  }
  if (known.backends == nullptr) return invalid("the backends array is NULL");

  std::set<std::string> seen;
  for (size_t i = 0; i < known.num_backends; ++i) {
    PLUGRT_ASSIGN_OR_RETURN(BackendTable table, read_backend(known.backends[i], known.abi_minor, i));
    if (!seen.insert(table.name).second) {
      return invalid("backend '" + table.name + "' is listed twice");
    }
    description.backends.push_back(std::move(table));
  }
  return description;
}

}  // namespace plugrt::internal
