// SPDX-License-Identifier: Apache-2.0
// Availability: a backend's answer to "can you run here?", the same type on both sides
// of the ABI: what an SDK backend returns from is_available and what the host's
// RegisteredBackend::is_available gives back (plugrt::Availability in the core,
// plugrt::sdk::Availability in the SDK: both name this one).
#ifndef PLUGRT_COMMON_AVAILABILITY_H_
#define PLUGRT_COMMON_AVAILABILITY_H_

#include <string>
#include <utility>

namespace plugrt::common {

struct Availability {
  bool available = true;
  std::string reason;  ///< why not, when not available
  static Availability yes() { return {true, {}}; }
  static Availability no(std::string reason) { return {false, std::move(reason)}; }
};

}  // namespace plugrt::common

#endif  // PLUGRT_COMMON_AVAILABILITY_H_
