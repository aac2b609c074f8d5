// SPDX-License-Identifier: Apache-2.0
#include "plugrt/plugins/plugin_metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "elf_test_support.h"

namespace plugrt::plugins {
namespace {

using test_support::patch;
using test_support::peek;
using test_support::read_bytes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

class InspectPluginFileTest : public test_support::TempDirTest {};

TEST_F(InspectPluginFileTest, ReportsGoodFixture) {
  auto info = inspect_plugin_file(PLUGRT_FIXTURE_GOOD);
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->path, PLUGRT_FIXTURE_GOOD);
  EXPECT_EQ(info->machine, host_elf_machine());
  EXPECT_EQ(info->metadata.abi_major, uint32_t{PLUGRT_ABI_MAJOR});
  EXPECT_EQ(info->metadata.abi_minor, uint32_t{PLUGRT_ABI_MINOR});
  EXPECT_EQ(info->metadata.name, "fixture");
  EXPECT_EQ(info->metadata.version, "1.2.3");
  EXPECT_THAT(info->metadata.backends, ElementsAre("alpha", "beta"));
  EXPECT_TRUE(info->has_entry_symbol);
  // The SDK's version script leaves exactly these two.
  EXPECT_THAT(info->exported_symbols, UnorderedElementsAre(PLUGRT_PLUGIN_ENTRY_SYMBOL, PLUGRT_METADATA_SYMBOL));
  EXPECT_THAT(info->needed_libraries, ::testing::Contains("libc.so.6"));
}

TEST_F(InspectPluginFileTest, FileWithoutMetadataIsNotAPlugin) {
  auto info = inspect_plugin_file(PLUGRT_FIXTURE_NO_METADATA);
  ASSERT_FALSE(info.is_ok());
  EXPECT_EQ(info.code(), Error::kPluginInvalid);
  EXPECT_EQ(info.status().message(), std::string(PLUGRT_FIXTURE_NO_METADATA) +
                                         ": no .plugrt_metadata section: not a plugrt plugin (define it with "
                                         "PLUGRT_PLUGIN_METADATA)");
}

TEST_F(InspectPluginFileTest, BackendCountMismatchIsReported) {
  auto info = inspect_plugin_file(PLUGRT_FIXTURE_BAD_METADATA);
  ASSERT_FALSE(info.is_ok());
  EXPECT_EQ(info.code(), Error::kPluginInvalid);
  EXPECT_EQ(info.status().message(),
            std::string(PLUGRT_FIXTURE_BAD_METADATA) + ": backend_names holds 2 names but num_backends is 3");
}

TEST_F(InspectPluginFileTest, FutureLargerRecordIsReadByItsPrefix) {
  auto info = inspect_plugin_file(PLUGRT_FIXTURE_FUTURE_METADATA);
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->metadata.name, "fixture_future");
  EXPECT_EQ(info->metadata.version, "9.0.0");
  EXPECT_THAT(info->metadata.backends, ElementsAre("gamma"));
}

TEST_F(InspectPluginFileTest, OtherMachineIsNamed) {
  auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  const uint16_t other = host_elf_machine() == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
  patch<uint16_t>(bytes, offsetof(Elf64_Ehdr, e_machine), other);
  const std::string file = write("other_machine.so", bytes);
  auto info = inspect_plugin_file(file);
  ASSERT_FALSE(info.is_ok());
  EXPECT_EQ(info.code(), Error::kPluginInvalid);
  EXPECT_EQ(info.status().message(), file + ": built for " + ElfImage::machine_name(other) +
                                         " (64-bit), this host is " + ElfImage::host_target_name());
#if defined(__x86_64__)
  EXPECT_EQ(info.status().message(), file + ": built for AArch64 (64-bit), this host is x86-64 (64-bit)");
#endif
}

TEST_F(InspectPluginFileTest, Elf32IsNamed) {
  auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  bytes[EI_CLASS] = ELFCLASS32;
  const std::string file = write("elf32.so", bytes);
  auto info = inspect_plugin_file(file);
  ASSERT_FALSE(info.is_ok());
  EXPECT_EQ(info.status().message(), file + ": built for " + ElfImage::machine_name(host_elf_machine()) +
                                         " (32-bit), this host is " + ElfImage::host_target_name());
}

TEST_F(InspectPluginFileTest, ExecutableIsNotASharedObject) {
  auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  patch<uint16_t>(bytes, offsetof(Elf64_Ehdr, e_type), ET_EXEC);
  const std::string file = write("executable", bytes);
  auto info = inspect_plugin_file(file);
  ASSERT_FALSE(info.is_ok());
  EXPECT_EQ(info.status().message(), file + ": not a shared object (e_type: executable)");
}

TEST_F(InspectPluginFileTest, TextFileIsNotElf) {
  const std::string text = "not a plugin\n";
  const std::string file = write("libplugrt_text.so", std::vector<uint8_t>(text.begin(), text.end()));
  auto info = inspect_plugin_file(file);
  ASSERT_FALSE(info.is_ok());
  EXPECT_EQ(info.code(), Error::kPluginInvalid);
  EXPECT_EQ(info.status().message(), file + ": not an ELF file (bad magic)");
}

TEST_F(InspectPluginFileTest, SectionHeaderTablePastEndNamesTheTable) {
  auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  patch<uint64_t>(bytes, offsetof(Elf64_Ehdr, e_shoff), bytes.size());
  const std::string file = write("bad_shoff.so", bytes);
  auto info = inspect_plugin_file(file);
  ASSERT_FALSE(info.is_ok());
  EXPECT_THAT(info.status().message(), StartsWith(file + ": truncated: section header table at offset"));
}

TEST_F(InspectPluginFileTest, DirectoryIsAnAccessFailure) {
  auto info = inspect_plugin_file(dir_);
  ASSERT_FALSE(info.is_ok());
  EXPECT_EQ(info.code(), Error::kAccessFailed);
  EXPECT_EQ(info.status().message(), dir_ + ": is a directory");
}

TEST_F(InspectPluginFileTest, MissingFileIsAnAccessFailure) {
  const std::string file = path("libplugrt_missing.so");
  auto info = inspect_plugin_file(file);
  ASSERT_FALSE(info.is_ok());
  EXPECT_EQ(info.code(), Error::kAccessFailed);
  EXPECT_THAT(info.status().message(), StartsWith(file + ": "));
  EXPECT_THAT(info.status().message(), HasSubstr(std::strerror(ENOENT)));
}

// Patches the good fixture's metadata record in memory and reads it back.
class MetadataRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = read_bytes(PLUGRT_FIXTURE_GOOD);
    auto image = ElfImage::parse(Span<const uint8_t>(bytes_.data(), bytes_.size()));
    ASSERT_TRUE(image.is_ok()) << image.status().to_string();
    const auto& sections = image->sections();
    for (size_t i = 0; i < sections.size(); ++i) {
      if (sections[i].name != PLUGRT_METADATA_SECTION) continue;
      record_offset_ = static_cast<size_t>(sections[i].offset);
      const auto header = peek<Elf64_Ehdr>(bytes_, 0);
      section_header_offset_ = header.e_shoff + i * header.e_shentsize;
    }
    ASSERT_NE(record_offset_, 0u);
  }

  // The offset of a field of the record in the file.
  size_t field(size_t offset_in_record) const { return record_offset_ + offset_in_record; }

  void set_text(size_t offset_in_record, size_t capacity, const std::string& text) {
    ASSERT_LE(text.size(), capacity);
    std::fill_n(bytes_.begin() + static_cast<ptrdiff_t>(field(offset_in_record)), capacity, 0);
    std::copy(text.begin(), text.end(), bytes_.begin() + static_cast<ptrdiff_t>(field(offset_in_record)));
  }
  void set_backends(const std::string& names) {
    set_text(offsetof(plugrt_plugin_metadata, backend_names), PLUGRT_METADATA_BACKENDS_CAPACITY, names);
  }

  // The message of read_plugin_metadata's error, or "ok".
  std::string read_error() const {
    auto image = ElfImage::parse(Span<const uint8_t>(bytes_.data(), bytes_.size()));
    if (!image.is_ok()) return "parse: " + image.status().message();
    auto metadata = read_plugin_metadata(*image);
    if (metadata.is_ok()) return "ok";
    EXPECT_EQ(metadata.code(), Error::kPluginInvalid);
    return metadata.status().message();
  }

  std::vector<uint8_t> bytes_;
  size_t record_offset_ = 0;
  size_t section_header_offset_ = 0;
};

TEST_F(MetadataRecordTest, UnpatchedRecordReads) { EXPECT_EQ(read_error(), "ok"); }

TEST_F(MetadataRecordTest, SmallSectionIsReported) {
  patch<uint64_t>(bytes_, section_header_offset_ + offsetof(Elf64_Shdr, sh_size), 11);
  EXPECT_EQ(read_error(),
            "the .plugrt_metadata section is 11 bytes, too small for the 8-byte magic and the "
            "4-byte metadata_size");
}

TEST_F(MetadataRecordTest, NobitsSectionIsReported) {
  patch<uint32_t>(bytes_, section_header_offset_ + offsetof(Elf64_Shdr, sh_type), SHT_NOBITS);
  EXPECT_EQ(read_error(), "the .plugrt_metadata section has no contents in the file (SHT_NOBITS)");
}

TEST_F(MetadataRecordTest, BadMagicIsReported) {
  bytes_[field(0)] = 'X';
  EXPECT_EQ(read_error(), "bad magic in the .plugrt_metadata section (expected \"PLUGRTMD\")");
}

TEST_F(MetadataRecordTest, MetadataSizeIsChecked) {
  const size_t size_field = field(offsetof(plugrt_plugin_metadata, metadata_size));
  const std::string record_size = std::to_string(sizeof(plugrt_plugin_metadata));
  patch<uint32_t>(bytes_, size_field, 100000);
  EXPECT_EQ(read_error(),
            "metadata_size 100000 is larger than the .plugrt_metadata section (" + record_size + " bytes)");
  patch<uint32_t>(bytes_, size_field, 12);
  EXPECT_EQ(read_error(), "metadata_size 12 is too small to hold metadata_version (16 bytes)");
  patch<uint32_t>(bytes_, size_field, sizeof(plugrt_plugin_metadata) - 1);
  EXPECT_EQ(read_error(), "metadata_size " + std::to_string(sizeof(plugrt_plugin_metadata) - 1) +
                              " is smaller than the " + record_size +
                              "-byte record of metadata_version 1 in the .plugrt_metadata section");
}

TEST_F(MetadataRecordTest, MetadataVersionZeroIsRefused) {
  patch<uint32_t>(bytes_, field(offsetof(plugrt_plugin_metadata, metadata_version)), 0);
  EXPECT_EQ(read_error(), "metadata_version is 0 in the .plugrt_metadata section");
}

TEST_F(MetadataRecordTest, PluginNameIsChecked) {
  const size_t name = offsetof(plugrt_plugin_metadata, plugin_name);
  std::fill_n(bytes_.begin() + static_cast<ptrdiff_t>(field(name)), PLUGRT_METADATA_NAME_CAPACITY, 'a');
  EXPECT_EQ(read_error(), "plugin_name is not NUL-terminated within its 64 bytes");
  set_text(name, PLUGRT_METADATA_NAME_CAPACITY, "Fix\xffture");
  EXPECT_EQ(read_error(), "plugin name \"Fix\\xffture\" is invalid: must be 1 to 63 characters of [a-z0-9_]");
  set_text(name, PLUGRT_METADATA_NAME_CAPACITY, "");
  EXPECT_EQ(read_error(), "plugin name \"\" is invalid: must be 1 to 63 characters of [a-z0-9_]");
}

TEST_F(MetadataRecordTest, PluginVersionIsChecked) {
  const size_t version = offsetof(plugrt_plugin_metadata, plugin_version);
  std::fill_n(bytes_.begin() + static_cast<ptrdiff_t>(field(version)), PLUGRT_METADATA_VERSION_CAPACITY, '1');
  EXPECT_EQ(read_error(), "plugin_version is not NUL-terminated within its 32 bytes");
  set_text(version, PLUGRT_METADATA_VERSION_CAPACITY, "");
  EXPECT_EQ(read_error(), "plugin_version is empty");
  set_text(version, PLUGRT_METADATA_VERSION_CAPACITY, "1.0\n");
  EXPECT_EQ(read_error(), "plugin_version \"1.0\\x0a\" contains a character that is not printable ASCII");
}

TEST_F(MetadataRecordTest, BackendCountIsChecked) {
  const size_t count = field(offsetof(plugrt_plugin_metadata, num_backends));
  patch<uint32_t>(bytes_, count, 0);
  EXPECT_EQ(read_error(), "num_backends is 0: a plugin provides at least one backend");
  patch<uint32_t>(bytes_, count, 1);
  EXPECT_EQ(read_error(), "backend_names holds 2 names but num_backends is 1");
  patch<uint32_t>(bytes_, count, 3);
  EXPECT_EQ(read_error(), "backend_names holds 2 names but num_backends is 3");
  patch<uint32_t>(bytes_, count, 0xffffffff);
  EXPECT_EQ(read_error(), "backend_names holds 2 names but num_backends is 4294967295");
}

TEST_F(MetadataRecordTest, BackendNamesAreChecked) {
  set_backends(std::string("alpha\0alpha", 11));
  EXPECT_EQ(read_error(), "backend name \"alpha\" is listed twice");
  set_backends(std::string("alpha\0Beta", 10));
  EXPECT_EQ(read_error(), "backend name 2 \"Beta\" is invalid: must be 1 to 63 characters of [a-z0-9_]");
  set_backends(std::string("alpha\0\0beta", 11));
  EXPECT_EQ(read_error(),
            "backend_names: unexpected bytes at offset 7 after the end of the names (an empty "
            "name at offset 6)");
  set_backends(std::string(64, 'a') + std::string(1, '\0') + "b");
  EXPECT_EQ(read_error(),
            "backend name 1 \"" + std::string(64, 'a') + "\" is invalid: must be 1 to 63 characters of [a-z0-9_]");
}

TEST_F(MetadataRecordTest, UnterminatedBackendNamesAreReported) {
  std::fill_n(bytes_.begin() + static_cast<ptrdiff_t>(field(offsetof(plugrt_plugin_metadata, backend_names))),
              PLUGRT_METADATA_BACKENDS_CAPACITY, 'z');
  EXPECT_EQ(read_error(), "backend_names: name 1 is not NUL-terminated within the 512-byte field");
}

TEST_F(MetadataRecordTest, NamesMayFillTheWholeField) {
  // 128 distinct names of 3 characters, each with its NUL, take all 512 bytes.
  std::string names;
  for (int i = 0; i < 128; ++i) {
    names += static_cast<char>('a' + i % 26);
    names += static_cast<char>('0' + i / 26);
    names += "x";
    names += '\0';
  }
  ASSERT_EQ(names.size(), size_t{PLUGRT_METADATA_BACKENDS_CAPACITY});
  set_backends(names);
  patch<uint32_t>(bytes_, field(offsetof(plugrt_plugin_metadata, num_backends)), 128);
  EXPECT_EQ(read_error(), "ok");
}

}  // namespace
}  // namespace plugrt::plugins
