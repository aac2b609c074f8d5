// SPDX-License-Identifier: Apache-2.0
// The SDK's versioned blob header: what write_header writes is what check_header
// accepts; another format, another version or a short blob is refused as incompatible.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugrt/sdk/blob_header.h"
#include "plugrt/sdk/testing/matchers.h"

namespace {

namespace sdk = plugrt::sdk;
using plugrt::sdk::testing::ErrorIs;
using plugrt::sdk::testing::IsOk;
using ::testing::HasSubstr;

// Writes version 3, reads 2 to 3.
constexpr sdk::BlobFormat kFormat{"PRTTESTS", "test", 3, 2};

std::vector<uint8_t> header_with_version(uint32_t version) {
  constexpr sdk::BlobFormat writer{"PRTTESTS", "test", 0, 0};
  std::vector<uint8_t> blob(sdk::BlobFormat::kHeaderSize + 4, 0xab);
  writer.write_header(blob.data());
  for (int i = 0; i < 4; ++i) blob[8 + i] = static_cast<uint8_t>(version >> (8 * i));
  return blob;
}

TEST(BlobHeader, WritesMagicLittleEndianVersionAndZeros) {
  std::vector<uint8_t> blob(sdk::BlobFormat::kHeaderSize, 0xff);
  kFormat.write_header(blob.data());
  EXPECT_EQ(std::string(blob.begin(), blob.begin() + 8), "PRTTESTS");
  EXPECT_EQ(blob[8], 3);
  for (size_t i = 9; i < sdk::BlobFormat::kHeaderSize; ++i) EXPECT_EQ(blob[i], 0) << i;
  EXPECT_THAT(kFormat.check_header(blob.data(), blob.size()), IsOk());
}

TEST(BlobHeader, ReadsEveryVersionInItsRangeAndNoOther) {
  for (uint32_t version : {2u, 3u}) {
    const std::vector<uint8_t> blob = header_with_version(version);
    EXPECT_THAT(kFormat.check_header(blob.data(), blob.size()), IsOk()) << version;
  }
  for (uint32_t version : {0u, 1u, 4u, 0x01000003u}) {
    const std::vector<uint8_t> blob = header_with_version(version);
    const sdk::Status status = kFormat.check_header(blob.data(), blob.size());
    EXPECT_THAT(status, ErrorIs(PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY));
    EXPECT_THAT(status.message(), HasSubstr("test blob format version " + std::to_string(version) +
                                            "; this build reads versions 2 to 3"));
  }
}

TEST(BlobHeader, RefusesAnotherFormatAShortBlobAndNull) {
  auto expect_lacks_header = [](const sdk::Status& status) {
    EXPECT_THAT(status, ErrorIs(PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY));
    EXPECT_THAT(status.message(), HasSubstr("lacks the PRTTESTS header of test backend blobs"));
  };
  std::vector<uint8_t> foreign = header_with_version(3);
  foreign[0] = 'X';
  expect_lacks_header(kFormat.check_header(foreign.data(), foreign.size()));
  const std::vector<uint8_t> good = header_with_version(3);
  expect_lacks_header(kFormat.check_header(good.data(), sdk::BlobFormat::kHeaderSize - 1));
  expect_lacks_header(kFormat.check_header(nullptr, 0));
}

}  // namespace
