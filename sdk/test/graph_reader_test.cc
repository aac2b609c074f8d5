// SPDX-License-Identifier: Apache-2.0
// sdk::read_graph: what it accepts and refuses before a backend walks a graph.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "plugrt/sdk/graph.h"
#include "plugrt/sdk/testing/matchers.h"

namespace plugrt::sdk {
namespace {

using ::plugrt::sdk::testing::ErrorIs;
using ::plugrt::sdk::testing::IsOk;

/// One float32 value of shape [2, 3], as a graph IR buffer.
std::vector<uint8_t> one_value_graph() {
  flatbuffers::FlatBufferBuilder builder;
  const std::vector<int64_t> shape = {2, 3};
  auto value = ir::CreateValueDirect(builder, "x", ir::DType::Float32, &shape);
  std::vector<flatbuffers::Offset<ir::Value>> values = {value};
  const std::vector<int32_t> inputs = {0};
  ir::FinishGraphBuffer(builder, ir::CreateGraphDirect(builder, 1, 17, &values, nullptr, &inputs, &inputs));
  return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

TEST(GraphReader, ReadsAWellFormedGraph) {
  const std::vector<uint8_t> graph = one_value_graph();
  Expected<const ir::Graph*> read = read_graph(graph.data(), graph.size());
  ASSERT_THAT(read, IsOk());
  EXPECT_EQ(num_values(**read), 1u);
  EXPECT_THAT(shape_of(*value_at(**read, 0)), ::testing::ElementsAre(2, 3));
}

// Found by the graph IR fuzzer: the FlatBuffers verifier passes a buffer whose 8-byte
// shape elements are misaligned in memory, which shape_of() then read misaligned.
TEST(GraphReader, RefusesMisalignedEightByteVectors) {
  const std::vector<uint8_t> graph = one_value_graph();
  std::vector<uint64_t> storage(graph.size() / 8 + 2);
  auto* shifted = reinterpret_cast<uint8_t*>(storage.data()) + 4;  // 4-aligned, not 8-aligned
  std::memcpy(shifted, graph.data(), graph.size());
  EXPECT_THAT(read_graph(shifted, graph.size()), ErrorIs(PLUGRT_STATUS_INVALID_ARGUMENT));
}

}  // namespace
}  // namespace plugrt::sdk
