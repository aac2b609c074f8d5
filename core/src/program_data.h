// SPDX-License-Identifier: Apache-2.0
// What a loaded Program holds: the file's bytes (a mapping or an owned copy) and the
// verified pointers into them. Shared by the Program and its Method instances.
#ifndef PLUGRT_SRC_PROGRAM_DATA_H_
#define PLUGRT_SRC_PROGRAM_DATA_H_

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "plugrt/mapped_file.h"
#include "plugrt/program.h"
#include "plugrt/program_format.h"
#include "plugrt/schema/program_generated.h"
#include "plugrt/span.h"

namespace plugrt::internal {

struct ProgramData {
  std::string origin;
  std::optional<MappedFile> file;                                      // set when loaded from a path
  std::unique_ptr<uint8_t, void (*)(void*)> copy{nullptr, std::free};  // from_bytes()
  std::shared_ptr<const void> owner;                                   // from_shared()
  Span<const uint8_t> bytes;

  // Set by verification.
  ProgramFileHeader header{};
  const program::Program* root = nullptr;
  const uint8_t* segments = nullptr;

  /// Segment `index`, which verification has bounds-checked.
  Span<const uint8_t> segment(uint32_t index) const {
    const program::Segment* s = root->segments()->Get(index);
    return Span<const uint8_t>(segments + s->offset(), static_cast<size_t>(s->size()));
  }
};

/// A value's name, dtype and shape as the public API describes them.
inline TensorSpec tensor_spec(const program::TensorValue& value) {
  TensorSpec spec;
  spec.name = value.name() != nullptr ? value.name()->str() : std::string();
  spec.dtype = static_cast<DType>(value.dtype());
  if (value.shape() != nullptr) spec.shape.assign(value.shape()->begin(), value.shape()->end());
  if (value.dims() != nullptr) {
    for (const ir::Dim* dim : *value.dims()) {
      spec.dims.emplace_back(dim->words() != nullptr ? std::vector<int64_t>(dim->words()->begin(), dim->words()->end())
                                                     : std::vector<int64_t>());
    }
  }
  return spec;
}

}  // namespace plugrt::internal

#endif  // PLUGRT_SRC_PROGRAM_DATA_H_
