// Upgrading models of opsets below the importer's range with ONNX's version converter.
//
// The converter trusts its input: its adapters index shapes they never checked (an
// opset 6 Gemm whose inputs carry no shapes reads past an empty vector), and fuzzed
// models crashed it more than once. So the checker sees the model first, and the
// converter itself runs in a child process, whose crash becomes an error here.
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include "onnx_internal.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLUGRT_HAS_SANITIZER_HOOKS 1
#endif
#endif
#if !defined(PLUGRT_HAS_SANITIZER_HOOKS) && defined(__SANITIZE_ADDRESS__)
#define PLUGRT_HAS_SANITIZER_HOOKS 1
#endif
#ifdef PLUGRT_HAS_SANITIZER_HOOKS
#include <sanitizer/common_interface_defs.h>
#endif

namespace plugrt::compiler::onnx_import {

namespace {

/// A name that a node input or a graph output uses but nothing defines, or "". The
/// converter looks each one up and writes through what it finds (a fuzzed model whose
/// output no node writes crashed it), and the checker does not look for them.
std::string undefined_name(const onnx::GraphProto& graph) {
  std::set<std::string> defined;
  for (const onnx::ValueInfoProto& input : graph.input()) defined.insert(input.name());
  for (const onnx::TensorProto& initializer : graph.initializer()) defined.insert(initializer.name());
  for (const onnx::NodeProto& node : graph.node()) defined.insert(node.output().begin(), node.output().end());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) {
      if (!input.empty() && defined.count(input) == 0) return input;
    }
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    if (defined.count(output.name()) == 0) return output.name();
  }
  return "";
}

/// The child's reply on its pipe: one tag byte, then the upgraded model or the
/// converter's reason.
constexpr char kUpgraded = 'M';
constexpr char kRefused = 'E';

bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t written = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    done += static_cast<size_t>(written);
  }
  return true;
}

bool read_all(int fd, std::string* bytes) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return false;
    if (got == 0) return true;
    bytes->append(buffer, static_cast<size_t>(got));
  }
}

/// The child's whole life: infer shapes (the adapters read them), convert, reply, exit
/// without running the parent's exit handlers.
[[noreturn]] void convert_and_reply(onnx::ModelProto* model, int to, int fd) {
#ifdef PLUGRT_HAS_SANITIZER_HOOKS
  // A sanitizer report in here is the converter's fault and the child's end: the
  // parent's death hooks (a fuzzer's crash dump) must not run for it.
  __sanitizer_set_death_callback(nullptr);
#endif
  std::string reply;
  try {
    onnx::shape_inference::InferShapes(*model);
    const onnx::ModelProto upgraded = onnx::version_conversion::ConvertVersion(*model, to);
    reply.push_back(kUpgraded);
    if (!upgraded.AppendToString(&reply)) reply = std::string(1, kRefused) + "the upgraded model does not serialize";
  } catch (const std::exception& e) {
    reply = std::string(1, kRefused) + e.what();
  }
  _exit(write_all(fd, reply) ? 0 : 1);
}

/// How the child ended, in words, for an error message.
std::string describe_exit(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    return "crashed (signal " + std::to_string(WTERMSIG(wait_status)) + ", " + strsignal(WTERMSIG(wait_status)) + ")";
  }
  if (WIFEXITED(wait_status)) return "failed (exit code " + std::to_string(WEXITSTATUS(wait_status)) + ")";
  return "stopped abnormally";
}

}  // namespace

Status upgrade_opset(onnx::ModelProto* model, int64_t from, int64_t to) {
  const std::string cannot = "opset " + std::to_string(from) + " of the default ONNX domain cannot be upgraded to opset " +
                             std::to_string(to) + " (plugrt imports opsets " + std::to_string(to) + " and later): ";
  try {
    onnx::checker::check_model(*model);
  } catch (const std::exception& e) {
    return Status(Error::kInvalidArgument, cannot + "the ONNX checker refuses the model: " + e.what());
  }
  if (const std::string name = undefined_name(model->graph()); !name.empty()) {
    return Status(Error::kInvalidArgument, cannot + "'" + name + "' is used but no input, initializer or node defines it");
  }

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status(Error::kInternal, cannot + "no pipe for the converter's process: " + std::strerror(errno));
  }
  const pid_t child = ::fork();
  if (child < 0) {
    const int error = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return Status(Error::kInternal, cannot + "the converter's process could not start: " + std::strerror(error));
  }
  if (child == 0) {
    ::close(pipe_fds[0]);
    convert_and_reply(model, static_cast<int>(to), pipe_fds[1]);
  }
  ::close(pipe_fds[1]);
  std::string reply;
  const bool read_ok = read_all(pipe_fds[0], &reply);
  ::close(pipe_fds[0]);
  int wait_status = 0;
  while (::waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
  }

  const bool exited_cleanly = WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
  if (!read_ok || !exited_cleanly || reply.empty()) {
    return Status(Error::kNotSupported, cannot + "ONNX's version converter " + describe_exit(wait_status) +
                                            " on the model; check that it is well formed, or export it at opset " +
                                            std::to_string(to) + " or later");
  }
  if (reply[0] == kRefused) {
    return Status(Error::kNotSupported, cannot + "ONNX's version converter says: " + reply.substr(1));
  }
  onnx::ModelProto upgraded;
  if (reply[0] != kUpgraded || !upgraded.ParseFromArray(reply.data() + 1, static_cast<int>(reply.size() - 1))) {
    return Status(Error::kInternal, cannot + "the converter's process sent back an unreadable model");
  }
  model->Swap(&upgraded);
  return Status::ok();
}

}  // namespace plugrt::compiler::onnx_import
