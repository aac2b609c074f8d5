// SPDX-License-Identifier: Apache-2.0
#include "plugrt/plugins/plugin_metadata.h"

#include <cstddef>
#include <cstring>
#include <string_view>
#include <utility>

#include "plugrt/mapped_file.h"
#include "plugrt/names.h"
#include "plugrt/plugrt_abi.h"

namespace plugrt::plugins {
namespace {

constexpr std::string_view kSection = PLUGRT_METADATA_SECTION;
constexpr size_t kMagicSize = 8;
constexpr size_t kRecordSize = sizeof(plugrt_plugin_metadata);
static_assert(sizeof(PLUGRT_METADATA_MAGIC) - 1 == kMagicSize, "the magic is 8 bytes");

Status invalid(std::string message) { return Status(Error::kPluginInvalid, std::move(message)); }

std::string str(uint64_t value) { return std::to_string(value); }

// `text` in double quotes, with anything unprintable escaped: names come from untrusted
// files and end up on terminals.
std::string quoted(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte == '"' || byte == '\\') {
      out += '\\';
      out += c;
    } else if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out + "\"";
}

// The NUL-terminated text in a fixed-size field, or an error naming the field.
Result<std::string> field_text(const char* field, size_t capacity, std::string_view field_name) {
  const void* nul = std::memchr(field, 0, capacity);
  if (nul == nullptr) {
    return invalid(std::string(field_name) + " is not NUL-terminated within its " + str(capacity) + " bytes");
  }
  return std::string(field, static_cast<size_t>(static_cast<const char*>(nul) - field));
}

const char* const kNameRule = "must be 1 to 63 characters of [a-z0-9_]";

// The names in backend_names: back-to-back NUL-terminated names, then NUL padding.
Result<std::vector<std::string>> backend_names(const plugrt_plugin_metadata& record) {
  const char* field = record.backend_names;
  constexpr size_t kCapacity = sizeof(record.backend_names);
  std::vector<std::string> names;
  size_t pos = 0;
  while (pos < kCapacity && field[pos] != '\0') {
    const void* nul = std::memchr(field + pos, 0, kCapacity - pos);
    if (nul == nullptr) {
      return invalid("backend_names: name " + str(names.size() + 1) + " is not NUL-terminated within the " +
                     str(kCapacity) + "-byte field");
    }
    const size_t end = static_cast<size_t>(static_cast<const char*>(nul) - field);
    names.emplace_back(field + pos, end - pos);
    pos = end + 1;
  }
  // An empty name ends the list; anything after it would be a name the count cannot reach.
  for (size_t i = pos; i < kCapacity; ++i) {
    if (field[i] != '\0') {
      return invalid("backend_names: unexpected bytes at offset " + str(i) +
                     " after the end of the names (an empty name at offset " + str(pos) + ")");
    }
  }
  if (names.size() != record.num_backends) {
    return invalid("backend_names holds " + str(names.size()) + " name" + (names.size() == 1 ? "" : "s") +
                   " but num_backends is " + str(record.num_backends));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (!is_valid_name(names[i])) {
      return invalid("backend name " + str(i + 1) + " " + quoted(names[i]) + " is invalid: " + kNameRule);
    }
    for (size_t j = 0; j < i; ++j) {
      if (names[j] == names[i]) {
        return invalid("backend name " + quoted(names[i]) + " is listed twice");
      }
    }
  }
  return Result<std::vector<std::string>>(std::move(names));
}

Result<PluginMetadata> check_record(const plugrt_plugin_metadata& record) {
  PluginMetadata metadata;
  metadata.abi_major = record.abi_major;
  metadata.abi_minor = record.abi_minor;
  PLUGRT_ASSIGN_OR_RETURN(metadata.name, field_text(record.plugin_name, sizeof(record.plugin_name), "plugin_name"));
  if (!is_valid_name(metadata.name)) {
    return invalid("plugin name " + quoted(metadata.name) + " is invalid: " + kNameRule);
  }
  PLUGRT_ASSIGN_OR_RETURN(metadata.version,
                          field_text(record.plugin_version, sizeof(record.plugin_version), "plugin_version"));
  if (metadata.version.empty()) return invalid("plugin_version is empty");
  for (char c : metadata.version) {
    if (c < 0x20 || c >= 0x7f) {
      return invalid("plugin_version " + quoted(metadata.version) +
                     " contains a character that is not printable ASCII");
    }
  }
  if (record.num_backends == 0) {
    return invalid("num_backends is 0: a plugin provides at least one backend");
  }
  PLUGRT_ASSIGN_OR_RETURN(metadata.backends, backend_names(record));
  return Result<PluginMetadata>(std::move(metadata));
}

}  // namespace

Result<PluginMetadata> read_plugin_metadata(const ElfImage& image) {
  const ElfSection* section = image.find_section(kSection);
  if (section == nullptr) {
    return invalid("no " + std::string(kSection) +
                   " section: not a plugrt plugin (define it with PLUGRT_PLUGIN_METADATA)");
  }
  if (section->type == SHT_NOBITS) {
    return invalid("the " + std::string(kSection) + " section has no contents in the file (SHT_NOBITS)");
  }
  const Span<const uint8_t> bytes = *image.section(kSection);
  const std::string where = " in the " + std::string(kSection) + " section";

  // The fields are copied out with memcpy: the section may sit at any alignment.
  constexpr size_t kHeaderSize = kMagicSize + sizeof(uint32_t);
  if (bytes.size() < kHeaderSize) {
    return invalid("the " + std::string(kSection) + " section is " + str(bytes.size()) +
                   " bytes, too small for the 8-byte magic and the 4-byte metadata_size");
  }
  if (std::memcmp(bytes.data(), PLUGRT_METADATA_MAGIC, kMagicSize) != 0) {
    return invalid("bad magic" + where + " (expected \"" PLUGRT_METADATA_MAGIC "\")");
  }
  uint32_t metadata_size = 0;
  std::memcpy(&metadata_size, bytes.data() + offsetof(plugrt_plugin_metadata, metadata_size), sizeof(metadata_size));
  if (metadata_size > bytes.size()) {
    return invalid("metadata_size " + str(metadata_size) + " is larger than the " + std::string(kSection) +
                   " section (" + str(bytes.size()) + " bytes)");
  }
  constexpr size_t kVersionEnd = offsetof(plugrt_plugin_metadata, metadata_version) + sizeof(uint32_t);
  if (metadata_size < kVersionEnd) {
    return invalid("metadata_size " + str(metadata_size) + " is too small to hold metadata_version (" +
                   str(kVersionEnd) + " bytes)");
  }
  uint32_t metadata_version = 0;
  std::memcpy(&metadata_version, bytes.data() + offsetof(plugrt_plugin_metadata, metadata_version),
              sizeof(metadata_version));
  if (metadata_version == 0) return invalid("metadata_version is 0" + where);
  // Version 1 is the frozen layout; a later version only appends, so its prefix is read.
  if (metadata_size < kRecordSize) {
    return invalid("metadata_size " + str(metadata_size) + " is smaller than the " + str(kRecordSize) +
                   "-byte record of metadata_version 1" + where);
  }
  plugrt_plugin_metadata record;
  std::memcpy(&record, bytes.data(), kRecordSize);
  return check_record(record);
}

Result<PluginFileInfo> inspect_plugin_file(const std::string& path) {
  // MappedFile's messages already start with the path.
  PLUGRT_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  auto image = ElfImage::parse(file.bytes());
  if (!image.is_ok()) return image.status().with_context(path);

  if (image->machine() != host_elf_machine() || image->elf_class() != host_elf_class() ||
      image->data_encoding() != host_elf_data_encoding()) {
    return invalid(path + ": built for " + image->target_name() + ", this host is " + ElfImage::host_target_name());
  }
  if (!image->is_fully_parsed()) {
    // Only reachable on a host whose byte order ElfImage does not read in full.
    return Status(Error::kNotSupported, path + ": cannot read " + image->target_name() + " ELF files on this host");
  }
  if (image->type() != ET_DYN) {
    return invalid(path + ": not a shared object (e_type: " + ElfImage::type_name(image->type()) + ")");
  }
  auto metadata = read_plugin_metadata(*image);
  if (!metadata.is_ok()) return metadata.status().with_context(path);

  PluginFileInfo info;
  info.path = path;
  info.machine = image->machine();
  info.metadata = std::move(metadata).value();
  info.has_entry_symbol = image->exports("plugrt_plugin_entry_v" + std::to_string(info.metadata.abi_major));
  info.exported_symbols = image->exported_symbols();
  info.needed_libraries = image->needed_libraries();
  return Result<PluginFileInfo>(std::move(info));
}

}  // namespace plugrt::plugins
