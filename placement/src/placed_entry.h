// SPDX-License-Identifier: Apache-2.0
// The payload of a placed method's cache entry (load_placer.h): the report lines' size (8
// bytes, little-endian), the lines ("origin\treason\n" per delegate), zeros to a multiple
// of 64 bytes, then the placed program file; or no program, when the method is placed as
// the program already is (the entry then only saves placing it again, and copies none of
// its blobs). Read from disk: everything is checked, as in a program file.
#ifndef PLUGRT_PLACEMENT_SRC_PLACED_ENTRY_H_
#define PLUGRT_PLACEMENT_SRC_PLACED_ENTRY_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "plugrt/method.h"
#include "plugrt/program.h"
#include "plugrt/span.h"

namespace plugrt::placement {

/// The payload for `placed`; `program` is its program file, or empty for "as compiled".
std::vector<uint8_t> placed_entry(const PlacedProgram& placed, Span<const uint8_t> program);

/// The placed method of a payload, whose program (if any) stays in `bytes`, which `owner`
/// keeps alive and which must be 64-byte aligned. `as_compiled` is the program the entry
/// belongs to. Errors: kInvalidProgram naming as_compiled's origin.
Result<PlacedProgram> read_placed_entry(Span<const uint8_t> bytes, std::shared_ptr<const void> owner,
                                        const Program& as_compiled);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_SRC_PLACED_ENTRY_H_
