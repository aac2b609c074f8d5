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

namespace memory_planner_detail {

struct Placed {
  uint64_t begin, end;  // bytes [begin, end) of the arena
  size_t index;         // of the buffer
};

/// The placed buffers, found by lifetime: those live for more than kLongSpan steps in
/// one list every query scans, the others by their first step, so that a query looks
/// only at steps that can overlap it. A graph of 100,000 short-lived values plans in
/// near-linear time instead of comparing each buffer with every one placed before.
class LiveIndex {
 public:
  static constexpr uint32_t kLongSpan = 64;

  explicit LiveIndex(const std::vector<BufferLifetime>& buffers) : buffers_(buffers) {
    uint32_t steps = 0;
    for (const BufferLifetime& b : buffers) steps = std::max(steps, b.first_step + 1);
    by_first_step_.resize(steps);
  }

  void add(const Placed& placed) {
    const BufferLifetime& b = buffers_[placed.index];
    if (b.last_step - b.first_step > kLongSpan) {
      long_.push_back(placed);
    } else {
      by_first_step_[b.first_step].push_back(placed);
    }
  }

  /// The placed buffers live at some step of `buffer`'s, in arena order.
  void overlapping(const BufferLifetime& buffer, std::vector<Placed>& out) const {
    out.clear();
    auto live = [&](const Placed& p) {
      const BufferLifetime& o = buffers_[p.index];
      return o.first_step <= buffer.last_step && buffer.first_step <= o.last_step;
    };
    for (const Placed& p : long_) {
      if (live(p)) out.push_back(p);
    }
    const uint32_t from = buffer.first_step > kLongSpan ? buffer.first_step - kLongSpan : 0;
    const uint32_t to = std::min<uint32_t>(buffer.last_step, static_cast<uint32_t>(by_first_step_.size()) - 1);
    for (uint32_t step = from; step <= to && !by_first_step_.empty(); ++step) {
      for (const Placed& p : by_first_step_[step]) {
        if (live(p)) out.push_back(p);
      }
    }
    std::sort(out.begin(), out.end(), [](const Placed& a, const Placed& b) { return a.begin < b.begin; });
  }

 private:
  const std::vector<BufferLifetime>& buffers_;
  std::vector<Placed> long_;
  std::vector<std::vector<Placed>> by_first_step_;
};

}  // namespace memory_planner_detail

/// Greedy by size: the largest buffers are placed first, each at the lowest aligned
/// offset that overlaps no placed buffer live at the same time. Deterministic.
/// Sizes must be small enough that the arena fits in uint64 (callers check).
inline MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers, uint64_t alignment = 64) {
  using memory_planner_detail::Placed;
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].size > buffers[b].size; });

  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  memory_planner_detail::LiveIndex placed(buffers);
  std::vector<Placed> conflicts;
  for (size_t index : order) {
    const BufferLifetime& buffer = buffers[index];
    uint64_t size = align_up(std::max<uint64_t>(buffer.size, 1), alignment);
    placed.overlapping(buffer, conflicts);
    uint64_t offset = 0;
    for (const Placed& other : conflicts) {  // in offset order: take the first gap that fits
      if (offset + size <= other.begin) break;
      offset = std::max(offset, other.end);
    }
    plan.offsets[index] = offset;
    placed.add(Placed{offset, offset + size, index});
    plan.arena_size = std::max(plan.arena_size, offset + size);
  }
  return plan;
}

}  // namespace plugrt

#endif  // PLUGRT_MEMORY_PLANNER_H_
