// SPDX-License-Identifier: Apache-2.0
#include "plugrt/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace plugrt {
namespace {

Result<int> parse_digit(char c) {
  if (c < '0' || c > '9') return Status(Error::kInvalidArgument, std::string("not a digit: ") + c);
  return c - '0';
}

Result<int> add_digits(char a, char b) {
  PLUGRT_ASSIGN_OR_RETURN(int x, parse_digit(a));
  PLUGRT_ASSIGN_OR_RETURN(int y, parse_digit(b));
  return x + y;
}

Status check_digit(char c) {
  PLUGRT_RETURN_IF_ERROR(parse_digit(c));
  return Status::ok();
}

TEST(Status, OkHasNoMessageAndErrorsPrintTheirCode) {
  EXPECT_TRUE(Status::ok().is_ok());
  EXPECT_EQ(Status::ok().to_string(), "Ok");
  Status error(Error::kNotFound, "no backend named 'npu'");
  EXPECT_FALSE(error.is_ok());
  EXPECT_EQ(error.to_string(), "NotFound: no backend named 'npu'");
  EXPECT_EQ(error.with_context("loading model.prt").message(), "loading model.prt: no backend named 'npu'");
}

TEST(Status, AbiCodesMapOneForOneAndUnknownOnesBecomeInternal) {
  EXPECT_EQ(error_from_abi(PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY), Error::kDelegateInvalidCompatibility);
  EXPECT_EQ(to_string(error_from_abi(PLUGRT_STATUS_PLUGIN_ABI_MISMATCH)), "PluginAbiMismatch");
  EXPECT_EQ(error_from_abi(999), Error::kInternal);
  EXPECT_EQ(error_from_abi(-1), Error::kInternal);
}

TEST(Status, EveryAbiCodeHasANameInTheOneTable) {
  for (plugrt_status code = 0; code < 0x100; ++code) {
    const Error error = error_from_abi(code);
    if (error == Error::kInternal && code != PLUGRT_STATUS_INTERNAL) continue;  // not an ABI code
    EXPECT_NE(to_string(error), "Unknown") << "code " << code;
    EXPECT_EQ(to_string(error), common::status_name(code));
  }
  EXPECT_EQ(to_string(Error::kDelegateCrashed), "DelegateCrashed");
}

TEST(Result, EarlyReturnMacrosPropagateTheFirstError) {
  EXPECT_EQ(*add_digits('2', '3'), 5);
  Result<int> bad = add_digits('2', 'x');
  EXPECT_EQ(bad.code(), Error::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "not a digit: x");
  EXPECT_TRUE(check_digit('1').is_ok());
  EXPECT_EQ(check_digit('?').code(), Error::kInvalidArgument);
}

TEST(Result, NeverHoldsOkWithoutAValueAndMovesOnlyTypes) {
  Result<int> odd{Status::ok()};
  EXPECT_FALSE(odd.is_ok());
  EXPECT_EQ(odd.code(), Error::kInternal);
  Result<std::unique_ptr<int>> owned(std::make_unique<int>(7));
  Result<std::unique_ptr<int>> moved(std::move(owned));
  ASSERT_TRUE(moved.is_ok());
  EXPECT_EQ(**moved, 7);
}

}  // namespace
}  // namespace plugrt
