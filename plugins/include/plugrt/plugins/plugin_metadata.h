// SPDX-License-Identifier: Apache-2.0
// Reading a plugin's metadata record (plugrt_plugin_metadata in PLUGRT_METADATA_SECTION)
// and the facts about a plugin file, without loading it or running any of its code.
#ifndef PLUGRT_PLUGINS_PLUGIN_METADATA_H_
#define PLUGRT_PLUGINS_PLUGIN_METADATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plugrt/plugins/elf_image.h"
#include "plugrt/status.h"

namespace plugrt::plugins {

/// A plugin's metadata record, checked and copied out of the file.
struct PluginMetadata {
  /// The ABI version the plugin was built with. Not judged here: the loader decides.
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  /// A valid name (is_valid_name) and a non-empty printable version ("1.4.2").
  std::string name;
  std::string version;
  /// At least one valid, distinct backend name, in the order the plugin lists them.
  std::vector<std::string> backends;
};

/// Reads and checks the metadata record in `image`'s PLUGRT_METADATA_SECTION. Reads the
/// version 1 prefix of a record that a newer plugin made larger.
/// Errors: kPluginInvalid, saying precisely what is wrong: no such section ("not a
/// plugrt plugin"), too small, bad magic, bad metadata_size or metadata_version, text
/// fields not NUL-terminated, invalid or duplicate names, backend count not matching the
/// names stored.
[[nodiscard]] Result<PluginMetadata> read_plugin_metadata(const ElfImage& image);

/// The facts about one plugin file, for listing, choosing and `plugrt doctor`.
struct PluginFileInfo {
  std::string path;
  uint16_t machine = 0;  ///< e_machine, always host_elf_machine() in a returned value
  PluginMetadata metadata;
  /// True when the file exports `plugrt_plugin_entry_v<metadata.abi_major>`.
  bool has_entry_symbol = false;
  /// ElfImage::exported_symbols() and needed_libraries() of the file.
  std::vector<std::string> exported_symbols;
  std::vector<std::string> needed_libraries;
};

/// Maps `path` and reports what it is, without dlopen: checks that it is a shared object
/// built for this host's machine and ELF class, and reads its metadata. It does not judge
/// ABI compatibility (the loader does, from metadata.abi_major/minor).
/// Errors (every message starts with "<path>: "): kAccessFailed when the file cannot be
/// read (MappedFile::open); kPluginInvalid when it is not a valid ELF file, is built for
/// another target ("built for AArch64 (64-bit), this host is x86-64 (64-bit)"), is not a
/// shared object, or has no valid metadata record.
[[nodiscard]] Result<PluginFileInfo> inspect_plugin_file(const std::string& path);

}  // namespace plugrt::plugins

#endif  // PLUGRT_PLUGINS_PLUGIN_METADATA_H_
