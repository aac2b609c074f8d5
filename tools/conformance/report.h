// SPDX-License-Identifier: Apache-2.0
// Tallying test results: counts, per-op counts, grouped unsupported reasons, the JSON
// report and the text summary.
#ifndef PLUGRT_TOOLS_CONFORMANCE_REPORT_H_
#define PLUGRT_TOOLS_CONFORMANCE_REPORT_H_

#include <cstddef>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "runner.h"
#include "test_data.h"

namespace plugrt::conformance {

/// An unsupported reason with what differs between tests of one cause taken out, so
/// that identical causes group: quoted node, input and output names become '*',
/// numbers become N, and lists of them [...].
std::string normalize_reason(const std::string& reason);

struct OpCounts {
  size_t passed = 0, failed = 0, unsupported = 0;
};

class Report {
 public:
  explicit Report(std::vector<std::string> backends) : backends_(std::move(backends)) {}

  /// Adds one test's result; `op_types` are its model's (ModelInfo::op_types), each of
  /// which is credited with the result.
  void add(const TestCase& test, const std::vector<std::string>& op_types, const TestResult& result);

  size_t passed() const { return passed_; }
  size_t failed() const { return failed_; }
  size_t unsupported() const { return unsupported_; }
  /// Passes that ran with parameter inputs frozen (TestResult::frozen_inputs).
  size_t frozen_passes() const { return frozen_passes_; }

  /// Normalized unsupported reasons with their counts, most frequent first (ties by text).
  std::vector<std::pair<std::string, size_t>> unsupported_reasons() const;

  /// {"backends", "passed", "failed", "unsupported", "tests": [{"name", "suite",
  /// "result", "reason", "ops", "frozen_inputs" (when some were)}], "ops": {op: {"passed", "failed", "unsupported"}},
  /// "unsupported_reasons": [{"reason", "count"}]}.
  std::string to_json() const;

  /// The top `limit` unsupported reasons as a table (nothing when there are none).
  void print_reasons(std::ostream& out, size_t limit) const;
  /// One row per op type: its passed, failed and unsupported tests, and for an op with
  /// failures its most frequent failure reason, else its most frequent unsupported one
  /// (normalized as normalize_reason() does).
  void print_ops(std::ostream& out) const;
  /// "123 passed, 4 failed, 805 skipped".
  std::string summary_line() const;

 private:
  struct Entry {
    std::string name, suite;
    Verdict verdict;
    std::string reason;
    std::vector<std::string> ops;
    std::vector<std::string> frozen_inputs;
  };
  std::vector<std::string> backends_;
  std::vector<Entry> tests_;
  std::map<std::string, OpCounts> ops_;
  std::map<std::string, size_t> reasons_;
  size_t passed_ = 0, failed_ = 0, unsupported_ = 0, frozen_passes_ = 0;
};

}  // namespace plugrt::conformance

#endif  // PLUGRT_TOOLS_CONFORMANCE_REPORT_H_
