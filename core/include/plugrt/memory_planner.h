// SPDX-License-Identifier: Apache-2.0
// Memory planning: place buffers with known lifetimes in one arena, reusing the bytes
// of buffers that are dead. Header-only, so that backends built as plugins (the
// portable backend among them) can plan their scratch memory the same way.
#ifndef PLUGRT_MEMORY_PLANNER_H_
#define PLUGRT_MEMORY_PLANNER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace plugrt {

/// One buffer: its size and the steps during which it is live (inclusive).
struct BufferLifetime {
  uint64_t size = 0;
  uint32_t first_step = 0;
  uint32_t last_step = 0;
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // one per buffer, each a multiple of the alignment
  uint64_t arena_size = 0;        // a multiple of the alignment
};

constexpr uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/// Greedy by size: the largest buffers are placed first, each at the lowest aligned
/// offset that overlaps no placed buffer live at the same time. Deterministic.
/// Sizes must be small enough that the arena fits in uint64 (callers check).
inline MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers, uint64_t alignment = 64) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].size > buffers[b].size; });

  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  struct Placed {
    uint64_t begin, end;
    size_t index;
  };
  std::vector<Placed> placed;  // sorted by begin
  std::vector<Placed> conflicts;
  for (size_t index : order) {
    const BufferLifetime& buffer = buffers[index];
    uint64_t size = align_up(std::max<uint64_t>(buffer.size, 1), alignment);
    conflicts.clear();
    for (const Placed& other : placed) {
      const BufferLifetime& o = buffers[other.index];
      if (o.first_step <= buffer.last_step && buffer.first_step <= o.last_step) conflicts.push_back(other);
    }
    uint64_t offset = 0;
    for (const Placed& other : conflicts) {  // in offset order: take the first gap that fits
      if (offset + size <= other.begin) break;
      offset = std::max(offset, other.end);
    }
    plan.offsets[index] = offset;
    Placed entry{offset, offset + size, index};
    placed.insert(std::upper_bound(placed.begin(), placed.end(), entry,
                                   [](const Placed& a, const Placed& b) { return a.begin < b.begin; }),
                  entry);
    plan.arena_size = std::max(plan.arena_size, offset + size);
  }
  return plan;
}

}  // namespace plugrt

#endif  // PLUGRT_MEMORY_PLANNER_H_
