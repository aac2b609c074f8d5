// SPDX-License-Identifier: Apache-2.0
// The two checks every backend's op tests make, one graph at a time: an op the backend
// takes runs there and matches the portable backend; a form it refuses stays on portable
// and the results still match.
#ifndef PLUGRT_TEST_BACKEND_SUPPORT_OP_CHECKS_H_
#define PLUGRT_TEST_BACKEND_SUPPORT_OP_CHECKS_H_

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "backend_test_support.h"

namespace plugrt::backend_test {

/// A graph whose every node the backend must take.
struct OpCase {
  std::string name;
  std::function<std::vector<uint8_t>()> build;
  /// How many partitions the backend may split it into.
  size_t max_partitions = 1;
};

/// A graph with one `op` node the backend must leave to portable.
struct RefusedCase {
  std::string name;
  std::string op;
  std::function<std::vector<uint8_t>()> build;
};

inline std::ostream& operator<<(std::ostream& os, const OpCase& c) { return os << c.name; }
inline std::ostream& operator<<(std::ostream& os, const RefusedCase& c) { return os << c.name; }

/// Compiles the case for `backend` alone: every node taken, in at most max_partitions
/// partitions, all loaded (with `options`) without fallback; outputs for two input seeds
/// within 1e-4 (relative) of the portable backend's.
void expect_taken_and_matching_portable(PluginEnvironment& env, const std::string& backend, const OpCase& c,
                                        const MethodOptions& options = {});

/// Compiles the case for `backend`: its op is left untaken, and the mixed program's
/// outputs are within 1e-4 (relative) of the portable backend's.
void expect_left_to_portable(PluginEnvironment& env, const std::string& backend, const RefusedCase& c);

}  // namespace plugrt::backend_test

#endif  // PLUGRT_TEST_BACKEND_SUPPORT_OP_CHECKS_H_
