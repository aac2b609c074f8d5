// SPDX-License-Identifier: Apache-2.0
/// \file status.h
/// The SDK's error type: a plugrt_status code with a message, and Expected<T> (a value
/// or the Status that explains why there is none). Header-only, over the C ABI alone.
///
/// A backend returns a Status from every call; the SDK's export layer reports its message
/// through the host's `report_error` and hands the code to the host. Nothing here throws.
#ifndef PLUGRT_SDK_STATUS_H_
#define PLUGRT_SDK_STATUS_H_

#include <cassert>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "plugrt/plugrt_abi.h"
#include "plugrt/sdk/status_name.h"

namespace plugrt::sdk {

/// Success, or a plugrt_status code with a message saying what failed and why. Success
/// costs a code and a null pointer: the message is kept on the heap only for a failure,
/// so that the fast path of every call makes and drops Status objects for free.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(plugrt_status code, std::string message)
      : code_(code), message_(message.empty() ? nullptr : std::make_unique<std::string>(std::move(message))) {}
  Status(const Status& other)
      : code_(other.code_), message_(other.message_ ? std::make_unique<std::string>(*other.message_) : nullptr) {}
  Status(Status&& other) noexcept = default;
  Status& operator=(const Status& other) {
    if (this != &other) *this = Status(other);
    return *this;
  }
  Status& operator=(Status&& other) noexcept = default;
  ~Status() = default;
  static Status ok() { return Status(); }

  // One factory per code a backend commonly returns.
  static Status internal(std::string m) { return {PLUGRT_STATUS_INTERNAL, std::move(m)}; }
  static Status invalid_argument(std::string m) { return {PLUGRT_STATUS_INVALID_ARGUMENT, std::move(m)}; }
  static Status not_supported(std::string m) { return {PLUGRT_STATUS_NOT_SUPPORTED, std::move(m)}; }
  static Status out_of_memory(std::string m) { return {PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED, std::move(m)}; }
  /// The blob is not one this build's init can read (another format or version): the
  /// host then runs the part on the portable fallback.
  static Status incompatible_blob(std::string m) {
    return {PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY, std::move(m)};
  }
  static Status unavailable(std::string m) { return {PLUGRT_STATUS_DELEGATE_UNAVAILABLE, std::move(m)}; }

  bool is_ok() const { return code_ == PLUGRT_STATUS_OK; }
  plugrt_status code() const { return code_; }
  const std::string& message() const { return message_ ? *message_ : empty_message(); }
  /// "InvalidArgument: <message>".
  std::string to_string() const {
    std::string text(status_name(code_));
    if (message_) text += ": " + *message_;
    return text;
  }

 private:
  static const std::string& empty_message() {
    static const std::string empty;
    return empty;
  }

  plugrt_status code_ = PLUGRT_STATUS_OK;
  std::unique_ptr<std::string> message_;  // null: no message
};

/// A value, or the failing Status that explains why there is none.
template <typename T>
class [[nodiscard]] Expected {
  static_assert(!std::is_same_v<T, Status>, "use Status directly");

 public:
  Expected(T value) : has_value_(true) { new (&value_) T(std::move(value)); }  // NOLINT
  /// From anything that converts to T (e.g. a std::unique_ptr<Derived> for a
  /// std::unique_ptr<Base>).
  template <typename U,
            typename = std::enable_if_t<std::is_convertible_v<U&&, T> && !std::is_same_v<std::decay_t<U>, T> &&
                                        !std::is_convertible_v<U&&, Status>>>
  Expected(U&& value) : has_value_(true) {  // NOLINT
    new (&value_) T(std::forward<U>(value));
  }
  Expected(Status status) : has_value_(false), status_(std::move(status)) {  // NOLINT
    if (status_.is_ok()) status_ = Status::internal("Expected built from an Ok Status");
  }
  Expected(Expected&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
      : has_value_(other.has_value_), status_(std::move(other.status_)) {
    if (has_value_) new (&value_) T(std::move(other.value_));
  }
  Expected(const Expected&) = delete;
  Expected& operator=(const Expected&) = delete;
  Expected& operator=(Expected&&) = delete;
  ~Expected() {
    if (has_value_) value_.~T();
  }

  bool is_ok() const { return has_value_; }
  const Status& status() const { return status_; }
  T& value() & {
    assert(has_value_);
    return value_;
  }
  const T& value() const& {
    assert(has_value_);
    return value_;
  }
  T&& value() && {
    assert(has_value_);
    return std::move(value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  bool has_value_;
  Status status_;
  union {
    T value_;
  };
};

namespace internal {
inline const Status& status_of(const Status& status) { return status; }
template <typename T>
const Status& status_of(const Expected<T>& expected) {
  return expected.status();
}
}  // namespace internal

}  // namespace plugrt::sdk

#define PLUGRT_SDK_CONCAT_INNER_(a, b) a##b
#define PLUGRT_SDK_CONCAT_(a, b) PLUGRT_SDK_CONCAT_INNER_(a, b)

/// Returns the Status of `expr` (a Status or an Expected) from the enclosing function
/// when it is an error.
#define PLUGRT_SDK_RETURN_IF_ERROR(expr)                                                            \
  do {                                                                                              \
    const auto& plugrt_sdk_status_ = (expr);                                                        \
    if (!plugrt_sdk_status_.is_ok()) return ::plugrt::sdk::internal::status_of(plugrt_sdk_status_); \
  } while (false)

/// `PLUGRT_SDK_ASSIGN_OR_RETURN(auto x, make_x());` declares x from an Expected's value,
/// or returns its Status from the enclosing function.
#define PLUGRT_SDK_ASSIGN_OR_RETURN(decl, expr) \
  PLUGRT_SDK_ASSIGN_OR_RETURN_IMPL_(PLUGRT_SDK_CONCAT_(plugrt_sdk_expected_, __LINE__), decl, expr)
#define PLUGRT_SDK_ASSIGN_OR_RETURN_IMPL_(tmp, decl, expr) \
  auto tmp = (expr);                                       \
  if (!tmp.is_ok()) return tmp.status();                   \
  decl = std::move(tmp).value()

#endif  // PLUGRT_SDK_STATUS_H_
