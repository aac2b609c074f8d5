// SPDX-License-Identifier: Apache-2.0
// What the contract kit needs to survive a bad plugin: running a call in a forked child
// (a crash becomes a reported failure), capturing what a call writes to fds 1 and 2, and
// a plain host-services table for use inside a child (no GoogleMock state after fork).
#ifndef PLUGRT_SDK_CONTRACT_ISOLATION_H_
#define PLUGRT_SDK_CONTRACT_ISOLATION_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "plugrt/plugrt_abi.h"

namespace plugrt::sdk::testing {

/// How a body's message starts when an isolated backend's process died during its call
/// (PLUGRT_STATUS_DELEGATE_CRASHED): ChildOutcome counts it as a crash.
constexpr char kIsolatedCrash[] = "crashed in its backend host process: ";

/// How a child ended.
struct ChildOutcome {
  bool exited = false;  // exited normally (else killed by a signal or timed out)
  int exit_code = 0;
  int signal = 0;
  bool timed_out = false;
  std::string message;  // what the body returned (its failure), if it got that far

  bool ok() const { return exited && exit_code == 0 && message.empty(); }
  bool crashed() const { return !exited || message.rfind(kIsolatedCrash, 0) == 0; }
  /// "crashed with SIGSEGV (Segmentation fault)", "<message>", ...
  std::string describe() const;
};

/// Runs `body` in a forked child. The body returns "" on success or a failure message.
ChildOutcome run_in_child(const std::function<std::string()>& body, int timeout_seconds = 120);

/// One end of a forked child's pipe: in the child (pid 0) the write end, in the parent
/// the read end. pid -1 when the fork failed.
struct ForkedChild {
  pid_t pid = -1;
  int fd = -1;
};

/// Forks, flushing stdio first. The child goes on from here: it writes what it has to
/// say into `fd` and ends with _exit().
ForkedChild fork_child();

/// Writes every byte of `bytes` to `fd` (as far as it can).
void write_all(int fd, const std::string& bytes);

/// In the parent: reads what the child writes until it closes the pipe, then reaps it;
/// past `timeout_seconds` the child is killed and the outcome says it timed out.
ChildOutcome wait_for_child(const ForkedChild& child, int timeout_seconds);

/// Redirects fds 1 and 2 into a temporary file until finish() (or destruction).
class OutputCapture {
 public:
  OutputCapture();
  ~OutputCapture();
  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;
  /// Restores the fds and returns what was written meanwhile.
  std::string finish();

 private:
  int saved_out_ = -1, saved_err_ = -1, file_ = -1;
};

/// A host-services table that allocates for real and counts; thread-safe.
class PlainHost {
 public:
  PlainHost();
  const plugrt_host_services* table() const { return &table_; }
  int64_t live_allocations() const { return live_.load(); }
  int64_t num_errors() const { return errors_.load(); }
  /// The message of the last PLUGRT_STATUS_DELEGATE_CRASHED reported (an isolated
  /// backend's process died), or "".
  std::string crash() const;

 private:
  plugrt_host_services table_{};
  mutable std::mutex crash_mutex_;
  std::string crash_;
  std::atomic<int64_t> live_{0};
  std::atomic<int64_t> errors_{0};
};

/// The resident set size of this process, in KiB (0 when unknown).
long resident_kib();

}  // namespace plugrt::sdk::testing

#endif  // PLUGRT_SDK_CONTRACT_ISOLATION_H_
