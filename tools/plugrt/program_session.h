// SPDX-License-Identifier: Apache-2.0
// What `plugrt run` and `plugrt bench` share (with plugrt-contract-test --model): filling a
// method's inputs from .npy files or with
// seeded random values.
#ifndef PLUGRT_TOOLS_PLUGRT_PROGRAM_SESSION_H_
#define PLUGRT_TOOLS_PLUGRT_PROGRAM_SESSION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "npy.h"
#include "plugrt/method.h"
#include "plugrt/program.h"

namespace plugrt::tools {

/// Sets every input of `method`: from `input_files` ("NAME=FILE.npy", by input name),
/// and for the others seeded random values (float: uniform in [-1, 1]; integers: 0 to
/// 9; bool: either). Errors name the input and the file.
Status fill_inputs(Method& method, const std::vector<std::string>& input_files, uint64_t seed);

/// Output `index` of `method` as an array (its bytes copied).
NpyArray output_array(const Method& method, size_t index);

/// Largest absolute difference between two float32 arrays of the same shape (0 for
/// other dtypes when they are byte-identical, infinity when they differ).
double max_abs_difference(const NpyArray& a, const NpyArray& b);

}  // namespace plugrt::tools

#endif  // PLUGRT_TOOLS_PLUGRT_PROGRAM_SESSION_H_
