// SPDX-License-Identifier: Apache-2.0
// The protocol between the host and plugrt-backend-host, the process that runs one
// isolated plugin. Frames cross a stream socket pair: a fixed header, then `payload_size`
// bytes, with at most one file descriptor (a memfd) attached to the header's first byte.
// The host sends requests; the backend host answers each with one response carrying the
// same call id. The host checks every field of a response before using it: a broken or
// hostile backend host gets an error, never a crash in the host.
//
// Calls (payloads are little-endian fields written by PayloadWriter):
//   kDescribe   ->  plugin name, version, ABI major/minor, then per backend: name,
//                   description, capabilities, is_available and its reason
//   kInit       backend name, num_threads, compile specs, runtime options, blob size;
//               fd: a sealed memfd holding the blob (absent for an empty blob)
//               ->  status and message
//   kExecute    region size, inputs and outputs (ndim, dtype, shape, offset, bytes),
//               the symbols' values (count, then each);
//               fd: a new shared memory region, sent only when the region changes
//               ->  status and message
//   kDestroy    ->  status (always ok); the backend host then waits for EOF
#ifndef PLUGRT_ISOLATION_PROTOCOL_H_
#define PLUGRT_ISOLATION_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugrt/status.h"

namespace plugrt::isolation {

/// "PRTI" in the first four bytes of every frame.
constexpr uint32_t kFrameMagic = 0x49545250;
/// Bumped on any change to a frame or payload layout; both sides must agree.
constexpr uint16_t kProtocolVersion = 2;
/// The largest payload either side accepts. Blobs and tensors never cross in payloads.
constexpr uint32_t kMaxPayloadSize = 4u << 20;
/// The most dimensions and tensors one execute request may describe.
constexpr uint32_t kMaxDimensions = 16;
constexpr uint32_t kMaxTensors = 4096;
/// The most symbol values one execute request may carry.
constexpr uint32_t kMaxSymbolValues = 4096;

enum class CallKind : uint16_t { kDescribe = 1, kInit = 2, kExecute = 3, kDestroy = 4 };

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  uint16_t version = kProtocolVersion;
  uint16_t kind = 0;     // a CallKind
  uint64_t call_id = 0;  // echoed in the response
  int32_t status = 0;    // responses: a plugrt_status
  uint32_t payload_size = 0;
  uint32_t num_fds = 0;  // 0 or 1
  uint32_t reserved = 0;
};
static_assert(sizeof(FrameHeader) == 32, "the frame header layout is part of the protocol");

/// One received frame. `fd` is -1 unless one came with it; the receiver owns it.
struct Frame {
  FrameHeader header;
  std::vector<uint8_t> payload;
  int fd = -1;
};

/// Sends one frame (header, payload, optional fd) on a stream socket, never raising
/// SIGPIPE. Errors: kAccessFailed when the peer is gone or the socket fails.
Status send_frame(int socket, const FrameHeader& header, const std::vector<uint8_t>& payload, int fd = -1);

/// What receive_frame may take from the peer.
struct ReceiveLimits {
  bool accept_fd = false;  // any other descriptor is closed unread
  int timeout_ms = -1;     // per frame; -1 waits for ever
  /// A pidfd of the process at the other end, or -1: once it is readable (the process
  /// has exited) and the socket has nothing more, the wait ends as kClosed, even while a
  /// descendant of that process still holds the socket open.
  int exit_fd = -1;
};

/// Why receive_frame returned no frame.
enum class ReceiveFailure { kNone, kClosed, kTimedOut, kMalformed };

/// Receives one frame and checks its header (magic, version, sizes, descriptor count).
/// On failure sets `failure` and returns an error saying what was wrong.
Result<Frame> receive_frame(int socket, const ReceiveLimits& limits, ReceiveFailure* failure);

/// Appends fixed-width fields and strings (u32 size + bytes) to a payload.
class PayloadWriter {
 public:
  void u32(uint32_t value);
  void u64(uint64_t value);
  void i64(int64_t value);
  void bytes(std::string_view value);
  std::vector<uint8_t>& data() { return data_; }

 private:
  std::vector<uint8_t> data_;
};

/// Reads a payload back, checking every size against what is left. After the first
/// failure every read fails and ok() is false.
class PayloadReader {
 public:
  explicit PayloadReader(const std::vector<uint8_t>& data) : data_(data) {}
  bool u32(uint32_t* value);
  bool u64(uint64_t* value);
  bool i64(int64_t* value);
  /// A string of at most `max_size` bytes.
  bool bytes(std::string* value, size_t max_size);
  bool ok() const { return ok_; }
  bool at_end() const { return ok_ && offset_ == data_.size(); }

 private:
  bool take(void* out, size_t size);
  const std::vector<uint8_t>& data_;
  size_t offset_ = 0;
  bool ok_ = true;
};

}  // namespace plugrt::isolation

#endif  // PLUGRT_ISOLATION_PROTOCOL_H_
