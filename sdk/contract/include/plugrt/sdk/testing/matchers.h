// SPDX-License-Identifier: Apache-2.0
/// \file matchers.h
/// GoogleMock matchers for plugrt status codes and the SDK's Status/Expected:
///   EXPECT_THAT(table->init(...), IsOk());
///   EXPECT_THAT(status, ErrorIs(PLUGRT_STATUS_INVALID_ARGUMENT));
///   EXPECT_THAT(expected, IsOkAndHolds(42));
#ifndef PLUGRT_SDK_TESTING_MATCHERS_H_
#define PLUGRT_SDK_TESTING_MATCHERS_H_

#include <gmock/gmock.h>

#include <string>

#include "plugrt/plugrt_abi.h"
#include "plugrt/sdk/status.h"

namespace plugrt::sdk::testing {
namespace internal {
inline plugrt_status code_of(plugrt_status s) { return s; }
inline plugrt_status code_of(const Status& s) { return s.code(); }
template <typename T>
plugrt_status code_of(const Expected<T>& e) {
  return e.is_ok() ? PLUGRT_STATUS_OK : e.status().code();
}
inline std::string describe(plugrt_status s) { return std::string(status_name(s)); }
inline std::string describe(const Status& s) { return s.to_string(); }
template <typename T>
std::string describe(const Expected<T>& e) {
  return e.is_ok() ? "Ok with a value" : e.status().to_string();
}
}  // namespace internal

MATCHER(IsOk, "is Ok") {
  *result_listener << "which is " << internal::describe(arg);
  return internal::code_of(arg) == PLUGRT_STATUS_OK;
}

MATCHER_P(ErrorIs, code, "fails with " + std::string(status_name(code))) {
  *result_listener << "which is " << internal::describe(arg);
  return internal::code_of(arg) == code;
}

MATCHER_P(IsOkAndHolds, matcher,
          "is Ok and holds a value that " + ::testing::DescribeMatcher<decltype(matcher)>(matcher)) {
  if (!arg.is_ok()) {
    *result_listener << "which is " << arg.status().to_string();
    return false;
  }
  return ::testing::ExplainMatchResult(matcher, arg.value(), result_listener);
}

}  // namespace plugrt::sdk::testing

#endif  // PLUGRT_SDK_TESTING_MATCHERS_H_
