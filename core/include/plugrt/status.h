// SPDX-License-Identifier: Apache-2.0
// Errors on the C++ side: Error (the ABI's status codes as an enum class), Status (a code
// plus a message) and Result<T> (a value or a failing Status). Nothing here throws.
#ifndef PLUGRT_STATUS_H_
#define PLUGRT_STATUS_H_

#include <cassert>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "plugrt/common/status_name.h"
#include "plugrt/plugrt_abi.h"

namespace plugrt {

/// The same codes as plugrt_status in the ABI, one for one.
enum class Error : plugrt_status {
  kOk = PLUGRT_STATUS_OK,
  kInternal = PLUGRT_STATUS_INTERNAL,
  kInvalidState = PLUGRT_STATUS_INVALID_STATE,
  kCancelled = PLUGRT_STATUS_CANCELLED,
  kNotSupported = PLUGRT_STATUS_NOT_SUPPORTED,
  kInvalidArgument = PLUGRT_STATUS_INVALID_ARGUMENT,
  kNotFound = PLUGRT_STATUS_NOT_FOUND,
  kMemoryAllocationFailed = PLUGRT_STATUS_MEMORY_ALLOCATION_FAILED,
  kAccessFailed = PLUGRT_STATUS_ACCESS_FAILED,
  kInvalidProgram = PLUGRT_STATUS_INVALID_PROGRAM,
  kDelegateInvalidCompatibility = PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY,
  kDelegateMemoryAllocationFailed = PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED,
  kDelegateInvalidHandle = PLUGRT_STATUS_DELEGATE_INVALID_HANDLE,
  kDelegateUnavailable = PLUGRT_STATUS_DELEGATE_UNAVAILABLE,
  kDelegateCrashed = PLUGRT_STATUS_DELEGATE_CRASHED,
  kPluginInvalid = PLUGRT_STATUS_PLUGIN_INVALID,
  kPluginAbiMismatch = PLUGRT_STATUS_PLUGIN_ABI_MISMATCH,
};

/// The code's name, e.g. "InvalidArgument"; "Unknown" for a value outside the enum
/// (a plugin may return anything). One table serves host and SDK: common::status_name.
constexpr std::string_view to_string(Error error) { return common::status_name(static_cast<plugrt_status>(error)); }

/// A code from a plugin, which may be any integer, as an Error. Unknown values become
/// kInternal so the host never switches on a value outside the enum.
Error error_from_abi(plugrt_status status);

/// Success, or an error code with a message that names what failed and why. An Ok
/// Status holds no message and never allocates.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error code, std::string message) : code_(code), message_(std::move(message)) {
    assert(code != Error::kOk && "an error Status needs an error code");
  }
  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == Error::kOk; }
  Error code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "InvalidArgument: <message>".
  std::string to_string() const;

  /// The same error with `context` in front of its message: "context: message".
  Status with_context(std::string_view context) const;

 private:
  Error code_ = Error::kOk;
  std::string message_;
};

/// A value, or the Status that explains why there is none. Never "Ok without a value".
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<T, Status>, "use Status directly");

 public:
  Result(T value) : has_value_(true) { new (&value_) T(std::move(value)); }  // NOLINT
  Result(Status status) : has_value_(false), status_(std::move(status)) {    // NOLINT
    if (status_.is_ok()) status_ = Status(Error::kInternal, "Result built from an Ok Status");
  }
  Result(Result&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
      : has_value_(other.has_value_), status_(std::move(other.status_)) {
    if (has_value_) new (&value_) T(std::move(other.value_));
  }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  Result& operator=(Result&&) = delete;
  ~Result() {
    if (has_value_) value_.~T();
  }

  bool is_ok() const { return has_value_; }
  const Status& status() const { return status_; }
  Error code() const { return status_.code(); }

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
const Status& status_of(const Result<T>& result) {
  return result.status();
}
}  // namespace internal

}  // namespace plugrt

#define PLUGRT_CONCAT_INNER_(a, b) a##b
#define PLUGRT_CONCAT_(a, b) PLUGRT_CONCAT_INNER_(a, b)

/// Returns the Status of `expr` (a Status or a Result) from the enclosing function when
/// it is an error.
#define PLUGRT_RETURN_IF_ERROR(expr)                                                                       \
  do {                                                                                                     \
    const auto& plugrt_status_or_result_ = (expr);                                                         \
    if (!plugrt_status_or_result_.is_ok()) return ::plugrt::internal::status_of(plugrt_status_or_result_); \
  } while (false)

/// `PLUGRT_ASSIGN_OR_RETURN(auto x, make_x());` declares x from a Result's value, or
/// returns the Result's Status from the enclosing function.
#define PLUGRT_ASSIGN_OR_RETURN(decl, expr) \
  PLUGRT_ASSIGN_OR_RETURN_IMPL_(PLUGRT_CONCAT_(plugrt_result_, __LINE__), decl, expr)
#define PLUGRT_ASSIGN_OR_RETURN_IMPL_(tmp, decl, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.is_ok()) return tmp.status();               \
  decl = std::move(tmp).value()

#endif  // PLUGRT_STATUS_H_
