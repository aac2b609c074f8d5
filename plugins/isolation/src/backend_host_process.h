// SPDX-License-Identifier: Apache-2.0
// One running plugrt-backend-host: starting it with a clean environment and only its
// socket, one request/response exchange at a time, and telling how it ended.
#ifndef PLUGRT_ISOLATION_BACKEND_HOST_PROCESS_H_
#define PLUGRT_ISOLATION_BACKEND_HOST_PROCESS_H_

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "plugrt/isolation/isolated_plugin.h"
#include "plugrt/isolation/protocol.h"

namespace plugrt::isolation {

class BackendHostProcess {
 public:
  /// Starts the backend host for `plugin_path`. Errors: kAccessFailed (no such
  /// executable, or socketpair or spawn failed).
  static Result<std::unique_ptr<BackendHostProcess>> start(const std::string& plugin_path,
                                                           const IsolationOptions& options);
  ~BackendHostProcess();  // ends its process group and reaps the process
  BackendHostProcess(const BackendHostProcess&) = delete;
  BackendHostProcess& operator=(const BackendHostProcess&) = delete;

  /// Sends one request and waits up to `timeout_ms` (0: no limit) for its response, whose
  /// header is checked (call kind, call id, a known status). When the process dies, times
  /// out or answers nonsense it is killed and reaped, and every later call fails at once:
  /// all with kDelegateCrashed and a message saying what happened, naming `limit_name`
  /// for a time-out. On success `response` holds the frame, its status not yet looked at.
  Status call(CallKind kind, const std::vector<uint8_t>& payload, int fd, int timeout_ms, const char* limit_name,
              Frame* response);

  /// Kills and reaps the process; later calls fail with `reason`.
  void stop(const std::string& reason) { bury(reason, true); }
  bool dead() const { return dead_; }
  const std::string& death() const { return death_; }
  pid_t pid() const { return pid_; }

 private:
  BackendHostProcess(pid_t pid, int pidfd, int socket) : pid_(pid), pidfd_(pidfd), socket_(socket) {}
  /// Kills (unless already gone) and reaps the process; the reason says how it ended.
  void bury(const std::string& reason, bool kill_first);
  /// Kills its process group (the process, if it still runs, and every descendant left
  /// in it) and reaps the process; its wait status in `wait_status`.
  void end_group(int* wait_status = nullptr);
  std::string exit_description(int wait_status) const;

  pid_t pid_;
  int pidfd_;  // -1 without pidfd_open (an old kernel)
  int socket_;
  uint64_t next_call_id_ = 1;
  bool dead_ = false;
  bool reaped_ = false;
  std::string death_;
};

}  // namespace plugrt::isolation

#endif  // PLUGRT_ISOLATION_BACKEND_HOST_PROCESS_H_
