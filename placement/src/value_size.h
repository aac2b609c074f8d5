// SPDX-License-Identifier: Apache-2.0
// Sizes of graph IR values, for costs: saturating, since a cost never needs more.
#ifndef PLUGRT_PLACEMENT_VALUE_SIZE_H_
#define PLUGRT_PLACEMENT_VALUE_SIZE_H_

#include <cstdint>
#include <limits>

#include "plugrt/dtype.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::placement {

/// Elements of a value (1 for a scalar), saturating at 2^62.
inline uint64_t value_elements(const ir::Value& value) {
  constexpr uint64_t kCap = uint64_t{1} << 62;
  uint64_t count = 1;
  if (value.shape() == nullptr) return count;
  for (int64_t dim : *value.shape()) {
    if (dim <= 0) return 0;
    const auto d = static_cast<uint64_t>(dim);
    count = count > kCap / d ? kCap : count * d;
  }
  return count;
}

/// Bytes of a value (elements x element size), saturating.
inline uint64_t value_bytes(const ir::Value& value) {
  const uint64_t size = dtype_size(static_cast<DType>(value.dtype()));
  const uint64_t elements = value_elements(value);
  return elements > std::numeric_limits<uint64_t>::max() / 16 ? elements : elements * size;
}

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_VALUE_SIZE_H_
