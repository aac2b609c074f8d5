// SPDX-License-Identifier: Apache-2.0
// The tuner: measures what each node of a graph costs on each backend that takes it, in
// this process, and records the figures in a CostProfile (`plugrt compile --tune`).
#ifndef PLUGRT_PLACEMENT_TUNER_H_
#define PLUGRT_PLACEMENT_TUNER_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "plugrt/backend.h"
#include "plugrt/placement/cost_profile.h"
#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt::placement {

struct TuneOptions {
  /// Timed runs per node and backend (after one untimed run); the median is kept.
  int runs = 5;
  /// Threads each backend may use while measured (InitOptions::num_threads). One by
  /// default: figures from many threads depend on what else the machine runs.
  size_t threads = 1;
  /// Stop starting new measurements after this many seconds; what is left keeps the estimate.
  double budget_seconds = 120;
  /// Leave a backend's nodes of an op type unmeasured once it has figures clearly slower
  /// (4x) than another backend's on two nodes of that op type in this graph: placement
  /// charges the rest by its measured slowness (placement/README.md).
  bool settle_clearly_slower = false;
  /// Where to write one line of progress per measurement (null: silent).
  std::ostream* progress = nullptr;
};

/// One backend to measure, and which nodes of the graph its `partition` takes.
struct TuneBackend {
  RegisteredBackend backend;
  std::vector<bool> taken;
};

/// One figure the tuner added to the profile.
struct TunedFigure {
  uint32_t node = 0;    ///< the first node of the graph with its signature that the backend takes
  std::string op;       ///< that node's op type
  std::string backend;  ///< the backend's name
  double us = 0;        ///< the median
};

struct TuneReport {
  size_t measured = 0;               ///< figures added to the profile
  size_t known = 0;                  ///< (signature, backend) pairs the profile already had
  size_t failed = 0;                 ///< pairs whose preprocess, init or run failed (they keep the estimate)
  size_t skipped = 0;                ///< pairs left for lack of time
  size_t settled = 0;                ///< pairs left because the backend measured clearly slower (settle_clearly_slower)
  double seconds = 0;                ///< time spent measuring, lowering included
  std::vector<TunedFigure> figures;  ///< the `measured` figures, in the order taken
};

/// For each distinct op signature of the graph (a verified graph IR buffer) and each backend
/// that takes a node with it (`taken`), and that the profile lacks: lowers the node alone as a
/// partition, runs it `runs` times on inputs of small deterministic values, and records the
/// median microseconds. A failure costs that figure only (it is counted, with a progress line).
TuneReport tune(Span<const uint8_t> graph, const std::vector<TuneBackend>& backends, CostProfile& profile,
                const TuneOptions& options);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_TUNER_H_
