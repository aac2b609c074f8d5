// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a program file's bytes through the loader (header, FlatBuffers
// verification and every check of core/src/program_verifier.cc), then describe() on
// every method of a file that loads, which reads through the verified indices. Must
// never crash, hang or read out of bounds; a bad file only ever fails with
// kInvalidProgram.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "plugrt/program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  plugrt::Result<plugrt::Program> program =
      plugrt::Program::from_bytes(plugrt::Span<const uint8_t>(data, size), "fuzz.prt");
  if (!program.is_ok()) {
    // Anything but an invalid program (an allocation failure aside) is a bug.
    if (program.code() != plugrt::Error::kInvalidProgram && program.code() != plugrt::Error::kMemoryAllocationFailed) {
      std::abort();
    }
    return 0;
  }
  for (const std::string& name : program->method_names()) {
    plugrt::Result<plugrt::MethodSummary> summary = program->describe(name);
    if (!summary.is_ok()) std::abort();  // a listed method is always found
    uint64_t total = 0;
    for (const plugrt::TensorSpec& spec : summary->inputs) total += spec.num_bytes();
    for (const plugrt::TensorSpec& spec : summary->outputs) total += spec.num_bytes();
    for (const plugrt::DelegateSummary& delegate : summary->delegates) total += delegate.blob_size;
    (void)total;
  }
  (void)program->producer();
  return 0;
}
