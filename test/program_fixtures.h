// SPDX-License-Identifier: Apache-2.0
// Small programs for the executor tests, built with the real ProgramBuilder.
#ifndef PLUGRT_TEST_PROGRAM_FIXTURES_H_
#define PLUGRT_TEST_PROGRAM_FIXTURES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plugrt/method.h"
#include "plugrt/program_builder.h"
#include "plugrt/status.h"

namespace plugrt::testing {

struct OffsetProgramOptions {
  std::string backend = "offset";  ///< the test plugins' backend: y = x + offset
  float offset = 1.5f;
  /// The blob the backend gets; empty: the offset as 4 bytes (what the test plugin reads).
  std::vector<uint8_t> blob;
  bool with_fallback = true;  ///< the portable fallback: Add(x, offset)
  int num_delegates = 1;      ///< a chain of this many delegate calls, each adding `offset`
  /// The backend of each delegate in turn (the chain is as long as the list); empty:
  /// `num_delegates` delegates, all on `backend`.
  std::vector<std::string> backends;
  std::vector<CompileSpec> compile_specs;  ///< stored with every delegate
};

/// A program whose "forward" maps x (float32 [2, 3]) to y = x + offset * num_delegates.
std::vector<uint8_t> offset_program(const OffsetProgramOptions& options = {});

/// A graph IR blob computing y = x + offset for x of `shape`.
std::vector<uint8_t> add_offset_graph(const std::vector<int64_t>& shape, float offset);

/// A graph IR version 2 blob whose dimensions vary: x (float32 [n, 4], n in 1..max_n)
/// -> Relu -> Reshape to [4 * n] (by a constant shape of -1) -> y.
std::vector<uint8_t> relu_flatten_graph(int64_t max_n);

/// A program whose "forward" runs relu_flatten_graph(max_n) on the portable backend:
/// x (float32 [n, 4], n in 1..max_n) -> y (float32 [4 * n]), format 1.2.
std::vector<uint8_t> relu_flatten_program(int64_t max_n);

/// Sets input 0 of `method` from `values` (checked like any caller's input).
Status set_floats(Method& method, size_t input, std::vector<float> values);
/// The float32 elements of output `index`.
std::vector<float> output_floats(const Method& method, size_t index);

}  // namespace plugrt::testing

#endif  // PLUGRT_TEST_PROGRAM_FIXTURES_H_
