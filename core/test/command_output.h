// SPDX-License-Identifier: Apache-2.0
// Runs a shell command from a test and keeps what it printed and how it exited, for tests
// of the real command-line programs (plugrt, the contract kit).
#ifndef PLUGRT_CORE_TEST_COMMAND_OUTPUT_H_
#define PLUGRT_CORE_TEST_COMMAND_OUTPUT_H_

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace plugrt::testing {

struct CommandOutput {
  int exit_code = -1;  ///< -1 when it did not exit normally (a signal) or did not start
  std::string output;  ///< stdout, and stderr where the command redirects it ("2>&1")
};

inline CommandOutput run_shell(const std::string& command) {
  CommandOutput result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace plugrt::testing

#endif  // PLUGRT_CORE_TEST_COMMAND_OUTPUT_H_
