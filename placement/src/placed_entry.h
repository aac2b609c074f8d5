// SPDX-License-Identifier: Apache-2.0
// The payload of a placed method's cache entry (load_placer.h): the lines' size (8 bytes,
// little-endian), the lines ("unavailable\tNAME\n" per backend left out as unavailable
// when the method was placed, then "origin\treason\n" per delegate), zeros to a multiple
// of 64 bytes, then the placed program file; or no program, when the method is placed as
// the program already is (the entry then only saves placing it again, and copies none of
// its blobs). Read from disk: everything is checked, as in a program file.
#ifndef PLUGRT_PLACEMENT_SRC_PLACED_ENTRY_H_
#define PLUGRT_PLACEMENT_SRC_PLACED_ENTRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plugrt/method.h"
#include "plugrt/program.h"
#include "plugrt/span.h"

namespace plugrt::placement {

/// The payload for `placed`; `program` is its program file, or empty for "as compiled";
/// `unavailable`: the backends left out because they were not available.
std::vector<uint8_t> placed_entry(const PlacedProgram& placed, Span<const uint8_t> program,
                                  const std::vector<std::string>& unavailable);

/// The placed method of a payload, whose program (if any) stays in `bytes`, which `owner`
/// keeps alive and which must be 64-byte aligned. `as_compiled` is the program the entry
/// belongs to; `unavailable` (out, when not null) gets the backends left out as
/// unavailable. Errors: kInvalidProgram naming as_compiled's origin.
Result<PlacedProgram> read_placed_entry(Span<const uint8_t> bytes, std::shared_ptr<const void> owner,
                                        const Program& as_compiled, std::vector<std::string>* unavailable = nullptr);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_SRC_PLACED_ENTRY_H_
