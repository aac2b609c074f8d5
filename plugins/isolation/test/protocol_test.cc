// SPDX-License-Identifier: Apache-2.0
// The frame reader against what a broken or hostile peer may send: it must refuse, with a
// reason, and never read or keep more than the limits allow.
#include "plugrt/isolation/protocol.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace plugrt::isolation {
namespace {

using ::testing::HasSubstr;

class Frames : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets_), 0); }
  void TearDown() override {
    for (int s : sockets_) {
      if (s >= 0) close(s);
    }
  }
  void write_raw(const void* data, size_t size) {
    ASSERT_EQ(write(sockets_[0], data, size), static_cast<ssize_t>(size));
  }
  Result<Frame> receive(ReceiveLimits limits, ReceiveFailure* failure) {
    return receive_frame(sockets_[1], limits, failure);
  }

  int sockets_[2] = {-1, -1};
};

TEST_F(Frames, AFrameWithAPayloadAndADescriptorArrivesWhole) {
  PayloadWriter writer;
  writer.u32(7);
  writer.bytes("hello");
  writer.i64(-3);
  const int fd = memfd_create("test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  FrameHeader header;
  header.kind = static_cast<uint16_t>(CallKind::kInit);
  header.call_id = 42;
  ASSERT_TRUE(send_frame(sockets_[0], header, writer.data(), fd).is_ok());
  close(fd);
  ReceiveFailure failure;
  Result<Frame> frame = receive({true, 1000}, &failure);
  ASSERT_TRUE(frame.is_ok()) << frame.status().to_string();
  EXPECT_EQ(frame->header.call_id, 42u);
  EXPECT_GE(frame->fd, 0);
  close(frame->fd);
  PayloadReader reader(frame->payload);
  uint32_t seven = 0;
  std::string text;
  int64_t minus_three = 0;
  EXPECT_TRUE(reader.u32(&seven) && reader.bytes(&text, 16) && reader.i64(&minus_three) && reader.at_end());
  EXPECT_EQ(seven, 7u);
  EXPECT_EQ(text, "hello");
  EXPECT_EQ(minus_three, -3);
}

TEST_F(Frames, ADescriptorNotAskedForIsClosedAndTheFrameRefused) {
  const int fd = memfd_create("unwanted", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_frame(sockets_[0], FrameHeader{}, {}, fd).is_ok());
  close(fd);
  ReceiveFailure failure;
  Result<Frame> frame = receive({false, 1000}, &failure);
  EXPECT_FALSE(frame.is_ok());
  EXPECT_EQ(failure, ReceiveFailure::kMalformed);
  EXPECT_THAT(frame.status().message(), HasSubstr("file descriptors"));
}

TEST_F(Frames, BadMagicVersionOrSizeIsRefused) {
  struct Case {
    void (*spoil)(FrameHeader&);
    const char* reason;
  };
  const Case cases[] = {
      {[](FrameHeader& h) { h.magic = 0x4b4e554a; }, "bad magic"},
      {[](FrameHeader& h) { h.version = kProtocolVersion + 1; }, "protocol version"},
      {[](FrameHeader& h) { h.payload_size = kMaxPayloadSize + 1; }, "payload bytes, more than"},
      {[](FrameHeader& h) { h.num_fds = 1; }, "descriptor count"},
  };
  for (const Case& c : cases) {
    FrameHeader header;
    c.spoil(header);
    write_raw(&header, sizeof(header));
    ReceiveFailure failure;
    Result<Frame> frame = receive({true, 1000}, &failure);
    EXPECT_FALSE(frame.is_ok()) << c.reason;
    EXPECT_EQ(failure, ReceiveFailure::kMalformed) << c.reason;
    EXPECT_THAT(frame.status().message(), HasSubstr(c.reason));
    // Start each case on a clean connection.
    TearDown();
    SetUp();
  }
}

TEST_F(Frames, ASilentPeerTimesOutAndAClosedOneIsSeen) {
  ReceiveFailure failure;
  Result<Frame> frame = receive({false, 50}, &failure);
  EXPECT_FALSE(frame.is_ok());
  EXPECT_EQ(failure, ReceiveFailure::kTimedOut);
  FrameHeader header;
  write_raw(&header, sizeof(header) / 2);  // half a header, then gone
  close(sockets_[0]);
  sockets_[0] = -1;
  Result<Frame> after_close = receive({false, 1000}, &failure);
  EXPECT_FALSE(after_close.is_ok());
  EXPECT_EQ(failure, ReceiveFailure::kClosed);
}

// The peer's exit (its pidfd readable; an eventfd stands in) ends the wait while the
// socket stays open and silent, as when a descendant of the peer holds it; a frame that
// is already there is still read first.
TEST_F(Frames, ThePeersExitEndsTheWaitButNotBeforeWhatItSent) {
  const int exited = eventfd(1, EFD_CLOEXEC);
  ASSERT_GE(exited, 0);
  FrameHeader header;
  header.kind = static_cast<uint16_t>(CallKind::kExecute);
  ASSERT_TRUE(send_frame(sockets_[0], header, {}, -1).is_ok());
  ReceiveFailure failure;
  Result<Frame> sent = receive({false, 5000, exited}, &failure);
  EXPECT_TRUE(sent.is_ok()) << sent.status().to_string();
  Result<Frame> after_exit = receive({false, 5000, exited}, &failure);
  EXPECT_FALSE(after_exit.is_ok());
  EXPECT_EQ(failure, ReceiveFailure::kClosed);
  close(exited);
}

TEST(Payloads, AReaderNeverReadsPastTheEnd) {
  PayloadWriter writer;
  writer.u32(1000);  // a string that claims 1000 bytes
  writer.u32(1);
  PayloadReader reader(writer.data());
  std::string text;
  EXPECT_FALSE(reader.bytes(&text, 4096));
  uint32_t value = 0;
  EXPECT_FALSE(reader.u32(&value));  // every read fails after the first failure
  EXPECT_FALSE(reader.ok());
  PayloadWriter big;
  big.bytes(std::string(100, 'x'));
  PayloadReader limited(big.data());
  EXPECT_FALSE(limited.bytes(&text, 99));  // over the caller's limit
}

}  // namespace
}  // namespace plugrt::isolation
