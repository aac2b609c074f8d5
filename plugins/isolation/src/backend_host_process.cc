// SPDX-License-Identifier: Apache-2.0
#include "backend_host_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

extern char** environ;

namespace plugrt::isolation {
namespace {

std::atomic<size_t> g_live{0};

// Whether `pid`, our child, has exited (a zombie, not yet reaped) or is gone already.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
  return info.si_pid == pid;
}

// Waits up to `timeout_ms` for `pid` to exit, without reaping it (its pid, and so its
// process group's id, stays ours until then); whether it did. `pidfd` (or -1) wakes up
// as soon as it exits.
bool wait_for_exit(pid_t pid, int pidfd, int timeout_ms) {
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    while (poll(&p, 1, timeout_ms) < 0 && errno == EINTR) {
    }
    return has_exited(pid);
  }
  for (int i = 0; i < timeout_ms; ++i) {  // no pidfd (an old kernel): poll the process
    if (has_exited(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return has_exited(pid);
}

bool is_executable(const std::string& path) {
  struct stat info {};
  return !path.empty() && stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

// What the backend host may see of the environment: the log switch, the sanitizers'
// options (CI runs it under them) and the threading libraries' knobs. Nothing else.
bool passes_to_backend_host(const char* entry) {
  static const char* const kPrefixes[] = {
      "PLUGRT_LOG=", "ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=", "TSAN_OPTIONS=", "OMP_", "DNNL_", "ONEDNN_"};
  for (const char* prefix : kPrefixes) {
    if (strncmp(entry, prefix, strlen(prefix)) == 0) return true;
  }
  return false;
}

// PR_SET_PDEATHSIG fires when the thread that started the child ends, not the process.
// So every backend host is started by one thread that lives as long as the process: a
// handle made on a short-lived thread keeps its process after that thread is gone.
class Spawner {
 public:
  static Spawner& instance() {
    static Spawner* spawner = new Spawner();  // never destroyed: its thread never ends
    return *spawner;
  }
  /// Runs posix_spawn on the spawner thread; its result.
  int spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
            const posix_spawnattr_t* attributes, char* const* argv, char* const* envp) {
    std::unique_lock<std::mutex> lock(mutex_);
    Request request{pid, path, actions, attributes, argv, envp};
    queue_.push_back(&request);
    wake_.notify_all();
    done_.wait(lock, [&] { return request.done; });
    return request.result;
  }

 private:
  struct Request {
    pid_t* pid;
    const char* path;
    const posix_spawn_file_actions_t* actions;
    const posix_spawnattr_t* attributes;
    char* const* argv;
    char* const* envp;
    int result = 0;
    bool done = false;
  };
  Spawner() {
    std::thread([this] { run(); }).detach();
  }
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return !queue_.empty(); });
      Request* request = queue_.front();
      queue_.erase(queue_.begin());
      request->result =
          posix_spawn(request->pid, request->path, request->actions, request->attributes, request->argv, request->envp);
      request->done = true;
      done_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<Request*> queue_;
};

}  // namespace

size_t live_backend_hosts() { return g_live.load(); }

Result<std::unique_ptr<BackendHostProcess>> BackendHostProcess::start(const std::string& plugin_path,
                                                                      const IsolationOptions& options) {
  const std::string& executable = options.backend_host;
  if (!is_executable(executable)) {
    return Status(Error::kAccessFailed, "the backend host '" + executable + "' is not an executable file");
  }
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    return Status(Error::kAccessFailed, std::string("socketpair: ") + strerror(errno));
  }
  // The child's end becomes its descriptor 3; everything else it inherits is
  // close-on-exec, and the backend host closes any stray descriptor above 3 first.
  int child_end = sockets[1];
  if (child_end <= 3) {
    child_end = fcntl(sockets[1], F_DUPFD_CLOEXEC, 10);
    close(sockets[1]);
  }
  std::vector<std::string> args = {executable, "--plugin", plugin_path, "--parent-pid", std::to_string(getpid())};
  if (options.allow_untrusted_files) args.push_back("--allow-untrusted");
  if (!options.allow_list.empty()) {
    args.push_back("--allow-list");
    args.push_back(options.allow_list);
  }
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (passes_to_backend_host(*entry)) envp.push_back(*entry);
  }
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, 2, 1);  // a plugin's stray prints never reach stdout
  posix_spawn_file_actions_adddup2(&actions, child_end, 3);
  // Its own process group, which it and every process it starts belong to: ending it
  // ends them all, so a descendant cannot keep the socket, or itself, alive.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = -1;
  const int spawned = child_end < 0 ? EMFILE
                                    : Spawner::instance().spawn(&pid, executable.c_str(), &actions, &attributes,
                                                                argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (child_end >= 0) close(child_end);
  if (spawned != 0) {
    close(sockets[0]);
    return Status(Error::kAccessFailed, "cannot start the backend host " + executable + ": " + strerror(spawned));
  }
  ++g_live;
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));  // -1 on an old kernel
  return std::unique_ptr<BackendHostProcess>(new BackendHostProcess(pid, pidfd, sockets[0]));
}

BackendHostProcess::~BackendHostProcess() {
  if (socket_ >= 0) close(socket_);  // EOF: a healthy backend host exits
  socket_ = -1;
  // Give it a moment to exit on its own, then end what is left of its group.
  if (!reaped_) wait_for_exit(pid_, pidfd_, 200);
  end_group();
}

void BackendHostProcess::end_group(int* wait_status) {
  if (!reaped_) {
    // While it is unreaped its group's id cannot be reused: SIGKILL reaches it (if it
    // still runs) and every descendant still in the group, and no other process.
    // (Reaped elsewhere already, as where SIGCHLD is ignored: its group's id is not ours.)
    siginfo_t info{};
    const bool reaped_elsewhere =
        waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD;
    int status = 0;
    if (!reaped_elsewhere) {
      kill(-pid_, SIGKILL);
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    if (wait_status != nullptr) *wait_status = status;
    --g_live;
    reaped_ = true;
  }
  if (pidfd_ >= 0) close(pidfd_);
  pidfd_ = -1;
}

std::string BackendHostProcess::exit_description(int wait_status) const {
  const std::string process = "its isolated process (pid " + std::to_string(pid_) + ")";
  if (WIFSIGNALED(wait_status)) {
    const int number = WTERMSIG(wait_status);
    std::string text = process + " was killed by signal " + std::to_string(number);
    const char* abbrev = sigabbrev_np(number);
    const char* description = sigdescr_np(number);
    if (abbrev != nullptr)
      text += std::string(" (SIG") + abbrev + (description ? std::string(", ") + description : "") + ")";
    return text;
  }
  if (WIFEXITED(wait_status)) return process + " exited with code " + std::to_string(WEXITSTATUS(wait_status));
  return process + " ended";
}

void BackendHostProcess::bury(const std::string& reason, bool kill_first) {
  dead_ = true;
  if (socket_ >= 0) {
    close(socket_);
    socket_ = -1;
  }
  std::string how;
  if (!reaped_) {
    // It closed the connection or exited: it is dying, or pretends to. Wait briefly for the truth.
    const bool exited = !kill_first && wait_for_exit(pid_, pidfd_, 500);
    int wait_status = 0;
    end_group(&wait_status);
    if (exited) how = exit_description(wait_status);
  }
  if (death_.empty()) {
    death_ = reason.empty() ? how : (how.empty() ? reason : reason + "; " + how);
    if (death_.empty()) death_ = "its isolated process (pid " + std::to_string(pid_) + ") is gone";
  }
}

Status BackendHostProcess::call(CallKind kind, const std::vector<uint8_t>& payload, int fd, int timeout_ms,
                                const char* limit_name, Frame* response) {
  if (dead_) return Status(Error::kDelegateCrashed, death_ + " (earlier; it is not restarted)");
  FrameHeader header;
  header.kind = static_cast<uint16_t>(kind);
  header.call_id = next_call_id_++;
  if (Status sent = send_frame(socket_, header, payload, fd); !sent.is_ok()) {
    bury("", false);
    return Status(Error::kDelegateCrashed, death_);
  }
  ReceiveFailure failure = ReceiveFailure::kNone;
  Result<Frame> frame =
      receive_frame(socket_, ReceiveLimits{false, timeout_ms > 0 ? timeout_ms : -1, pidfd_}, &failure);
  if (!frame.is_ok()) {
    switch (failure) {
      case ReceiveFailure::kTimedOut:
        bury("its isolated process (pid " + std::to_string(pid_) + ") did not answer within the " +
                 std::to_string(timeout_ms) + " ms time limit (" + limit_name + ") and was killed",
             true);
        break;
      case ReceiveFailure::kClosed: bury("", false); break;
      default:
        bury("its isolated process (pid " + std::to_string(pid_) + ") sent a malformed response (" +
                 frame.status().message() + ") and was killed",
             true);
    }
    return Status(Error::kDelegateCrashed, death_);
  }
  const FrameHeader& h = frame->header;
  std::string wrong;
  if (h.kind != header.kind || h.call_id != header.call_id) {
    wrong = "answered call " + std::to_string(h.call_id) + " of kind " + std::to_string(h.kind) + ", not call " +
            std::to_string(header.call_id) + " of kind " + std::to_string(header.kind);
  } else if (h.status != PLUGRT_STATUS_OK && error_from_abi(h.status) == Error::kInternal &&
             h.status != PLUGRT_STATUS_INTERNAL) {
    wrong = "answered with the unknown status " + std::to_string(h.status);
  }
  if (!wrong.empty()) {
    bury("its isolated process (pid " + std::to_string(pid_) + ") " + wrong + " and was killed", true);
    return Status(Error::kDelegateCrashed, death_);
  }
  *response = std::move(frame).value();
  return Status::ok();
}

}  // namespace plugrt::isolation
