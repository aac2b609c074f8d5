// SPDX-License-Identifier: Apache-2.0
#include "plugrt/memory_planner.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <utility>

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

/// The rule without an index: each buffer compared with every one placed before it.
MemoryPlan plan_by_scanning_all(const std::vector<BufferLifetime>& buffers, uint64_t alignment) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].size > buffers[b].size; });
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> placed;
  for (size_t index : order) {
    const BufferLifetime& buffer = buffers[index];
    const uint64_t size = align_up(std::max<uint64_t>(buffer.size, 1), alignment);
    std::vector<std::pair<uint64_t, uint64_t>> live;  // [begin, end) of those live with it
    for (size_t other : placed) {
      const BufferLifetime& o = buffers[other];
      if (o.first_step <= buffer.last_step && buffer.first_step <= o.last_step) {
        live.emplace_back(plan.offsets[other],
                          plan.offsets[other] + align_up(std::max<uint64_t>(o.size, 1), alignment));
      }
    }
    std::sort(live.begin(), live.end());
    uint64_t offset = 0;
    for (const auto& [begin, end] : live) {
      if (offset + size <= begin) break;
      offset = std::max(offset, end);
    }
    plan.offsets[index] = offset;
    placed.push_back(index);
    plan.arena_size = std::max(plan.arena_size, offset + size);
  }
  return plan;
}

TEST(MemoryPlanner, TheIndexFindsWhatScanningEveryBufferFinds) {
  // Short and long lifetimes (beyond the index's 64-step split), equal and varied sizes.
  std::mt19937 random(20261127);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferLifetime> buffers(1 + random() % 400);
    for (BufferLifetime& b : buffers) {
      b.first_step = random() % 300;
      b.last_step = b.first_step + (random() % 4 == 0 ? random() % 250 : random() % 6);
      b.size = trial % 2 ? 1000 : 1 + random() % 100000;
    }
    const MemoryPlan indexed = plan_memory(buffers, 64), scanned = plan_by_scanning_all(buffers, 64);
    EXPECT_EQ(indexed.offsets, scanned.offsets) << "trial " << trial;
    EXPECT_EQ(indexed.arena_size, scanned.arena_size) << "trial " << trial;
  }
}

TEST(MemoryPlanner, AnEmptyPlanHasNoArena) { EXPECT_EQ(plan_memory({}, 64).arena_size, 0u); }

}  // namespace
}  // namespace plugrt
