// SPDX-License-Identifier: Apache-2.0
// The load report as JSON: the one form `plugrt run --json`, the C API and Python share.
#ifndef PLUGRT_RUNTIME_REPORT_JSON_H_
#define PLUGRT_RUNTIME_REPORT_JSON_H_

#include <nlohmann/json.hpp>

#include "plugrt/method.h"

namespace plugrt {

/// One object per delegate: where it runs, where its blob came from, and why.
inline nlohmann::json delegates_json(const LoadReport& report) {
  nlohmann::json delegates = nlohmann::json::array();
  for (const DelegatePlacement& d : report.delegates) {
    delegates.push_back({{"delegate", d.delegate},
                         {"requested_backend", d.requested_backend},
                         {"backend", d.backend},
                         {"origin", d.origin},
                         {"fell_back", d.fell_back},
                         {"isolated", d.isolated},
                         {"reason", d.reason},
                         {"blob_size", d.blob_size},
                         {"blob_origin", d.blob_origin},
                         {"placement_reason", d.placement_reason},
                         {"verification", d.verification}});
  }
  return delegates;
}

/// The whole report: the method, the placement that ran, the thread budget, the delegates.
inline nlohmann::json report_json(const LoadReport& report) {
  return {{"method", report.method},
          {"placement", report.placement},
          {"placement_note", report.placement_note},
          {"num_threads", report.num_threads},
          {"delegates", delegates_json(report)}};
}

}  // namespace plugrt

#endif  // PLUGRT_RUNTIME_REPORT_JSON_H_
