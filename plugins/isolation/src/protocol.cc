// SPDX-License-Identifier: Apache-2.0
#include "plugrt/isolation/protocol.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace plugrt::isolation {
namespace {

using Clock = std::chrono::steady_clock;

Status socket_error(const char* what) {
  return Status(Error::kAccessFailed, std::string(what) + ": " + strerror(errno));
}

// Milliseconds left before `deadline`, for poll(); -1 without one.
int remaining_ms(bool has_deadline, Clock::time_point deadline) {
  if (!has_deadline) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

void close_received_fds(msghdr& message) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      close(fd);
    }
  }
}

}  // namespace

Status send_frame(int socket, const FrameHeader& header, const std::vector<uint8_t>& payload, int fd) {
  FrameHeader sent = header;
  sent.payload_size = static_cast<uint32_t>(payload.size());
  sent.num_fds = fd >= 0 ? 1 : 0;
  iovec parts[2] = {{&sent, sizeof(sent)}, {const_cast<uint8_t*>(payload.data()), payload.size()}};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = parts;
  message.msg_iovlen = payload.empty() ? 1 : 2;
  if (fd >= 0) {
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  size_t total = sizeof(sent) + payload.size();
  size_t done = 0;
  while (done < total) {
    const ssize_t n = sendmsg(socket, &message, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return socket_error("sending to the backend host");
    }
    done += static_cast<size_t>(n);
    // The descriptor went with the first byte; the rest is plain data.
    message.msg_control = nullptr;
    message.msg_controllen = 0;
    size_t skip = static_cast<size_t>(n);
    while (message.msg_iovlen > 0 && skip >= message.msg_iov[0].iov_len) {
      skip -= message.msg_iov[0].iov_len;
      ++message.msg_iov;
      --message.msg_iovlen;
    }
    if (message.msg_iovlen > 0) {
      message.msg_iov[0].iov_base = static_cast<char*>(message.msg_iov[0].iov_base) + skip;
      message.msg_iov[0].iov_len -= skip;
    }
  }
  return Status::ok();
}

Result<Frame> receive_frame(int socket, const ReceiveLimits& limits, ReceiveFailure* failure) {
  *failure = ReceiveFailure::kNone;
  const bool has_deadline = limits.timeout_ms >= 0;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(std::max(limits.timeout_ms, 0));
  Frame frame;
  // Reads exactly `size` bytes; the first read also takes any descriptor.
  auto read_exactly = [&](void* out, size_t size, bool first) -> Status {
    size_t done = 0;
    while (done < size) {
      pollfd p[2] = {{socket, POLLIN, 0}, {limits.exit_fd, POLLIN, 0}};
      const int ready = poll(p, limits.exit_fd >= 0 ? 2 : 1, remaining_ms(has_deadline, deadline));
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return socket_error("waiting for the backend host");
      if (ready == 0) {
        *failure = ReceiveFailure::kTimedOut;
        return Status(Error::kDelegateCrashed, "timed out");
      }
      if (p[0].revents == 0) {  // only the process's exit: nothing more will come
        *failure = ReceiveFailure::kClosed;
        return Status(Error::kDelegateCrashed, "the backend host exited");
      }
      iovec part{static_cast<char*>(out) + done, size - done};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
      msghdr message{};
      message.msg_iov = &part;
      message.msg_iovlen = 1;
      if (first && done == 0) {
        message.msg_control = control;
        message.msg_controllen = sizeof(control);
      }
      const ssize_t n = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno != ECONNRESET) return socket_error("reading from the backend host");
      if (n <= 0) {
        *failure = ReceiveFailure::kClosed;
        return Status(Error::kDelegateCrashed, "the connection closed");
      }
      if (message.msg_control != nullptr && message.msg_controllen > 0) {
        cmsghdr* c = CMSG_FIRSTHDR(&message);
        const bool one_fd = c != nullptr && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
                            c->cmsg_len == CMSG_LEN(sizeof(int)) && CMSG_NXTHDR(&message, c) == nullptr;
        if (limits.accept_fd && one_fd && frame.fd < 0 && (message.msg_flags & MSG_CTRUNC) == 0) {
          std::memcpy(&frame.fd, CMSG_DATA(c), sizeof(int));
        } else {
          close_received_fds(message);
          *failure = ReceiveFailure::kMalformed;
          return Status(Error::kInternal, "a frame carried file descriptors it should not have");
        }
      }
      done += static_cast<size_t>(n);
    }
    return Status::ok();
  };
  auto fail = [&](Status status) -> Result<Frame> {
    if (frame.fd >= 0) close(frame.fd);
    if (*failure == ReceiveFailure::kNone) *failure = ReceiveFailure::kMalformed;
    return status;
  };
  if (Status s = read_exactly(&frame.header, sizeof(frame.header), true); !s.is_ok()) return fail(s);
  const FrameHeader& h = frame.header;
  if (h.magic != kFrameMagic) return fail(Status(Error::kInternal, "a frame has a bad magic number"));
  if (h.version != kProtocolVersion) {
    return fail(Status(Error::kInternal, "a frame has protocol version " + std::to_string(h.version) + ", expected " +
                                             std::to_string(kProtocolVersion)));
  }
  if (h.payload_size > kMaxPayloadSize) {
    return fail(Status(Error::kInternal, "a frame announces " + std::to_string(h.payload_size) +
                                             " payload bytes, more than the " + std::to_string(kMaxPayloadSize) +
                                             " allowed"));
  }
  if (h.num_fds > 1 || (h.num_fds == 1) != (frame.fd >= 0)) {
    return fail(Status(Error::kInternal, "a frame's descriptor count does not match what came with it"));
  }
  frame.payload.resize(h.payload_size);
  if (h.payload_size > 0) {
    if (Status s = read_exactly(frame.payload.data(), h.payload_size, false); !s.is_ok()) return fail(s);
  }
  return frame;
}

void PayloadWriter::u32(uint32_t value) {
  const auto* p = reinterpret_cast<const uint8_t*>(&value);
  data_.insert(data_.end(), p, p + sizeof(value));
}
void PayloadWriter::u64(uint64_t value) {
  const auto* p = reinterpret_cast<const uint8_t*>(&value);
  data_.insert(data_.end(), p, p + sizeof(value));
}
void PayloadWriter::i64(int64_t value) { u64(static_cast<uint64_t>(value)); }
void PayloadWriter::bytes(std::string_view value) {
  u32(static_cast<uint32_t>(value.size()));
  data_.insert(data_.end(), value.begin(), value.end());
}

bool PayloadReader::take(void* out, size_t size) {
  if (!ok_ || data_.size() - offset_ < size) {
    ok_ = false;
    return false;
  }
  std::memcpy(out, data_.data() + offset_, size);
  offset_ += size;
  return true;
}
bool PayloadReader::u32(uint32_t* value) { return take(value, sizeof(*value)); }
bool PayloadReader::u64(uint64_t* value) { return take(value, sizeof(*value)); }
bool PayloadReader::i64(int64_t* value) {
  uint64_t raw;
  if (!take(&raw, sizeof(raw))) return false;
  *value = static_cast<int64_t>(raw);
  return true;
}
bool PayloadReader::bytes(std::string* value, size_t max_size) {
  uint32_t size;
  if (!u32(&size)) return false;
  if (size > max_size || data_.size() - offset_ < size) {
    ok_ = false;
    return false;
  }
  value->assign(reinterpret_cast<const char*>(data_.data()) + offset_, size);
  offset_ += size;
  return true;
}

}  // namespace plugrt::isolation
