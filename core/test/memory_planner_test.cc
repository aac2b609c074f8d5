// SPDX-License-Identifier: Apache-2.0
#include "plugrt/memory_planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace plugrt {
namespace {

bool overlaps(const BufferLifetime& a, uint64_t a_offset, const BufferLifetime& b, uint64_t b_offset) {
  const bool live_together = a.first_step <= b.last_step && b.first_step <= a.last_step;
  const bool share_bytes = a_offset < b_offset + b.size && b_offset < a_offset + a.size;
  return live_together && share_bytes;
}

TEST(MemoryPlanner, ReusesTheBytesOfDeadBuffers) {
  // A chain: each buffer is read by the next step only.
  std::vector<BufferLifetime> buffers = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  MemoryPlan plan = plan_memory(buffers, 64);
  EXPECT_EQ(plan.arena_size, 2 * 1024u);  // two buffers of 1000 bytes, 64-aligned
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
}

TEST(MemoryPlanner, AlignsEveryOffsetAndNeverOverlapsLiveBuffers) {
  std::vector<BufferLifetime> buffers;
  uint32_t seed = 7;
  for (int i = 0; i < 200; ++i) {
    seed = seed * 1103515245u + 12345u;
    const uint32_t first = (seed >> 8) % 50;
    buffers.push_back({1 + (seed >> 4) % 5000, first, first + (seed >> 16) % 10});
  }
  MemoryPlan plan = plan_memory(buffers, 64);
  uint64_t total = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % 64, 0u);
    EXPECT_LE(plan.offsets[i] + buffers[i].size, plan.arena_size);
    total += align_up(buffers[i].size, 64);
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      EXPECT_FALSE(overlaps(buffers[i], plan.offsets[i], buffers[j], plan.offsets[j])) << i << " and " << j;
    }
  }
  EXPECT_LT(plan.arena_size, total);  // some reuse happened
}

TEST(MemoryPlanner, AnEmptyPlanHasNoArena) { EXPECT_EQ(plan_memory({}, 64).arena_size, 0u); }

}  // namespace
}  // namespace plugrt
