// SPDX-License-Identifier: Apache-2.0
/// \file status_name.h
/// The names of the ABI's status codes, e.g. "InvalidArgument": the one table
/// (plugrt/common/status_name.h) that the SDK's Status and the host's plugrt::Status
/// both print from, named here sdk::status_name. Header-only, over the C ABI alone.
#ifndef PLUGRT_SDK_STATUS_NAME_H_
#define PLUGRT_SDK_STATUS_NAME_H_

#include "plugrt/common/status_name.h"

namespace plugrt::sdk {

using common::status_name;

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_STATUS_NAME_H_
