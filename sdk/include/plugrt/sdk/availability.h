// SPDX-License-Identifier: Apache-2.0
// Availability: a backend's answer to "can you run here?", the same type on both sides
// of the ABI (plugrt/common/availability.h): what an SDK backend returns from
// is_available and what the host's RegisteredBackend::is_available gives back.
#ifndef PLUGRT_SDK_AVAILABILITY_H_
#define PLUGRT_SDK_AVAILABILITY_H_

#include "plugrt/common/availability.h"

namespace plugrt::sdk {

using common::Availability;

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_AVAILABILITY_H_
