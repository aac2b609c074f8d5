// SPDX-License-Identifier: Apache-2.0
/// \file status_name.h
/// The names of the ABI's status codes: the one table that the SDK's Status and the
/// host's plugrt::Status both print from. Header-only, over the C ABI alone; the SDK
/// names it plugrt::sdk::status_name (plugrt/sdk/status_name.h).
#ifndef PLUGRT_COMMON_STATUS_NAME_H_
#define PLUGRT_COMMON_STATUS_NAME_H_

#include <string_view>

#include "plugrt/plugrt_abi.h"

namespace plugrt::common {

/// The name of a status code, e.g. "InvalidArgument"; "Unknown" outside the ABI's enum.
/// The one table of these names: the SDK's Status and the host's plugrt::to_string(Error) read it.
constexpr std::string_view status_name(plugrt_status code) {
  switch (code) {
    case PLUGRT_STATUS_OK: return "Ok";
    case PLUGRT_STATUS_INTERNAL: return "Internal";
    case PLUGRT_STATUS_INVALID_STATE: return "InvalidState";
    case PLUGRT_STATUS_CANCELLED: return "Cancelled";
    case PLUGRT_STATUS_NOT_SUPPORTED: return "NotSupported";
    case PLUGRT_STATUS_INVALID_ARGUMENT: return "InvalidArgument";
    case PLUGRT_STATUS_NOT_FOUND: return "NotFound";
    case PLUGRT_STATUS_MEMORY_ALLOCATION_FAILED: return "MemoryAllocationFailed";
    case PLUGRT_STATUS_ACCESS_FAILED: return "AccessFailed";
    case PLUGRT_STATUS_INVALID_PROGRAM: return "InvalidProgram";
    case PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY: return "DelegateInvalidCompatibility";
    case PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED: return "DelegateMemoryAllocationFailed";
    case PLUGRT_STATUS_DELEGATE_INVALID_HANDLE: return "DelegateInvalidHandle";
    case PLUGRT_STATUS_DELEGATE_UNAVAILABLE: return "DelegateUnavailable";
    case PLUGRT_STATUS_DELEGATE_CRASHED: return "DelegateCrashed";
    case PLUGRT_STATUS_PLUGIN_INVALID: return "PluginInvalid";
    case PLUGRT_STATUS_PLUGIN_ABI_MISMATCH: return "PluginAbiMismatch";
    default: return "Unknown";
  }
}

}  // namespace plugrt::common

#endif  // PLUGRT_COMMON_STATUS_NAME_H_
