// SPDX-License-Identifier: Apache-2.0
// The fixed header of a program file (.prt) and the format's constants.
// core/FORMAT.md describes the whole layout; this header is what code shares.
#ifndef PLUGRT_PROGRAM_FORMAT_H_
#define PLUGRT_PROGRAM_FORMAT_H_

#include <cstddef>
#include <cstdint>

namespace plugrt {

/// "PLUGRTPG": the first 8 bytes of every program file.
inline constexpr char kProgramMagic[8] = {'P', 'L', 'U', 'G', 'R', 'T', 'P', 'G'};
/// A reader refuses a file of another major; a newer minor only appends schema fields,
/// which older readers ignore.
inline constexpr uint32_t kProgramFormatMajor = 1;
inline constexpr uint32_t kProgramFormatMinor = 2;
/// The flatbuffer's own file identifier.
inline constexpr char kProgramFileIdentifier[] = "PRTP";
/// Segments start at a multiple of this in the file and in the segment area, so that a
/// mapped file hands backends aligned data.
inline constexpr uint64_t kSegmentAlignment = 64;
/// Arena offsets of planned values are multiples of this.
inline constexpr uint64_t kArenaAlignment = 64;
/// Limits a reader enforces, far above real programs, so that arithmetic on checked
/// values cannot overflow.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;
inline constexpr uint64_t kMaxArenaBytes = uint64_t{1} << 40;
inline constexpr int kMaxTensorRank = 8;

/// The 64-byte header at offset 0, little-endian. Offsets are from the start of the file.
struct ProgramFileHeader {
  char magic[8];
  uint32_t format_major;
  uint32_t format_minor;
  uint32_t header_size;  ///< sizeof(ProgramFileHeader) as written; >= 64
  uint32_t flags;        ///< 0; readers refuse bits they do not know
  uint64_t flatbuffer_offset;
  uint64_t flatbuffer_size;
  uint64_t segments_offset;  ///< a multiple of kSegmentAlignment
  uint64_t segments_size;
  uint64_t reserved;  ///< 0
};
static_assert(sizeof(ProgramFileHeader) == 64, "the program header is 64 bytes");

}  // namespace plugrt

#endif  // PLUGRT_PROGRAM_FORMAT_H_
