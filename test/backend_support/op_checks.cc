// SPDX-License-Identifier: Apache-2.0
#include "op_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace plugrt::backend_test {

void expect_taken_and_matching_portable(PluginEnvironment& env, const std::string& backend, const OpCase& c,
                                        const MethodOptions& options) {
  const std::vector<uint8_t> graph = c.build();
  compiler::CompiledModel taken = env.compile(graph, {backend});
  ASSERT_FALSE(taken.program.empty());
  EXPECT_THAT(taken.summary.untaken_ops, ::testing::IsEmpty());
  EXPECT_LE(taken.summary.partitions.size(), c.max_partitions);
  for (const compiler::PartitionSummary& partition : taken.summary.partitions) EXPECT_EQ(partition.backend, backend);
  compiler::CompiledModel portable = env.compile(graph, {"portable"});

  Result<Method> on_backend = env.load(taken.program, options);
  ASSERT_TRUE(on_backend.is_ok()) << on_backend.status().to_string();
  for (const DelegatePlacement& placement : on_backend->report().delegates) {
    EXPECT_EQ(placement.backend, backend);
    EXPECT_FALSE(placement.fell_back) << placement.reason;
  }
  Result<Method> on_portable = env.load(portable.program);
  ASSERT_TRUE(on_portable.is_ok()) << on_portable.status().to_string();

  for (uint32_t seed : {1u, 2u}) {
    std::vector<std::vector<float>> actual = run_with_seed(*on_backend, seed);
    std::vector<std::vector<float>> expected = run_with_seed(*on_portable, seed);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t o = 0; o < actual.size(); ++o) {
      EXPECT_LT(relative_difference(actual[o], expected[o]), 1e-4) << "output " << o << ", seed " << seed;
    }
  }
}

void expect_left_to_portable(PluginEnvironment& env, const std::string& backend, const RefusedCase& c) {
  const std::vector<uint8_t> graph = c.build();
  compiler::CompiledModel mixed = env.compile(graph, {backend});
  ASSERT_FALSE(mixed.program.empty());
  EXPECT_EQ(mixed.summary.untaken_ops.count(c.op), 1u) << backend << " took " << c.op;
  compiler::CompiledModel portable = env.compile(graph, {"portable"});
  Result<Method> a = env.load(mixed.program);
  Result<Method> b = env.load(portable.program);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  std::vector<std::vector<float>> actual = run_with_seed(*a, 3);
  std::vector<std::vector<float>> expected = run_with_seed(*b, 3);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t o = 0; o < actual.size(); ++o) EXPECT_LT(relative_difference(actual[o], expected[o]), 1e-4);
}

}  // namespace plugrt::backend_test
