// SPDX-License-Identifier: Apache-2.0
// The fixture of the contract kit's per-backend checks (BackendContract), instantiated
// once per backend the plugin's metadata names.
#ifndef PLUGRT_SDK_CONTRACT_BACKEND_CONTRACT_H_
#define PLUGRT_SDK_CONTRACT_BACKEND_CONTRACT_H_

#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kit_backend_options.h"
#include "kit_plugin.h"
#include "kit_samples.h"

namespace plugrt::sdk::testing::kit {

using ::testing::NiceMock;

// Each per-backend check runs in a forked child of its own, so that a backend crashing
// or hanging in one check fails that check (with what it had found so far) and the rest
// still run. The child reports every assertion into a pipe as it is made; the parent
// makes the same assertions again, at the same file and line.

struct ResultSink {
  ::testing::TestPartResultArray unused;
};

class PipeReporter : private ResultSink, public ::testing::ScopedFakeTestPartResultReporter {
 public:
  explicit PipeReporter(int fd) : ScopedFakeTestPartResultReporter(INTERCEPT_ALL_THREADS, &unused), fd_(fd) {}

  void ReportTestPartResult(const ::testing::TestPartResult& result) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (result.fatally_failed() || result.skipped()) stopped_ = true;
    const std::string file = result.file_name() == nullptr ? "" : result.file_name();
    const std::string message = result.message() == nullptr ? "" : result.message();
    std::string record(1, static_cast<char>(result.type()));
    auto put = [&](uint32_t n) { record.append(reinterpret_cast<const char*>(&n), sizeof(n)); };
    put(static_cast<uint32_t>(result.line_number()));
    put(static_cast<uint32_t>(file.size()));
    record += file;
    put(static_cast<uint32_t>(message.size()));
    record += message;
    write_all(fd_, record);
  }

  /// A fatal failure or a skip was reported: the check stops there.
  bool stopped() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stopped_;
  }

 private:
  int fd_;
  std::mutex mutex_;
  bool stopped_ = false;
};

/// Makes again, in the parent, the assertions the check's child reported; then says how
/// the child ended when it did not end normally.
void replay_child(const ChildOutcome& outcome, int timeout_seconds);

class BackendContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    child_ = fork_child();
    if (child_.pid < 0) {
      FAIL() << "fork() failed: the kit runs each check in a child process";
    }
    if (child_.pid > 0) {
      replay_child(wait_for_child(child_, config().check_timeout_seconds), config().check_timeout_seconds);
      ran_in_child_ = true;
      return;
    }
    reporter_ = std::make_unique<PipeReporter>(child_.fd);
    set_up();
    if (reporter_->stopped()) end_child();
  }

  void TearDown() override {
    if (reporter_ != nullptr) end_child();
  }

  /// In the child, when the check is done: what it printed is flushed, what it found
  /// is already in the pipe.
  [[noreturn]] void end_child() {
    reporter_.reset();
    std::cout.flush();
    std::cerr.flush();
    fflush(nullptr);
    close(child_.fd);
    _exit(0);
  }

  void set_up() {
    select_kit_backend(GetParam());
    plugin_ = load_plugin(host_.plugrt_table());
    ASSERT_EQ(plugin_.error, "");
    backend_ = plugin_.backend(GetParam());
    ASSERT_NE(backend_, nullptr) << "the metadata names backend '" << GetParam()
                                 << "' but the entry function does not provide it";
    ASSERT_GE(backend_->struct_size, PLUGRT_BACKEND_SIZE_1_0);
    ASSERT_TRUE(backend_->is_available != nullptr && backend_->init != nullptr && backend_->execute != nullptr &&
                backend_->destroy != nullptr)
        << "is_available, init, execute and destroy are required";
    runtime_ = backend_;
    if (config().isolated) {
      isolated_ = register_isolated();
      ASSERT_EQ(isolated_->error, "");
      runtime_ = isolation::proxy_table(*isolated_->plugin, GetParam());
      ASSERT_NE(runtime_, nullptr) << "the isolated plugin does not provide backend '" << GetParam() << "'";
    }
  }

  /// Skips the test when the backend cannot run here.
  bool available() {
    char reason[256];
    plugrt_text_buffer buffer{reason, sizeof(reason), 0};
    if (runtime_->is_available(runtime_->context, host_.plugrt_table(), &buffer)) return true;
    unavailable_reason_ = std::string(reason, buffer.size);
    return false;
  }

  /// The sample for init/execute, or a skip reason.
  const Sample* sample() {
    if (!sample_) {
      sample_ = make_sample(backend_, host_);
      print_sample_use(GetParam(), *sample_);
    }
    return sample_->sample ? &*sample_->sample : nullptr;
  }

  plugrt_status init(const std::vector<uint8_t>& blob, plugrt_delegate_handle* handle) {
    plugrt_init_args args = init_args(blob);
    return runtime_->init(runtime_->context, host_.plugrt_table(), &args, handle);
  }

  /// Whether the backend's partition takes the one node of `graph`.
  bool takes_its_node(const std::vector<uint8_t>& graph) {
    std::vector<uint8_t> taken(1, 0);
    plugrt_partition_args args{};
    args.struct_size = PLUGRT_PARTITION_ARGS_SIZE;
    args.graph = graph.data();
    args.graph_size = graph.size();
    args.node_taken = taken.data();
    args.num_nodes = 1;
    give_compile_specs(&args);
    return backend_->aot->partition(backend_->context, host_.plugrt_table(), &args) == PLUGRT_STATUS_OK && taken[0];
  }

  /// Runs preprocess with `flags` offered: its status, and on success the blob (copied
  /// out of host memory) and the flags the backend set on it.
  plugrt_status preprocess(const std::vector<uint8_t>& graph, plugrt_preprocess_flags flags, std::vector<uint8_t>* blob,
                           plugrt_blob_flags* blob_flags) {
    plugrt_preprocess_args args{};
    play_size(&args, host_abi().preprocess_args_size());
    args.graph = graph.data();
    args.graph_size = graph.size();
    give_compile_specs(&args);
    if (host_abi().offers_constants_by_name()) args.flags = flags;
    const plugrt_status status = backend_->aot->preprocess(backend_->context, host_.plugrt_table(), &args);
    if (status != PLUGRT_STATUS_OK) return status;
    const auto* bytes = static_cast<const uint8_t*>(args.blob);
    blob->assign(bytes, bytes + args.blob_size);
    host_.plugrt_table()->deallocate(host_.plugrt_table()->context, args.blob);
    *blob_flags = args.blob_flags;
    return status;
  }

  // Declared first: destroyed last, after the plugin that holds its table.
  NiceMock<MockHostServices> host_;
  LoadedPlugin plugin_;
  /// The plugin's own table: partition and preprocess (compile time), in process.
  const plugrt_backend* backend_ = nullptr;
  /// The table run-time calls go to: backend_, or with --isolate the runtime's proxy.
  const plugrt_backend* runtime_ = nullptr;
  std::unique_ptr<IsolatedSession> isolated_;
  std::optional<SampleResult> sample_;
  std::string unavailable_reason_;
  ForkedChild child_;
  std::unique_ptr<PipeReporter> reporter_;  // in the child
  bool ran_in_child_ = false;               // in the parent
};

/// The first line of every per-backend check: in the parent, the check already ran in
/// its child (SetUp) and its findings are reported.
#define RUNS_IN_ITS_CHILD() \
  if (ran_in_child_) return

#define SKIP_UNLESS_AVAILABLE()                                                                                    \
  if (available()) {                                                                                               \
  } else if (config().require_available) {                                                                         \
    FAIL() << "backend '" << GetParam() << "' is unavailable here (--require-available): " << unavailable_reason_; \
  } else                                                                                                           \
    GTEST_SKIP() << "backend '" << GetParam() << "' is unavailable here: " << unavailable_reason_
#define SKIP_UNLESS_SAMPLE(s) \
  const Sample* s = sample(); \
  if (s != nullptr) {         \
  } else                      \
    GTEST_SKIP() << sample_->why_not
#define SKIP_UNLESS_EXECUTABLE(s) \
  SKIP_UNLESS_SAMPLE(s);          \
  if (s->can_execute) {           \
  } else                          \
    GTEST_SKIP() << "execute checks need a sample graph the backend takes, not a --blob file"

}  // namespace plugrt::sdk::testing::kit

#endif  // PLUGRT_SDK_CONTRACT_BACKEND_CONTRACT_H_
