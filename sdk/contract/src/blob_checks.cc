// SPDX-License-Identifier: Apache-2.0
// The per-backend checks of availability and of init on its own blob and on bad ones.
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

TEST_P(BackendContract, IsAvailableIsIdempotentAndThreadSafe) {
  RUNS_IN_ITS_CHILD();
  auto ask = [&](std::string* reason) {
    char data[512];
    plugrt_text_buffer buffer{data, sizeof(data), 0};
    bool answer = runtime_->is_available(runtime_->context, host_.plugrt_table(), &buffer);
    *reason = answer ? "" : std::string(data, std::min(buffer.size, sizeof(data)));
    return answer;
  };
  std::string first_reason;
  const bool first = ask(&first_reason);
  if (!first) {
    EXPECT_FALSE(first_reason.empty()) << "is_available said no without a reason: write why into `reason`";
  }
  for (int i = 0; i < 10; ++i) {
    std::string reason;
    ASSERT_EQ(ask(&reason), first) << "is_available changed its answer on call " << i + 2
                                   << ": it must give the same answer while the plugin stays loaded";
    ASSERT_EQ(reason, first_reason) << "is_available changed its reason";
  }
  std::atomic<int> disagreements{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        std::string reason;
        if (ask(&reason) != first) ++disagreements;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(disagreements.load(), 0) << "is_available answered differently from 8 threads at once: make it "
                                        "thread-safe (no lazy initialisation without a lock or call_once)";
  EXPECT_EQ(host_.live_allocations(), 0) << "is_available left host allocations live: it must not allocate "
                                            "lasting resources";
}

/// Runs init on `blob` in a child and expects an error, not success or a crash.
/// With `must_refuse` false, init may accept the blob (it may still be valid, e.g. when
/// only padding was cut), but must not crash, hang or leak.
void expect_refused(const plugrt_backend* backend, const std::vector<uint8_t>& blob, const std::string& what,
                    bool must_refuse = true) {
  ChildOutcome outcome = run_guarded([&]() -> std::string {
    PlainHost host;
    plugrt_init_args args = init_args(blob);
    plugrt_delegate_handle handle = nullptr;
    plugrt_status status = backend->init(backend->context, host.table(), &args, &handle);
    if (status == PLUGRT_STATUS_DELEGATE_CRASHED) return kIsolatedCrash + host.crash();
    if (status == PLUGRT_STATUS_OK) {
      backend->destroy(handle);
      if (!must_refuse) return host.live_allocations() == 0 ? "" : "destroy left host allocations live";
      return "init accepted " + what + " (" + std::to_string(blob.size()) +
             " bytes). Fix: validate every blob (magic, format version, every size and offset) and "
             "refuse a bad one with DelegateInvalidCompatibility or InvalidProgram";
    }
    if (host.num_errors() == 0) {
      return "init refused " + what + " with " + name_of(status) +
             " but reported no message. Fix: say why through host->report_error (the SDK does it for a Status)";
    }
    if (host.live_allocations() != 0) {
      return "init refused " + what + " but left " + std::to_string(host.live_allocations()) +
             " host allocations live. Fix: release what a failed init allocated";
    }
    return "";
  });
  EXPECT_TRUE(outcome.ok()) << "init on " << what << ": " << outcome.describe()
                            << (outcome.crashed() ? "\nFix: init must never crash on a bad blob; check every size "
                                                    "and offset before reading, and return an error"
                                                  : "");
}

TEST_P(BackendContract, InitRefusesAnEmptyBlob) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  expect_refused(runtime_, {}, "an empty blob");
}

TEST_P(BackendContract, InitRefusesATruncatedBlob) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  SKIP_UNLESS_SAMPLE(s);
  // Cut to half, and to a few bytes: these must be refused. Cut by one byte: that may
  // only remove padding, so init may accept it, but must not crash.
  for (size_t size : {s->blob.size() / 2, size_t{8}, size_t{1}, s->blob.size() - 1}) {
    if (size >= s->blob.size()) continue;
    std::vector<uint8_t> blob(s->blob.begin(), s->blob.begin() + static_cast<std::ptrdiff_t>(size));
    expect_refused(
        runtime_, blob,
        "a blob truncated to " + std::to_string(size) + " of its " + std::to_string(s->blob.size()) + " bytes",
        size + 1 != s->blob.size());
  }
}

TEST_P(BackendContract, InitRefusesARandomBlob) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  std::mt19937 random(20260807);
  for (size_t size : {size_t{16}, size_t{256}, size_t{4096}}) {
    std::vector<uint8_t> blob(size);
    for (uint8_t& b : blob) b = static_cast<uint8_t>(random());
    expect_refused(runtime_, blob, "a random blob");
  }
}

TEST_P(BackendContract, FullCycleOnItsOwnBlob) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  SKIP_UNLESS_SAMPLE(s);
  plugrt_delegate_handle handle = nullptr;
  plugrt_status status = init(s->blob, &handle);
  ASSERT_EQ(status, PLUGRT_STATUS_OK) << "init refused the blob its own preprocess made from " << s->description
                                      << " with " << name_of(status) << ": " << host_.last_error()
                                      << "\nFix: preprocess and init must agree on the blob format";
  ASSERT_NE(handle, nullptr) << "init succeeded but wrote no handle";
  if (s->can_execute) {
    Call call = make_call(*s);
    status = runtime_->execute(handle, call.finish());
    EXPECT_EQ(status, PLUGRT_STATUS_OK) << "execute failed on correct arguments for " << s->description << " with "
                                        << name_of(status) << ": " << host_.last_error();
    if (status == PLUGRT_STATUS_OK) {
      EXPECT_EQ(check_result(*s, call), "") << "execute computed a wrong result";
    }
  }
  runtime_->destroy(handle);
}

// Every op sample the backend's partition takes (Gemm, MatMul, Conv, pooling, Softmax,
// element-wise ops), run on the backend and on the built-in portable backend with the same
// seeded inputs and outputs filled with NaN: every element must agree within
// kAbsoluteTolerance + kRelativeTolerance * |portable's|.

// Called by run_contract_tests, so that a static link keeps this file's checks.
void keep_blob_checks() {}

}  // namespace plugrt::sdk::testing::kit
