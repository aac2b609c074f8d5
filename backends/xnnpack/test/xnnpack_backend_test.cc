// SPDX-License-Identifier: Apache-2.0
// The XNNPACK plugin as a whole: the shared backend suite (test/backend_support/
// backend_suite.h), the bundled models, and its pool's workers between calls.
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "xnnpack_test_support.h"

namespace plugrt::xnnpack_test {
namespace {

/// The time on a core, in nanoseconds, of every thread of this process but the caller.
uint64_t other_threads_cpu_ns() {
  const std::string self = std::to_string(static_cast<long>(syscall(SYS_gettid)));
  uint64_t total = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    if (task.path().filename() == self) continue;
    std::ifstream schedstat(task.path() / "schedstat");
    uint64_t on_cpu = 0;
    if (schedstat >> on_cpu) total += on_cpu;
  }
  return total;
}

class XnnpackBackendTest : public ::testing::Test {
 protected:
  XnnpackEnvironment env_;
};

TEST_F(XnnpackBackendTest, TinyCnnRunsWhollyOnXnnpackAndMatchesPyTorch) {
  compiler::CompiledModel compiled = env_.compile_model("tiny_cnn", {"xnnpack"});
  ASSERT_FALSE(compiled.program.empty());
  EXPECT_TRUE(compiled.summary.untaken_ops.empty());
  ASSERT_EQ(compiled.summary.partitions.size(), 1u);
  EXPECT_EQ(compiled.summary.partitions[0].backend, "xnnpack");
  EXPECT_EQ(compiled.summary.partitions[0].num_nodes, compiled.summary.num_nodes);
  Result<Method> method = env_.load(compiled.program);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_FALSE(method->report().delegates.at(0).fell_back);
  EXPECT_LT(difference_from_pytorch(*method, "tiny_cnn"), 1e-4);
}

TEST_F(XnnpackBackendTest, MlpAndEncoderRunMixedWithPortableAndMatchPyTorch) {
  for (const std::string name : {"mlp", "tiny_encoder"}) {
    SCOPED_TRACE(name);
    compiler::CompiledModel compiled = env_.compile_model(name, {"xnnpack"});
    ASSERT_FALSE(compiled.program.empty());
    bool any_xnnpack = false;
    for (const auto& partition : compiled.summary.partitions) any_xnnpack |= partition.backend == "xnnpack";
    EXPECT_TRUE(any_xnnpack) << "xnnpack took nothing of " << name;
    Result<Method> method = env_.load(compiled.program);
    ASSERT_TRUE(method.is_ok()) << method.status().to_string();
    EXPECT_LT(difference_from_pytorch(*method, name), 1e-4);
  }
}

TEST_F(XnnpackBackendTest, ThePoolsWorkersSleepAfterACall) {
  compiler::CompiledModel compiled = env_.compile_model("tiny_cnn", {"xnnpack"});
  MethodOptions options;
  options.num_threads = 2;
  options.adapt_threads = false;  // every call on the pool
  Result<Method> method = env_.load(compiled.program, options);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  for (uint32_t seed = 0; seed < 3; ++seed) run_with_seed(*method, seed);
  // pthreadpool's worker spins a million pause instructions (tens of milliseconds) for
  // the next region unless the handle parks it; asleep, it takes no time at all.
  const uint64_t before = other_threads_cpu_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_LT(other_threads_cpu_ns() - before, uint64_t{5'000'000});
}

const BackendUnderTest kXnnpack{"xnnpack", PLUGRT_XNNPACK_PLUGIN_FILE, "PRTXNNPK", "XNNPACK", "libXNNPACK", "tiny_cnn"};
INSTANTIATE_TEST_SUITE_P(Backend, BackendSuite, ::testing::Values(kXnnpack), backend_suite_name);
INSTANTIATE_TEST_SUITE_P(Backend, QuantizedSuite, ::testing::Values(kXnnpack), backend_suite_name);

}  // namespace
}  // namespace plugrt::xnnpack_test
