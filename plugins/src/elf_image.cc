// SPDX-License-Identifier: Apache-2.0
#include "plugrt/plugins/elf_image.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace plugrt::plugins {
namespace {

Status invalid(std::string message) { return Status(Error::kPluginInvalid, std::move(message)); }

std::string str(uint64_t value) { return std::to_string(value); }

// True when [offset, offset + size) lies inside `total` bytes; never overflows.
bool fits(uint64_t offset, uint64_t size, uint64_t total) { return offset <= total && size <= total - offset; }

// Copies a structure out of the file: the bytes may sit at any alignment. The caller has
// checked that sizeof(T) bytes at `offset` are inside `bytes`.
template <typename T>
T load(Span<const uint8_t> bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

uint16_t load_u16(const uint8_t* p, bool little_endian) {
  return little_endian ? static_cast<uint16_t>(p[0] | (p[1] << 8)) : static_cast<uint16_t>((p[0] << 8) | p[1]);
}

// Checks that a table of `count` entries of `entry_size` bytes at `offset` lies inside the
// file. `what` names the table in the message.
Status check_table(std::string_view what, uint64_t offset, uint64_t count, uint64_t entry_size, uint64_t file_size) {
  if (count != 0 && entry_size > std::numeric_limits<uint64_t>::max() / count) {
    return invalid(std::string(what) + ": size overflows (" + str(count) + " entries of " + str(entry_size) +
                   " bytes)");
  }
  const uint64_t size = count * entry_size;
  if (!fits(offset, size, file_size)) {
    return invalid("truncated: " + std::string(what) + " at offset " + str(offset) + ", size " + str(size) +
                   " runs past end of file (" + str(file_size) + " bytes)");
  }
  return Status::ok();
}

// The NUL-terminated string at `index` in a string table, or the reason there is none (in
// `why`, to be prefixed with what was being looked up).
bool string_at(Span<const uint8_t> table, uint64_t index, std::string_view* out, std::string* why) {
  if (index >= table.size()) {
    *why = "offset " + str(index) + " is outside its string table (" + str(table.size()) + " bytes)";
    return false;
  }
  const auto* start = table.data() + index;
  const void* nul = std::memchr(start, 0, table.size() - static_cast<size_t>(index));
  if (nul == nullptr) {
    *why = "at offset " + str(index) + " runs to the end of its string table without a NUL";
    return false;
  }
  *out = std::string_view(reinterpret_cast<const char*>(start),
                          static_cast<size_t>(static_cast<const uint8_t*>(nul) - start));
  return true;
}

// Names may overlap in a string table (linkers share suffixes), so a crafted file could
// describe many long names with few bytes. Copies of names are capped at a multiple of the
// table's size, which keeps memory linear in the size of the file.
class NameBudget {
 public:
  explicit NameBudget(size_t table_size) : limit_(uint64_t{4} * table_size + (uint64_t{1} << 20)), left_(limit_) {}
  // Counts `size` bytes against the budget; false once it is spent.
  bool take(size_t size) {
    if (size > left_) return false;
    left_ -= size;
    return true;
  }
  std::string exceeded(const std::string& what, size_t table_size) const {
    return what + ": names total more than " + str(limit_) + " bytes, out of proportion to their string table (" +
           str(table_size) + " bytes)";
  }

 private:
  uint64_t limit_;
  uint64_t left_;
};

// The checks shared by .dynsym and .dynamic: a whole number of entries of at least the
// size this reader needs.
Status check_entries(const std::string& what, const ElfSection& section, size_t needed) {
  if (section.entry_size < needed) {
    return invalid(what + ": entry size " + str(section.entry_size) + " is smaller than " + str(needed) + " bytes");
  }
  if (section.size % section.entry_size != 0) {
    return invalid(what + ": size " + str(section.size) + " is not a multiple of its entry size " +
                   str(section.entry_size));
  }
  return Status::ok();
}

}  // namespace

Result<ElfImage> ElfImage::parse(Span<const uint8_t> bytes) {
  if (bytes.size() < SELFMAG || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    return invalid("not an ELF file (bad magic)");
  }
  // e_type and e_machine follow the 16-byte e_ident at the same offsets in both classes.
  constexpr size_t kMachineEnd = EI_NIDENT + 2 * sizeof(uint16_t);
  if (bytes.size() < kMachineEnd) {
    return invalid("truncated: ELF header needs at least " + str(kMachineEnd) + " bytes, file is " + str(bytes.size()) +
                   " bytes");
  }
  ElfImage image;
  image.bytes_ = bytes;
  image.elf_class_ = bytes[EI_CLASS];
  image.data_encoding_ = bytes[EI_DATA];
  if (image.elf_class_ != ELFCLASS32 && image.elf_class_ != ELFCLASS64) {
    return invalid("unknown ELF class " + str(bytes[EI_CLASS]));
  }
  if (image.data_encoding_ != ELFDATA2LSB && image.data_encoding_ != ELFDATA2MSB) {
    return invalid("unknown ELF data encoding " + str(bytes[EI_DATA]));
  }
  if (bytes[EI_VERSION] != EV_CURRENT) {
    return invalid("unsupported ELF version " + str(bytes[EI_VERSION]));
  }
  const bool little_endian = image.data_encoding_ == ELFDATA2LSB;
  image.type_ = load_u16(bytes.data() + EI_NIDENT, little_endian);
  image.machine_ = load_u16(bytes.data() + EI_NIDENT + 2, little_endian);

  // The tables are read with <elf.h>'s structures in host byte order, so only files in
  // that order are read further; the others are reported by class and machine only.
  if (image.elf_class_ == ELFCLASS64 && little_endian && host_elf_data_encoding() == ELFDATA2LSB) {
    PLUGRT_RETURN_IF_ERROR(image.parse_elf64());
  }
  return Result<ElfImage>(std::move(image));
}

Status ElfImage::parse_elf64() {
  if (bytes_.size() < sizeof(Elf64_Ehdr)) {
    return invalid("truncated: ELF header needs " + str(sizeof(Elf64_Ehdr)) + " bytes, file is " + str(bytes_.size()) +
                   " bytes");
  }
  PLUGRT_RETURN_IF_ERROR(read_section_headers());
  // The ELF specification allows at most one of each; the first one counts.
  bool symbols_read = false;
  bool dynamic_read = false;
  for (size_t i = 0; i < sections_.size(); ++i) {
    if (sections_[i].type == SHT_DYNSYM && !symbols_read) {
      PLUGRT_RETURN_IF_ERROR(read_exported_symbols(i));
      symbols_read = true;
    }
    if (sections_[i].type == SHT_DYNAMIC && !dynamic_read) {
      PLUGRT_RETURN_IF_ERROR(read_needed_libraries(i));
      dynamic_read = true;
    }
  }
  fully_parsed_ = true;
  return Status::ok();
}

Status ElfImage::read_section_headers() {
  const auto header = load<Elf64_Ehdr>(bytes_, 0);
  if (header.e_shoff == 0) return Status::ok();  // no section header table (allowed)
  if (header.e_shentsize < sizeof(Elf64_Shdr)) {
    return invalid("section header entry size " + str(header.e_shentsize) + " is smaller than " +
                   str(sizeof(Elf64_Shdr)) + " bytes");
  }
  constexpr std::string_view kTable = "section header table";
  // With more than SHN_LORESERVE sections, e_shnum is 0 and section 0 holds the count (and,
  // when e_shstrndx is SHN_XINDEX, the string table index): read it first.
  uint64_t count = header.e_shnum;
  PLUGRT_RETURN_IF_ERROR(
      check_table(kTable, header.e_shoff, std::max<uint64_t>(count, 1), header.e_shentsize, bytes_.size()));
  const auto first = load<Elf64_Shdr>(bytes_, header.e_shoff);
  if (count == 0) {
    count = first.sh_size;
    PLUGRT_RETURN_IF_ERROR(check_table(kTable, header.e_shoff, count, header.e_shentsize, bytes_.size()));
  }
  uint64_t names_index = header.e_shstrndx;
  if (names_index == SHN_XINDEX) names_index = first.sh_link;

  // check_table bounded count by the file size, so this allocation is too.
  sections_.resize(static_cast<size_t>(count));
  for (size_t i = 0; i < sections_.size(); ++i) {
    const auto raw = load<Elf64_Shdr>(bytes_, header.e_shoff + i * header.e_shentsize);
    ElfSection& section = sections_[i];
    section.type = raw.sh_type;
    section.flags = raw.sh_flags;
    section.address = raw.sh_addr;
    section.offset = raw.sh_offset;
    section.size = raw.sh_size;
    section.link = raw.sh_link;
    section.info = raw.sh_info;
    section.entry_size = raw.sh_entsize;
  }

  // Names come from the section name string table; without one, sections stay unnamed.
  if (names_index != SHN_UNDEF) {
    if (names_index >= sections_.size()) {
      return invalid("section name string table index " + str(names_index) + " is out of range (" +
                     str(sections_.size()) + " sections)");
    }
    const ElfSection& names = sections_[static_cast<size_t>(names_index)];
    if (names.type != SHT_STRTAB) {
      return invalid("section name string table (section " + str(names_index) + ") has type " + str(names.type) +
                     ", not SHT_STRTAB");
    }
    if (!fits(names.offset, names.size, bytes_.size())) {
      return invalid("truncated: section name string table at offset " + str(names.offset) + ", size " +
                     str(names.size) + " runs past end of file (" + str(bytes_.size()) + " bytes)");
    }
    const auto table = bytes_.subspan(static_cast<size_t>(names.offset), static_cast<size_t>(names.size));
    NameBudget budget(table.size());
    for (size_t i = 0; i < sections_.size(); ++i) {
      if (sections_[i].type == SHT_NULL) continue;
      std::string_view name;
      std::string why;
      const auto raw = load<Elf64_Shdr>(bytes_, header.e_shoff + i * header.e_shentsize);
      if (!string_at(table, raw.sh_name, &name, &why)) {
        return invalid("section " + str(i) + ": name " + why);
      }
      if (!budget.take(name.size())) {
        return invalid(budget.exceeded("section header table", table.size()));
      }
      sections_[i].name = std::string(name);
    }
  }

  // Every section with contents must lie inside the file, so section() never checks again.
  for (size_t i = 0; i < sections_.size(); ++i) {
    const ElfSection& section = sections_[i];
    if (section.type == SHT_NULL || section.type == SHT_NOBITS) continue;
    if (!fits(section.offset, section.size, bytes_.size())) {
      return invalid("truncated: " + describe_section(i) + " at offset " + str(section.offset) + ", size " +
                     str(section.size) + " runs past end of file (" + str(bytes_.size()) + " bytes)");
    }
  }
  return Status::ok();
}

std::string ElfImage::describe_section(size_t index) const {
  std::string text = "section " + str(index);
  if (!sections_[index].name.empty()) text += " (" + sections_[index].name + ")";
  return text;
}

Result<Span<const uint8_t>> ElfImage::linked_string_table(size_t index) const {
  const uint32_t link = sections_[index].link;
  if (link == SHN_UNDEF || link >= sections_.size()) {
    return invalid(describe_section(index) + ": linked string table index " + str(link) + " is out of range (" +
                   str(sections_.size()) + " sections)");
  }
  const ElfSection& table = sections_[link];
  if (table.type != SHT_STRTAB) {
    return invalid(describe_section(index) + ": linked " + describe_section(link) + " is not a string table");
  }
  // Its bounds were checked with every other section's.
  return bytes_.subspan(static_cast<size_t>(table.offset), static_cast<size_t>(table.size));
}

Status ElfImage::read_exported_symbols(size_t index) {
  const ElfSection& symbols = sections_[index];
  const std::string what = describe_section(index);
  PLUGRT_RETURN_IF_ERROR(check_entries(what, symbols, sizeof(Elf64_Sym)));
  PLUGRT_ASSIGN_OR_RETURN(const auto names, linked_string_table(index));
  const uint64_t count = symbols.size / symbols.entry_size;
  std::vector<std::string_view> found;
  for (uint64_t i = 0; i < count; ++i) {
    const auto symbol = load<Elf64_Sym>(bytes_, symbols.offset + i * symbols.entry_size);
    if (symbol.st_shndx == SHN_UNDEF) continue;
    const unsigned binding = ELF64_ST_BIND(symbol.st_info);
    if (binding != STB_GLOBAL && binding != STB_WEAK) continue;
    const unsigned visibility = ELF64_ST_VISIBILITY(symbol.st_other);
    if (visibility != STV_DEFAULT && visibility != STV_PROTECTED) continue;
    std::string_view name;
    std::string why;
    if (!string_at(names, symbol.st_name, &name, &why)) {
      return invalid(what + ": symbol " + str(i) + " name " + why);
    }
    if (!name.empty()) found.push_back(name);
  }
  // Deduplicated as views, before anything is copied.
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  NameBudget budget(names.size());
  exported_symbols_.reserve(found.size());
  for (std::string_view name : found) {
    if (!budget.take(name.size())) return invalid(budget.exceeded(what, names.size()));
    exported_symbols_.emplace_back(name);
  }
  return Status::ok();
}

Status ElfImage::read_needed_libraries(size_t index) {
  const ElfSection& dynamic = sections_[index];
  const std::string what = describe_section(index);
  PLUGRT_RETURN_IF_ERROR(check_entries(what, dynamic, sizeof(Elf64_Dyn)));
  PLUGRT_ASSIGN_OR_RETURN(const auto names, linked_string_table(index));
  const uint64_t count = dynamic.size / dynamic.entry_size;
  NameBudget budget(names.size());
  for (uint64_t i = 0; i < count; ++i) {
    const auto entry = load<Elf64_Dyn>(bytes_, dynamic.offset + i * dynamic.entry_size);
    if (entry.d_tag == DT_NULL) break;
    if (entry.d_tag != DT_NEEDED) continue;
    std::string_view name;
    std::string why;
    if (!string_at(names, entry.d_un.d_val, &name, &why)) {
      return invalid(what + ": DT_NEEDED entry " + str(i) + " name " + why);
    }
    if (name.empty()) return invalid(what + ": DT_NEEDED entry " + str(i) + " is empty");
    if (!budget.take(name.size())) return invalid(budget.exceeded(what, names.size()));
    needed_libraries_.emplace_back(name);
  }
  return Status::ok();
}

const ElfSection* ElfImage::find_section(std::string_view name) const {
  for (const ElfSection& section : sections_) {
    if (section.type != SHT_NULL && section.name == name) return &section;
  }
  return nullptr;
}

std::optional<Span<const uint8_t>> ElfImage::section(std::string_view name) const {
  const ElfSection* found = find_section(name);
  if (found == nullptr) return std::nullopt;
  if (found->type == SHT_NOBITS) return Span<const uint8_t>();
  return bytes_.subspan(static_cast<size_t>(found->offset), static_cast<size_t>(found->size));
}

bool ElfImage::exports(std::string_view symbol) const {
  const auto it = std::lower_bound(exported_symbols_.begin(), exported_symbols_.end(), symbol);
  return it != exported_symbols_.end() && *it == symbol;
}

std::string ElfImage::machine_name(uint16_t machine) {
  switch (machine) {
    case EM_NONE: return "no machine";
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM";
    case EM_386: return "i386";
    case EM_RISCV: return "RISC-V";
    case EM_PPC64: return "PowerPC64";
    case EM_PPC: return "PowerPC";
    case EM_S390: return "s390";
    case EM_MIPS: return "MIPS";
    case EM_SPARC: return "SPARC";
    case EM_SPARCV9: return "SPARC V9";
    case EM_IA_64: return "IA-64";
    case EM_ALPHA: return "Alpha";
    case EM_PARISC: return "PA-RISC";
    case EM_68K: return "Motorola 68000";
    case EM_SH: return "SuperH";
    case 258: return "LoongArch";  // EM_LOONGARCH, missing from older <elf.h>
    default: return "machine " + str(machine);
  }
}

std::string ElfImage::target_name(uint16_t machine, int elf_class, int data_encoding) {
  std::string text = machine_name(machine) + " (";
  if (elf_class == ELFCLASS64) {
    text += "64-bit";
  } else if (elf_class == ELFCLASS32) {
    text += "32-bit";
  } else {
    text += "ELF class " + std::to_string(elf_class);
  }
  if (data_encoding != host_elf_data_encoding()) {
    text += data_encoding == ELFDATA2MSB ? ", big-endian" : ", little-endian";
  }
  return text + ")";
}

std::string ElfImage::target_name() const { return target_name(machine_, elf_class_, data_encoding_); }

std::string ElfImage::host_target_name() {
  return target_name(host_elf_machine(), host_elf_class(), host_elf_data_encoding());
}

std::string ElfImage::type_name(uint16_t type) {
  switch (type) {
    case ET_NONE: return "no file type";
    case ET_REL: return "relocatable object";
    case ET_EXEC: return "executable";
    case ET_DYN: return "shared object";
    case ET_CORE: return "core dump";
    default: return "ELF type " + str(type);
  }
}

}  // namespace plugrt::plugins
