// SPDX-License-Identifier: Apache-2.0
// Availability: a backend's answer to "can you run here?", the same type on both sides
// of the ABI: what an SDK backend returns from is_available and what the host's
// RegisteredBackend::is_available gives back.
#ifndef PLUGRT_SDK_AVAILABILITY_H_
#define PLUGRT_SDK_AVAILABILITY_H_

#include <string>
#include <utility>

namespace plugrt::sdk {

struct Availability {
  bool available = true;
  std::string reason;  ///< why not, when not available
  static Availability yes() { return {true, {}}; }
  static Availability no(std::string reason) { return {false, std::move(reason)}; }
};

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_AVAILABILITY_H_
