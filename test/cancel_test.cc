// SPDX-License-Identifier: Apache-2.0
// Stopping a call: an endless Loop (a trip count of INT64_MAX from an input) stopped by
// a time limit and by a cancel from another thread, through the ABI (1.8) to the
// portable backend; the method usable afterwards; a finite call unaffected.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/method.h"
#include "plugrt/placement/compile.h"

namespace plugrt {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

/// v = Loop(n, true, v0) with body v_out = v_in + 1, cond_out = cond_in: n iterations.
std::vector<uint8_t> counting_loop() {
  GraphBuilder body;
  const ValueId i = body.add_value("i", DType::kInt64, {});
  const ValueId cond_in = body.add_value("cond_in", DType::kBool, {});
  const ValueId v_in = body.add_value("v_in", DType::kFloat32, {1});
  const ValueId v_out = body.add_value("v_out", DType::kFloat32, {1});
  const ValueId cond_out = body.add_value("cond_out", DType::kBool, {});
  const ValueId one = body.add_constant_f32("one", {1}, {1.0f});
  for (ValueId input : {i, cond_in, v_in}) body.add_input(input);
  body.add_node("Add", "step", {v_in, one}, {v_out});
  body.add_node("Identity", "keep_going", {cond_in}, {cond_out});
  body.add_output(cond_out);
  body.add_output(v_out);

  GraphBuilder graph;
  const ValueId n = graph.add_value("n", DType::kInt64, {});
  const ValueId v0 = graph.add_value("v0", DType::kFloat32, {1});
  const ValueId v = graph.add_value("v", DType::kFloat32, {1});
  const ValueId go = graph.add_constant("go", DType::kBool, {}, {1});
  graph.add_input(n);
  graph.add_input(v0);
  graph.add_node("Loop", "count", {n, go, v0}, {v}, {Attribute::Graph("body", body.finish())});
  graph.add_output(v);
  return graph.finish();
}

class CancelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(register_builtin_backends(registry_).is_ok());
    placement::CompileOptions options;
    options.backends = {"portable"};
    Result<placement::CompiledModel> compiled = placement::compile_graph(counting_loop(), registry_, options);
    ASSERT_TRUE(compiled.is_ok()) << compiled.status().message();
    Result<Program> program = Program::from_bytes(compiled->program);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    program_ = std::make_unique<Program>(std::move(*program));
    Result<Method> method = Method::load(*program_, "forward", registry_);
    ASSERT_TRUE(method.is_ok()) << method.status().message();
    method_ = std::make_unique<Method>(std::move(*method));
  }

  /// Sets the trip count and the start value.
  void set_inputs(int64_t trips) {
    int64_t n_shape[1] = {0};
    int64_t v_shape[1] = {1};
    float start = 0;
    DLTensor n{&trips, {kDLCPU, 0}, 0, {kDLInt, 64, 1}, n_shape, nullptr, 0};
    DLTensor v0{&start, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, v_shape, nullptr, 0};
    ASSERT_TRUE(method_->set_input(0, n).is_ok());
    ASSERT_TRUE(method_->set_input(1, v0).is_ok());
  }

  float result() const { return *static_cast<const float*>(method_->output(0).data); }

  Registry registry_;
  std::unique_ptr<Program> program_;
  std::unique_ptr<Method> method_;
};

TEST_F(CancelTest, AnEndlessLoopStopsAtItsTimeLimit) {
  set_inputs(std::numeric_limits<int64_t>::max());
  ExecuteOptions options;
  options.timeout = milliseconds(200);
  const Status status = method_->execute(options);
  EXPECT_EQ(status.code(), Error::kCancelled);
  EXPECT_THAT(status.message(), HasSubstr("passed its time limit of 200 ms"));
  EXPECT_THAT(status.message(), HasSubstr("Loop 'count': stopped at iteration"));

  set_inputs(5);  // the method still runs, and a call within its limit is not stopped
  ASSERT_TRUE(method_->execute(options).is_ok());
  EXPECT_EQ(result(), 5.0f);
}

TEST_F(CancelTest, AnEndlessLoopStopsWhenAnotherThreadCancelsIt) {
  set_inputs(std::numeric_limits<int64_t>::max());
  std::atomic<uint32_t> cancel{0};
  ExecuteOptions options;
  options.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(100));
    cancel.store(1);
  });
  const Status status = method_->execute(options);
  canceller.join();
  EXPECT_EQ(status.code(), Error::kCancelled);
  EXPECT_THAT(status.message(), HasSubstr("cancelled"));

  // A flag already set stops the call before its first delegate.
  set_inputs(3);
  EXPECT_THAT(method_->execute(options).message(), HasSubstr("cancelled (before delegate"));
  cancel.store(0);
  ASSERT_TRUE(method_->execute(options).is_ok());
  EXPECT_EQ(result(), 3.0f);
}

}  // namespace
}  // namespace plugrt
