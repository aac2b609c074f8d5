// SPDX-License-Identifier: Apache-2.0
// Checks a program file before anything uses it: header, flatbuffer, then every
// index, offset, size, shape and dtype, with overflow-safe arithmetic.
#ifndef PLUGRT_SRC_PROGRAM_VERIFIER_H_
#define PLUGRT_SRC_PROGRAM_VERIFIER_H_

#include "plugrt/status.h"
#include "program_data.h"

namespace plugrt::internal {

/// Verifies data.bytes and, when valid, sets data.header, data.root and data.segments.
/// Errors: kInvalidProgram, with a message "<origin>: <what is wrong>".
Status verify_program(ProgramData& data);

}  // namespace plugrt::internal

#endif  // PLUGRT_SRC_PROGRAM_VERIFIER_H_
