// SPDX-License-Identifier: Apache-2.0
// ElfImage: a checked, read-only view of an ELF file held in memory. It reads what the
// plugin loader needs to judge a file before dlopen: target machine, type, sections,
// exported dynamic symbols and needed libraries. Nothing in the file is trusted.
#ifndef PLUGRT_PLUGINS_ELF_IMAGE_H_
#define PLUGRT_PLUGINS_ELF_IMAGE_H_

#include <elf.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt::plugins {

/// The e_machine of the target this code is built for (EM_X86_64 on x86-64, ...).
constexpr uint16_t host_elf_machine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__arm__)
  return EM_ARM;
#elif defined(__i386__)
  return EM_386;
#elif defined(__riscv)
  return EM_RISCV;
#elif defined(__powerpc64__)
  return EM_PPC64;
#elif defined(__powerpc__)
  return EM_PPC;
#elif defined(__s390__)
  return EM_S390;
#elif defined(__mips__)
  return EM_MIPS;
#elif defined(__loongarch__)
  return 258;  // EM_LOONGARCH, missing from older <elf.h>
#else
#error "unknown target: add its EM_* constant to host_elf_machine()"
#endif
}

/// The ELF class of the build target: ELFCLASS64 for LP64 targets, ELFCLASS32 otherwise
/// (x32 and other ILP32 ABIs on 64-bit machines use ELFCLASS32 too).
constexpr int host_elf_class() { return sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32; }

/// The ELF data encoding of the build target: ELFDATA2LSB or ELFDATA2MSB.
constexpr int host_elf_data_encoding() { return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB; }

/// One entry of the section header table, with its name resolved.
struct ElfSection {
  std::string name;
  uint32_t type = SHT_NULL;  ///< SHT_PROGBITS, SHT_NOBITS, ...
  uint64_t flags = 0;
  uint64_t address = 0;
  uint64_t offset = 0;  ///< in the file; [offset, offset + size) is checked unless NOBITS
  uint64_t size = 0;
  uint32_t link = 0;
  uint32_t info = 0;
  uint64_t entry_size = 0;
};

/// A parsed ELF file. Move-only. It does not own the bytes: they must stay valid and
/// unchanged for as long as the ElfImage (and any Span it returned) is used.
///
/// ELFCLASS64 little-endian files (on a little-endian host) are parsed fully. Any other
/// file is parsed only far enough to report its class, data encoding, type and machine, so
/// a caller can explain why it cannot be used; is_fully_parsed() is then false and the
/// section, symbol and library accessors return nothing.
class ElfImage {
 public:
  /// Parses `bytes`. Every offset, size, count, entry size and string index in the file is
  /// bounds-checked before use, and the names copied out are capped in proportion to their
  /// string tables, so memory stays linear in the size of the file.
  /// Errors: kPluginInvalid with a message saying what is wrong, e.g. "not an ELF file (bad
  /// magic)" or "truncated: section header table at offset X, size Y runs past end of file
  /// (Z bytes)".
  [[nodiscard]] static Result<ElfImage> parse(Span<const uint8_t> bytes);

  ElfImage(ElfImage&&) = default;
  ElfImage& operator=(ElfImage&&) = default;
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;

  /// ELFCLASS32 or ELFCLASS64.
  int elf_class() const { return elf_class_; }
  /// ELFDATA2LSB or ELFDATA2MSB.
  int data_encoding() const { return data_encoding_; }
  /// e_machine: EM_X86_64, EM_AARCH64, ...
  uint16_t machine() const { return machine_; }
  /// e_type: ET_DYN for a shared object, ET_EXEC, ET_REL, ...
  uint16_t type() const { return type_; }
  /// True when sections, symbols and needed libraries were read (see the class comment).
  bool is_fully_parsed() const { return fully_parsed_; }

  /// "x86-64", "AArch64", "ARM", "RISC-V", ...; "machine N" for one it does not know.
  static std::string machine_name(uint16_t machine);
  /// The target in words: "AArch64 (64-bit)", "ARM (32-bit)", "PowerPC64 (64-bit,
  /// big-endian)". Big-endian is named only when it differs from the host.
  static std::string target_name(uint16_t machine, int elf_class, int data_encoding);
  /// target_name() of this file.
  std::string target_name() const;
  /// target_name() of the host.
  static std::string host_target_name();
  /// A readable name for an e_type: "shared object", "executable", ...
  static std::string type_name(uint16_t type);

  /// The section headers, in file order (index 0 is the null section). Empty when the file
  /// has no section header table or is not fully parsed.
  const std::vector<ElfSection>& sections() const { return sections_; }
  /// The first section called `name`, or nullptr.
  const ElfSection* find_section(std::string_view name) const;
  /// The contents of the first section called `name`: std::nullopt when there is none, an
  /// empty span when it occupies no bytes in the file (SHT_NOBITS, such as .bss).
  std::optional<Span<const uint8_t>> section(std::string_view name) const;

  /// Names the file exports for dynamic linking: .dynsym entries that are defined
  /// (st_shndx != SHN_UNDEF), of GLOBAL or WEAK binding and DEFAULT or PROTECTED
  /// visibility. Sorted and without duplicates.
  const std::vector<std::string>& exported_symbols() const { return exported_symbols_; }
  /// True when `symbol` is among exported_symbols().
  bool exports(std::string_view symbol) const;
  /// The DT_NEEDED entries of the .dynamic section ("libc.so.6", ...), in file order.
  const std::vector<std::string>& needed_libraries() const { return needed_libraries_; }

 private:
  ElfImage() = default;
  [[nodiscard]] Status parse_elf64();
  [[nodiscard]] Status read_section_headers();
  [[nodiscard]] Status read_exported_symbols(size_t index);
  [[nodiscard]] Status read_needed_libraries(size_t index);
  [[nodiscard]] Result<Span<const uint8_t>> linked_string_table(size_t index) const;
  std::string describe_section(size_t index) const;

  int elf_class_ = ELFCLASSNONE;
  int data_encoding_ = ELFDATANONE;
  uint16_t machine_ = EM_NONE;
  uint16_t type_ = ET_NONE;
  bool fully_parsed_ = false;
  Span<const uint8_t> bytes_;
  std::vector<ElfSection> sections_;
  std::vector<std::string> exported_symbols_;
  std::vector<std::string> needed_libraries_;
};

}  // namespace plugrt::plugins

#endif  // PLUGRT_PLUGINS_ELF_IMAGE_H_
