// SPDX-License-Identifier: Apache-2.0
#include "isolation.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PLUGRT_CONTRACT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PLUGRT_CONTRACT_SANITIZED 1
#endif
#endif
#ifdef PLUGRT_CONTRACT_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif

namespace plugrt::sdk::testing {

namespace {

/// In a sanitizer build a report (a plugin reading out of bounds, say) ends the process
/// with exit code 1, which run_in_child would take for the child's own failure message.
/// Make such a child die by SIGABRT instead, so that it is reported as the crash it is.
void crash_on_sanitizer_report() {
#ifdef PLUGRT_CONTRACT_SANITIZED
  __sanitizer_set_death_callback([] {
    signal(SIGABRT, SIG_DFL);
    abort();
  });
#endif
}

}  // namespace

std::string ChildOutcome::describe() const {
  if (timed_out) return "did not finish within the time limit (killed); a call hangs";
  if (!exited) {
    std::string text = "crashed with signal " + std::to_string(signal);
    const char* name = strsignal(signal);
    if (name != nullptr) text += std::string(" (") + name + ")";
    return text;
  }
  if (!message.empty()) return message;
  if (exit_code != 0) return "the child exited with code " + std::to_string(exit_code) + " (the plugin called exit?)";
  return "ok";
}

ForkedChild fork_child() {
  ForkedChild child;
  int fds[2];
  if (pipe(fds) != 0) return child;
  std::cout.flush();
  std::cerr.flush();
  fflush(nullptr);
  child.pid = fork();
  if (child.pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return child;
  }
  if (child.pid == 0) {
    close(fds[0]);
    crash_on_sanitizer_report();
    child.fd = fds[1];
    return child;
  }
  close(fds[1]);
  child.fd = fds[0];
  return child;
}

void write_all(int fd, const std::string& bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
}

ChildOutcome wait_for_child(const ForkedChild& child, int timeout_seconds) {
  ChildOutcome outcome;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  char buffer[4096];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(child.pid, SIGKILL);
      outcome.timed_out = true;
      break;
    }
    pollfd p{child.fd, POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0) continue;
    if (ready == 0) continue;
    ssize_t n = read(child.fd, buffer, sizeof(buffer));
    if (n <= 0) break;  // EOF: the child exited or closed the pipe
    outcome.message.append(buffer, static_cast<size_t>(n));
  }
  close(child.fd);
  int status = 0;
  while (waitpid(child.pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) {
    outcome.exited = !outcome.timed_out;
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

ChildOutcome run_in_child(const std::function<std::string()>& body, int timeout_seconds) {
  const ForkedChild child = fork_child();
  if (child.pid < 0) {
    ChildOutcome outcome;
    outcome.exited = true;
    outcome.exit_code = 1;
    outcome.message = "fork() failed";
    return outcome;
  }
  if (child.pid == 0) {
    std::string message;
    try {
      message = body();
    } catch (const std::exception& e) {
      message = std::string("an exception escaped the plugin: ") + e.what();
    } catch (...) {
      message = "an exception escaped the plugin";
    }
    write_all(child.fd, message);
    close(child.fd);
    _exit(message.empty() ? 0 : 1);
  }
  return wait_for_child(child, timeout_seconds);
}

OutputCapture::OutputCapture() {
  std::cout.flush();
  std::cerr.flush();
  fflush(nullptr);
  FILE* file = tmpfile();
  if (file == nullptr) return;
  file_ = dup(fileno(file));
  fclose(file);
  saved_out_ = dup(1);
  saved_err_ = dup(2);
  dup2(file_, 1);
  dup2(file_, 2);
}

OutputCapture::~OutputCapture() { (void)finish(); }

std::string OutputCapture::finish() {
  if (file_ < 0) return "";
  std::cout.flush();
  std::cerr.flush();
  fflush(nullptr);
  dup2(saved_out_, 1);
  dup2(saved_err_, 2);
  close(saved_out_);
  close(saved_err_);
  std::string text;
  lseek(file_, 0, SEEK_SET);
  char buffer[4096];
  ssize_t n;
  while ((n = read(file_, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
  close(file_);
  file_ = -1;
  if (!text.empty())
    std::cerr << "---- what the plugin printed ----\n" << text << "\n---------------------------------\n";
  return text;
}

namespace {
PlainHost* self(void* context) { return static_cast<PlainHost*>(context); }
}  // namespace

PlainHost::PlainHost() {
  table_.struct_size = sizeof(table_);
  table_.abi_major = PLUGRT_ABI_MAJOR;
  table_.abi_minor = PLUGRT_ABI_MINOR;
  table_.context = this;
  table_.allocate = [](void* c, size_t size, size_t alignment) -> void* {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) return nullptr;
    void* p = nullptr;
    if (posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, size == 0 ? 1 : size) != 0) {
      return nullptr;
    }
    ++self(c)->live_;
    return p;
  };
  table_.deallocate = [](void* c, void* p) {
    if (p == nullptr) return;
    --self(c)->live_;
    free(p);
  };
  table_.log = [](void*, plugrt_log_level, plugrt_string) {};
  table_.profile_begin = [](void*, plugrt_string) -> uint64_t { return 0; };
  table_.profile_end = [](void*, uint64_t) {};
  table_.report_error = [](void* c, plugrt_status status, plugrt_string message) {
    ++self(c)->errors_;
    if (status != PLUGRT_STATUS_DELEGATE_CRASHED) return;
    std::lock_guard<std::mutex> lock(self(c)->crash_mutex_);
    self(c)->crash_.assign(message.data == nullptr ? "" : message.data, message.data == nullptr ? 0 : message.size);
  };
}

std::string PlainHost::crash() const {
  std::lock_guard<std::mutex> lock(crash_mutex_);
  return crash_;
}

long resident_kib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

}  // namespace plugrt::sdk::testing
