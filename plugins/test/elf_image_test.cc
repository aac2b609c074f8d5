// SPDX-License-Identifier: Apache-2.0
#include "plugrt/plugins/elf_image.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "elf_test_support.h"
#include "plugrt/plugins/plugin_metadata.h"

namespace plugrt::plugins {
namespace {

using test_support::patch;
using test_support::peek;
using test_support::read_bytes;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

Span<const uint8_t> view(const std::vector<uint8_t>& bytes) { return Span<const uint8_t>(bytes.data(), bytes.size()); }

// Parses `bytes` and, when that succeeds, uses every accessor and reads the metadata, so
// the sanitizers see each path that touches the file. Returns the parse status.
Status parse_and_use(const std::vector<uint8_t>& bytes) {
  auto image = ElfImage::parse(view(bytes));
  if (!image.is_ok()) return image.status();
  for (const ElfSection& section : image->sections()) (void)image->section(section.name);
  (void)image->exports(PLUGRT_PLUGIN_ENTRY_SYMBOL);
  (void)image->needed_libraries();
  (void)image->target_name();
  auto metadata = read_plugin_metadata(*image);
  if (!metadata.is_ok()) {
    EXPECT_FALSE(metadata.status().message().empty());
  }
  return Status::ok();
}

TEST(ElfImageTest, ParsesGoodFixture) {
  const auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  auto image = ElfImage::parse(view(bytes));
  ASSERT_TRUE(image.is_ok()) << image.status().to_string();
  EXPECT_TRUE(image->is_fully_parsed());
  EXPECT_EQ(image->elf_class(), ELFCLASS64);
  EXPECT_EQ(image->data_encoding(), ELFDATA2LSB);
  EXPECT_EQ(image->machine(), host_elf_machine());
  EXPECT_EQ(image->type(), ET_DYN);
  EXPECT_NE(image->find_section(".dynsym"), nullptr);
  EXPECT_NE(image->find_section(".text"), nullptr);
}

TEST(ElfImageTest, ExportsOnlyTheEntryAndMetadata) {
  const auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  auto image = ElfImage::parse(view(bytes));
  ASSERT_TRUE(image.is_ok()) << image.status().to_string();
  EXPECT_TRUE(image->exports(PLUGRT_PLUGIN_ENTRY_SYMBOL));
  EXPECT_TRUE(image->exports(PLUGRT_METADATA_SYMBOL));
  EXPECT_FALSE(image->exports("fixture_hidden_helper"));
  EXPECT_FALSE(image->exports("fixture_unlisted_function"));
  EXPECT_FALSE(image->exports("getenv"));  // needed, not defined here
  EXPECT_FALSE(image->exports(""));
  EXPECT_THAT(image->exported_symbols(), Contains(PLUGRT_PLUGIN_ENTRY_SYMBOL));
  EXPECT_THAT(image->exported_symbols(), Not(Contains("fixture_hidden_helper")));
}

TEST(ElfImageTest, ListsNeededLibraries) {
  const auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  auto image = ElfImage::parse(view(bytes));
  ASSERT_TRUE(image.is_ok()) << image.status().to_string();
  EXPECT_THAT(image->needed_libraries(), Contains("libc.so.6"));
}

TEST(ElfImageTest, SectionContentsAndAbsence) {
  const auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  auto image = ElfImage::parse(view(bytes));
  ASSERT_TRUE(image.is_ok()) << image.status().to_string();
  const auto metadata = image->section(PLUGRT_METADATA_SECTION);
  ASSERT_TRUE(metadata.has_value());
  ASSERT_GE(metadata->size(), 8u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(metadata->data()), 8), "PLUGRTMD");
  // The span points into the caller's bytes.
  EXPECT_GE(metadata->data(), bytes.data());
  EXPECT_LE(metadata->data() + metadata->size(), bytes.data() + bytes.size());
  EXPECT_FALSE(image->section(".no_such_section").has_value());
  for (const ElfSection& section : image->sections()) {
    if (section.type != SHT_NOBITS) continue;
    const auto contents = image->section(section.name);
    ASSERT_TRUE(contents.has_value()) << section.name;
    EXPECT_TRUE(contents->empty()) << section.name;
  }
}

TEST(ElfImageTest, ParsesFromUnalignedBuffer) {
  const auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::copy(bytes.begin(), bytes.end(), shifted.begin() + 1);
  auto image = ElfImage::parse(Span<const uint8_t>(shifted.data() + 1, bytes.size()));
  ASSERT_TRUE(image.is_ok()) << image.status().to_string();
  auto metadata = read_plugin_metadata(*image);
  ASSERT_TRUE(metadata.is_ok()) << metadata.status().to_string();
  EXPECT_EQ(metadata->name, "fixture");
}

TEST(ElfImageTest, RejectsTextAndEmptyInput) {
  const std::string text = "#!/bin/sh\necho this is not a plugin\n";
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  auto image = ElfImage::parse(view(bytes));
  ASSERT_FALSE(image.is_ok());
  EXPECT_EQ(image.code(), Error::kPluginInvalid);
  EXPECT_EQ(image.status().message(), "not an ELF file (bad magic)");

  auto empty = ElfImage::parse(Span<const uint8_t>());
  ASSERT_FALSE(empty.is_ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("not an ELF file"));
}

TEST(ElfImageTest, EveryTruncationFailsCleanly) {
  const auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  ASSERT_GT(bytes.size(), 4096u);
  size_t errors = 0;
  for (size_t length = 0; length < bytes.size(); length += (length < 4096 ? 1 : 97)) {
    // An exact-size copy, so AddressSanitizer catches a read past the end.
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(length));
    const Status status = parse_and_use(prefix);
    if (!status.is_ok()) {
      ++errors;
      EXPECT_FALSE(status.message().empty()) << "length " << length;
      EXPECT_EQ(status.code(), Error::kPluginInvalid) << "length " << length;
    }
  }
  // The section header table sits at the end, so no proper prefix is a whole file.
  EXPECT_GT(errors, 4096u);
  EXPECT_TRUE(parse_and_use(bytes).is_ok());
}

TEST(ElfImageTest, RandomBytesFailCleanly) {
  std::mt19937 random(12345);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> bytes(static_cast<size_t>(random() % 2048));
    for (auto& b : bytes) b = static_cast<uint8_t>(byte(random));
    // Half the rounds get a valid 64-bit identification, to reach the tables.
    if (round % 2 == 0 && bytes.size() >= EI_NIDENT) {
      std::memcpy(bytes.data(), ELFMAG, SELFMAG);
      bytes[EI_CLASS] = ELFCLASS64;
      bytes[EI_DATA] = ELFDATA2LSB;
      bytes[EI_VERSION] = EV_CURRENT;
    }
    const Status status = parse_and_use(bytes);
    if (!status.is_ok()) {
      EXPECT_FALSE(status.message().empty());
    }
  }
}

TEST(ElfImageTest, MutatedFixtureFailsCleanly) {
  const auto original = read_bytes(PLUGRT_FIXTURE_GOOD);
  const auto header = peek<Elf64_Ehdr>(original, 0);
  const size_t table_end = header.e_shoff + size_t{header.e_shnum} * header.e_shentsize;
  ASSERT_LE(table_end, original.size());
  std::mt19937 random(678);
  for (int round = 0; round < 3000; ++round) {
    auto bytes = original;
    // Corrupt a few bytes, mostly in the ELF header and the section header table.
    for (int i = 0; i < 4; ++i) {
      size_t offset = 0;
      switch (random() % 3) {
        case 0: offset = random() % sizeof(Elf64_Ehdr); break;
        case 1: offset = header.e_shoff + random() % (table_end - header.e_shoff); break;
        default: offset = random() % bytes.size(); break;
      }
      bytes[offset] = static_cast<uint8_t>(random());
    }
    const Status status = parse_and_use(bytes);
    if (!status.is_ok()) {
      EXPECT_FALSE(status.message().empty());
    }
  }
}

TEST(ElfImageTest, SectionHeaderTablePastEndIsReported) {
  auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  patch<uint64_t>(bytes, offsetof(Elf64_Ehdr, e_shoff), bytes.size() + 100);
  auto image = ElfImage::parse(view(bytes));
  ASSERT_FALSE(image.is_ok());
  EXPECT_EQ(image.code(), Error::kPluginInvalid);
  EXPECT_THAT(image.status().message(),
              HasSubstr("truncated: section header table at offset " + std::to_string(bytes.size() + 100)));
  EXPECT_THAT(image.status().message(),
              HasSubstr("runs past end of file (" + std::to_string(bytes.size()) + " bytes)"));
}

TEST(ElfImageTest, OverflowingSectionHeaderTableIsReported) {
  auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  patch<uint64_t>(bytes, offsetof(Elf64_Ehdr, e_shoff), UINT64_MAX - 10);
  auto image = ElfImage::parse(view(bytes));
  ASSERT_FALSE(image.is_ok());
  EXPECT_THAT(image.status().message(), HasSubstr("section header table"));
}

TEST(ElfImageTest, BadSectionNameTableIndexIsReported) {
  auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  patch<uint16_t>(bytes, offsetof(Elf64_Ehdr, e_shstrndx), 0xfeff);
  auto image = ElfImage::parse(view(bytes));
  ASSERT_FALSE(image.is_ok());
  EXPECT_THAT(image.status().message(), HasSubstr("section name string table index 65279 is out of range"));
}

TEST(ElfImageTest, SmallSectionHeaderEntrySizeIsReported) {
  auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  patch<uint16_t>(bytes, offsetof(Elf64_Ehdr, e_shentsize), 12);
  auto image = ElfImage::parse(view(bytes));
  ASSERT_FALSE(image.is_ok());
  EXPECT_THAT(image.status().message(), HasSubstr("section header entry size 12 is smaller than 64 bytes"));
}

// A minimal ELF64 shared object: the header, a section name string table of `names`,
// then `count` section headers (index 0 null, the last the string table) whose sh_name
// values come from `name_offset(i)`.
template <typename NameOffset>
std::vector<uint8_t> synthetic_elf(const std::string& names, size_t count, NameOffset name_offset) {
  std::vector<uint8_t> bytes(sizeof(Elf64_Ehdr) + names.size() + count * sizeof(Elf64_Shdr));
  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_type = ET_DYN;
  header.e_machine = host_elf_machine();
  header.e_version = EV_CURRENT;
  header.e_ehsize = sizeof(Elf64_Ehdr);
  header.e_shoff = sizeof(Elf64_Ehdr) + names.size();
  header.e_shentsize = sizeof(Elf64_Shdr);
  header.e_shnum = static_cast<uint16_t>(count);
  header.e_shstrndx = static_cast<uint16_t>(count - 1);
  std::memcpy(bytes.data(), &header, sizeof(header));
  std::memcpy(bytes.data() + sizeof(Elf64_Ehdr), names.data(), names.size());
  for (size_t i = 1; i < count; ++i) {
    Elf64_Shdr section{};
    section.sh_name = static_cast<uint32_t>(name_offset(i));
    section.sh_type = i + 1 == count ? SHT_STRTAB : SHT_PROGBITS;
    if (i + 1 == count) {
      section.sh_offset = sizeof(Elf64_Ehdr);
      section.sh_size = names.size();
    }
    std::memcpy(bytes.data() + header.e_shoff + i * sizeof(Elf64_Shdr), &section, sizeof(section));
  }
  return bytes;
}

TEST(ElfImageTest, ParsesSyntheticFile) {
  const std::string names("\0.one\0.two\0.shstrtab\0", 21);
  const size_t offsets[] = {0, 1, 6, 11};
  const auto bytes = synthetic_elf(names, 4, [&](size_t i) { return offsets[i]; });
  auto image = ElfImage::parse(view(bytes));
  ASSERT_TRUE(image.is_ok()) << image.status().to_string();
  ASSERT_EQ(image->sections().size(), 4u);
  EXPECT_EQ(image->sections()[2].name, ".two");
  EXPECT_TRUE(image->section(".one").has_value());
  EXPECT_TRUE(image->exported_symbols().empty());
  EXPECT_TRUE(image->needed_libraries().empty());
}

TEST(ElfImageTest, OverlappingNamesAreCapped) {
  // 2000 sections named by suffixes of one 100000-byte string would copy about 100 MB of
  // names out of a 228 KB file.
  const std::string names = std::string(100000, 'a') + '\0';
  const auto bytes = synthetic_elf(names, 2000, [](size_t i) { return i * 37 % 1000; });
  auto image = ElfImage::parse(view(bytes));
  ASSERT_FALSE(image.is_ok());
  EXPECT_THAT(image.status().message(), HasSubstr("out of proportion to their string table"));
}

TEST(ElfImageTest, Elf32IsReportedByClassAndMachine) {
  auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  bytes[EI_CLASS] = ELFCLASS32;
  auto image = ElfImage::parse(view(bytes));
  ASSERT_TRUE(image.is_ok()) << image.status().to_string();
  EXPECT_EQ(image->elf_class(), ELFCLASS32);
  EXPECT_EQ(image->machine(), host_elf_machine());
  EXPECT_FALSE(image->is_fully_parsed());
  EXPECT_TRUE(image->sections().empty());
  EXPECT_TRUE(image->exported_symbols().empty());
  EXPECT_EQ(image->target_name(), ElfImage::machine_name(host_elf_machine()) + " (32-bit)");
}

TEST(ElfImageTest, BigEndianIsReportedByClassAndMachine) {
  // A header as a big-endian 64-bit PowerPC compiler would write it.
  std::vector<uint8_t> bytes(64, 0);
  std::memcpy(bytes.data(), ELFMAG, SELFMAG);
  bytes[EI_CLASS] = ELFCLASS64;
  bytes[EI_DATA] = ELFDATA2MSB;
  bytes[EI_VERSION] = EV_CURRENT;
  bytes[16] = 0;
  bytes[17] = ET_DYN;
  bytes[18] = 0;
  bytes[19] = EM_PPC64;
  auto image = ElfImage::parse(view(bytes));
  ASSERT_TRUE(image.is_ok()) << image.status().to_string();
  EXPECT_EQ(image->machine(), EM_PPC64);
  EXPECT_EQ(image->type(), ET_DYN);
  EXPECT_EQ(image->data_encoding(), ELFDATA2MSB);
  EXPECT_FALSE(image->is_fully_parsed());
  EXPECT_EQ(image->target_name(), "PowerPC64 (64-bit, big-endian)");
}

TEST(ElfImageTest, BadIdentificationIsReported) {
  auto bytes = read_bytes(PLUGRT_FIXTURE_GOOD);
  auto bad_class = bytes;
  bad_class[EI_CLASS] = 7;
  EXPECT_EQ(ElfImage::parse(view(bad_class)).status().message(), "unknown ELF class 7");
  auto bad_data = bytes;
  bad_data[EI_DATA] = 9;
  EXPECT_EQ(ElfImage::parse(view(bad_data)).status().message(), "unknown ELF data encoding 9");
  auto bad_version = bytes;
  bad_version[EI_VERSION] = 2;
  EXPECT_EQ(ElfImage::parse(view(bad_version)).status().message(), "unsupported ELF version 2");
  const std::vector<uint8_t> short_header(bytes.begin(), bytes.begin() + 18);
  EXPECT_THAT(ElfImage::parse(view(short_header)).status().message(), HasSubstr("truncated: ELF header"));
}

TEST(ElfImageTest, NamesMachines) {
  EXPECT_EQ(ElfImage::machine_name(EM_X86_64), "x86-64");
  EXPECT_EQ(ElfImage::machine_name(EM_AARCH64), "AArch64");
  EXPECT_EQ(ElfImage::machine_name(EM_ARM), "ARM");
  EXPECT_EQ(ElfImage::machine_name(EM_RISCV), "RISC-V");
  EXPECT_EQ(ElfImage::machine_name(EM_386), "i386");
  EXPECT_EQ(ElfImage::machine_name(EM_PPC64), "PowerPC64");
  EXPECT_EQ(ElfImage::machine_name(EM_S390), "s390");
  EXPECT_EQ(ElfImage::machine_name(9999), "machine 9999");
  EXPECT_EQ(ElfImage::target_name(EM_ARM, ELFCLASS32, host_elf_data_encoding()), "ARM (32-bit)");
  EXPECT_EQ(ElfImage::type_name(ET_EXEC), "executable");
}

TEST(ElfImageTest, HostMachineMatchesBuildTarget) {
#if defined(__x86_64__)
  EXPECT_EQ(host_elf_machine(), EM_X86_64);
  EXPECT_EQ(ElfImage::host_target_name(), "x86-64 (64-bit)");
#elif defined(__aarch64__)
  EXPECT_EQ(host_elf_machine(), EM_AARCH64);
#endif
  static_assert(host_elf_machine() != EM_NONE, "usable in constant expressions");
}

}  // namespace
}  // namespace plugrt::plugins
