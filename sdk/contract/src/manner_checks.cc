// SPDX-License-Identifier: Apache-2.0
// The per-backend checks of manners: host allocations released, wrong arguments refused,
// silence, concurrent handles, the thread budget.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "backend_contract.h"
#include "op_samples.h"
#include "plugrt/graph_builder.h"
#include "thread_watch.h"

namespace plugrt::sdk::testing::kit {

TEST_P(BackendContract, DestroyReleasesEveryHostAllocation) {
  RUNS_IN_ITS_CHILD();
  if (config().isolated) {
    GTEST_SKIP() << "isolated, the backend allocates in its backend host process, where the kit's host services "
                    "are not; run the kit without --isolate for this check";
  }
  SKIP_UNLESS_AVAILABLE();
  SKIP_UNLESS_SAMPLE(s);
  const int64_t before = host_.live_allocations();
  std::vector<void*> allocated;
  EXPECT_CALL(host_, allocate(::testing::_, ::testing::_))
      .Times(::testing::AnyNumber())
      .WillRepeatedly([&](size_t size, size_t alignment) {
        void* p = host_.real_allocate(size, alignment);
        allocated.push_back(p);
        return p;
      });
  EXPECT_CALL(host_, deallocate(::testing::_)).Times(::testing::AnyNumber());
  plugrt_delegate_handle handle = nullptr;
  ASSERT_EQ(init(s->blob, &handle), PLUGRT_STATUS_OK) << host_.last_error();
  if (s->can_execute) {
    Call call = make_call(*s);
    EXPECT_EQ(runtime_->execute(handle, call.finish()), PLUGRT_STATUS_OK) << host_.last_error();
  }
  runtime_->destroy(handle);
  ::testing::Mock::VerifyAndClearExpectations(&host_);
  std::string sizes;
  for (size_t size : host_.live_sizes()) sizes += " " + std::to_string(size);
  EXPECT_EQ(host_.live_allocations(), before)
      << host_.live_allocations() - before << " of the " << allocated.size()
      << " allocations made through host->allocate during init and execute were not released by destroy (sizes:"
      << sizes << " bytes).\nFix: destroy must host->deallocate everything the handle allocated";
  EXPECT_EQ(host_.bad_frees(), 0) << "host->deallocate was called with a pointer host->allocate did not return "
                                     "(or one already freed)";
}

/// Runs `call` on one handle in a child and expects InvalidArgument.
void expect_invalid_argument(const plugrt_backend* backend, const Sample& sample, const std::string& what,
                             const std::function<void(Call&)>& spoil) {
  ChildOutcome outcome = run_guarded([&]() -> std::string {
    PlainHost host;
    plugrt_init_args args = init_args(sample.blob);
    plugrt_delegate_handle handle = nullptr;
    if (backend->init(backend->context, host.table(), &args, &handle) != PLUGRT_STATUS_OK) return "init failed";
    Call call = make_call(sample);
    spoil(call);
    plugrt_status status = backend->execute(handle, call.finish());
    backend->destroy(handle);
    if (status == PLUGRT_STATUS_DELEGATE_CRASHED) return kIsolatedCrash + host.crash() + " (execute with " + what + ")";
    if (status != PLUGRT_STATUS_INVALID_ARGUMENT) {
      return "execute with " + what + " returned " + name_of(status) +
             ", expected InvalidArgument (18). Fix: check the count, dtype and shape of every argument "
             "before touching data (plugrt/sdk/tensor.h does it)";
    }
    return "";
  });
  EXPECT_TRUE(outcome.ok()) << outcome.describe();
}

TEST_P(BackendContract, WrongArgumentsAreInvalidArgument) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  SKIP_UNLESS_EXECUTABLE(s);
  expect_invalid_argument(runtime_, *s, "one input too few", [](Call& c) { c.inputs.pop_back(); });
  expect_invalid_argument(runtime_, *s, "one output too many", [](Call& c) {
    c.outputs.push_back(std::make_unique<OwnedTensor>(kF32, c.outputs[0]->shape));
  });
  expect_invalid_argument(runtime_, *s, "an int32 input where float32 is expected",
                          [](Call& c) { c.inputs[0] = std::make_unique<OwnedTensor>(kI32, c.inputs[0]->shape); });
  expect_invalid_argument(runtime_, *s, "an input of the wrong shape ([3, 3] for [2, 3])", [](Call& c) {
    c.inputs[0] = std::make_unique<OwnedTensor>(kF32, std::vector<int64_t>{3, 3});
  });
  expect_invalid_argument(runtime_, *s, "an output of the wrong shape ([2, 4] for [2, 3])", [](Call& c) {
    c.outputs[0] = std::make_unique<OwnedTensor>(kF32, std::vector<int64_t>{2, 4});
  });
}

TEST_P(BackendContract, WritesNothingToStdoutOrStderr) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  std::vector<uint8_t> random_blob(64, 0xA5);
  bool made_sample = false;
  std::string output;
  std::vector<std::string> problems;
  {
    OutputCapture capture;
    char reason[64];
    plugrt_text_buffer buffer{reason, sizeof(reason), 0};
    (void)runtime_->is_available(runtime_->context, host_.plugrt_table(), &buffer);
    plugrt_delegate_handle bad = nullptr;
    if (init(random_blob, &bad) == PLUGRT_STATUS_OK) runtime_->destroy(bad);
    // Made here, inside the capture: partition and preprocess must stay silent too.
    const Sample* s = sample_ ? (sample_->sample ? &*sample_->sample : nullptr) : nullptr;
    if (!sample_) {
      sample_ = make_sample(backend_, host_);
      made_sample = true;
      s = sample_->sample ? &*sample_->sample : nullptr;
    }
    if (s != nullptr) {
      plugrt_delegate_handle handle = nullptr;
      if (init(s->blob, &handle) == PLUGRT_STATUS_OK) {
        if (s->can_execute) {
          Call good = make_call(*s);
          (void)runtime_->execute(handle, good.finish());
          Call wrong = make_call(*s);
          wrong.inputs.pop_back();
          (void)runtime_->execute(handle, wrong.finish());
        }
        runtime_->destroy(handle);
      }
    }
    output = capture.finish();
  }
  if (made_sample) print_sample_use(GetParam(), *sample_);
  EXPECT_EQ(output, "") << "the plugin wrote to stdout or stderr (shown above). A plugin must log through "
                           "host->log and report failures through host->report_error, never print";
}

TEST_P(BackendContract, SeparateHandlesExecuteConcurrently) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  SKIP_UNLESS_EXECUTABLE(s);
  constexpr int kThreads = 4;
  const bool shared = (runtime_->capabilities & PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE) != 0;
  std::vector<plugrt_delegate_handle> handles(kThreads, nullptr);
  for (int t = 0; t < kThreads; ++t) {
    if (shared && t > 0) {
      handles[t] = handles[0];
      continue;
    }
    ASSERT_EQ(init(s->blob, &handles[t]), PLUGRT_STATUS_OK) << host_.last_error();
  }
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200 && failures[t].empty(); ++i) {
        Call call = make_call(*s);
        plugrt_status status = runtime_->execute(handles[t], call.finish());
        if (status != PLUGRT_STATUS_OK)
          failures[t] = "execute failed with " + name_of(status);
        else
          failures[t] = check_result(*s, call);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], "") << "thread " << t
                               << (shared ? " (one shared handle: the backend declares "
                                            "PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE)"
                                          : " (its own handle)")
                               << ". Fix: keep per-call state in the handle, not in globals";
  }
  for (int t = 0; t < kThreads; ++t) {
    if (!shared || t == 0) runtime_->destroy(handles[t]);
  }
}

/// The most threads a handle made with `budget` ran at once while it executed, the
/// calling thread included and the threads there before left out: 200 calls or 2
/// seconds, and at least 200 ms, long enough to see workers that live for one call. In
/// `scope`: this process, or under --isolate its children (the handle's backend host,
/// whose one thread serves the calls as the calling thread would). -1 when the kit
/// cannot count; a failed call is reported.
int threads_while_executing(const plugrt_backend* backend, MockHostServices& host, const Sample& s, size_t budget,
                            ThreadScope scope) {
  const int before = count_threads(scope);
  plugrt_init_args args = init_args(s.blob);
  args.num_threads = budget;
  plugrt_delegate_handle handle = nullptr;
  const plugrt_status initialised = backend->init(backend->context, host.plugrt_table(), &args, &handle);
  EXPECT_EQ(initialised, PLUGRT_STATUS_OK) << "init with num_threads = " << budget << ": " << host.last_error();
  if (initialised != PLUGRT_STATUS_OK || before < 0) return -1;
  Call call = make_call(s);
  plugrt_status status = PLUGRT_STATUS_OK;
  ThreadWatch watch(scope);
  const auto start = std::chrono::steady_clock::now();
  for (int calls = 0; status == PLUGRT_STATUS_OK; ++calls) {
    const auto elapsed = std::chrono::steady_clock::now() - start;
    if ((calls >= 200 || elapsed >= std::chrono::seconds(2)) && elapsed >= std::chrono::milliseconds(200)) break;
    status = backend->execute(handle, call.finish());
  }
  const int peak = watch.stop();
  backend->destroy(handle);
  EXPECT_EQ(status, PLUGRT_STATUS_OK) << "execute with num_threads = " << budget << " failed with " << name_of(status)
                                      << ": " << host.last_error();
  if (peak <= 0) return -1;
  return scope == ThreadScope::kThisProcess ? peak - before + 1 : peak - before;
}

// The thread budget: a handle whose init was given num_threads = N runs no more threads
// than that while it executes, the calling thread included, for N = 1 and then 2. The kit
// counts the threads of the check's process (/proc/self/task) all the while, or under
// --isolate those of the backend host processes it started.
TEST_P(BackendContract, ExecuteStaysWithinItsThreadBudget) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  SKIP_UNLESS_EXECUTABLE(s);
  const ThreadScope scope = config().isolated ? ThreadScope::kChildren : ThreadScope::kThisProcess;
  for (const size_t budget : {size_t{1}, size_t{2}}) {  // 1 first: a pool made for 2 may outlive its handle
    const int used = threads_while_executing(runtime_, host_, *s, budget, scope);
    ASSERT_GT(used, 0) << "the kit cannot read /proc to count threads";
    EXPECT_LE(used, static_cast<int>(budget))
        << "given a thread budget of " << budget << " (plugrt_init_args.num_threads), the backend ran " << used
        << " threads at once while executing " << s->description
        << ".\nFix: use at most num_threads threads, the calling thread included (InitContext::num_threads)";
  }
}

// Called by run_contract_tests, so that a static link keeps this file's checks.
void keep_manner_checks() {}

}  // namespace plugrt::sdk::testing::kit
