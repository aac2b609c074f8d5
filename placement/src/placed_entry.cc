// SPDX-License-Identifier: Apache-2.0
#include "placed_entry.h"

#include <cstring>
#include <string>
#include <string_view>

namespace plugrt::placement {

namespace {

constexpr size_t kProgramAlignment = 64;
constexpr std::string_view kUnavailable = "unavailable";

}  // namespace

std::vector<uint8_t> placed_entry(const PlacedProgram& placed, Span<const uint8_t> program,
                                  const std::vector<std::string>& unavailable) {
  std::string lines;
  for (const std::string& name : unavailable) lines += std::string(kUnavailable) + "\t" + name + "\n";
  for (size_t d = 0; d < placed.blob_origins.size(); ++d) {
    lines += placed.blob_origins[d] + "\t" + placed.placement_reasons[d] + "\n";
  }
  const uint64_t size = lines.size();
  const size_t program_offset = (8 + lines.size() + kProgramAlignment - 1) / kProgramAlignment * kProgramAlignment;
  std::vector<uint8_t> entry(program_offset + program.size(), 0);
  std::memcpy(entry.data(), &size, 8);
  std::memcpy(entry.data() + 8, lines.data(), lines.size());
  if (!program.empty()) std::memcpy(entry.data() + program_offset, program.data(), program.size());
  return entry;
}

Result<PlacedProgram> read_placed_entry(Span<const uint8_t> bytes, std::shared_ptr<const void> owner,
                                        const Program& as_compiled, std::vector<std::string>* unavailable) {
  const std::string& origin = as_compiled.origin();
  const Status bad(Error::kInvalidProgram, origin + ": a damaged placed-method cache entry");
  if (bytes.size() < 8) return bad;
  uint64_t size = 0;
  std::memcpy(&size, bytes.data(), 8);
  if (size > bytes.size() - 8) return bad;
  const size_t program_offset = (8 + size + kProgramAlignment - 1) / kProgramAlignment * kProgramAlignment;
  const bool placed_as_compiled = program_offset >= bytes.size();
  Result<Program> program = placed_as_compiled
                                ? Result<Program>(as_compiled)
                                : Program::from_shared(bytes.subspan(program_offset, bytes.size() - program_offset),
                                                       std::move(owner), origin);
  if (!program.is_ok()) return program.status();
  PlacedProgram placed{std::move(program).value(), {}, {}, {}, {}, {}};
  const std::string lines(reinterpret_cast<const char*>(bytes.data()) + 8, size);
  for (size_t start = 0; start < lines.size();) {
    const size_t end = lines.find('\n', start);
    const size_t tab = lines.find('\t', start);
    if (end == std::string::npos || tab == std::string::npos || tab > end) return bad;
    std::string field = lines.substr(tab + 1, end - tab - 1);
    if (std::string_view(lines).substr(start, tab - start) == kUnavailable) {
      if (!placed.blob_origins.empty()) return bad;  // they come first
      if (unavailable != nullptr) unavailable->push_back(std::move(field));
    } else {
      placed.blob_origins.push_back(placed_as_compiled ? "program" : "cache");
      placed.placement_reasons.push_back(std::move(field));
    }
    start = end + 1;
  }
  return placed;
}

}  // namespace plugrt::placement
