// SPDX-License-Identifier: Apache-2.0
// Shared by the XNNPACK backend's tests: the backends' common test support
// (test/backend_support/) with the real libplugrt_xnnpack.so.
#ifndef PLUGRT_BACKENDS_XNNPACK_TEST_XNNPACK_TEST_SUPPORT_H_
#define PLUGRT_BACKENDS_XNNPACK_TEST_XNNPACK_TEST_SUPPORT_H_

#include "backend_suite.h"
#include "backend_test_support.h"
#include "op_catalogue.h"
#include "op_checks.h"
#include "test_graph.h"

namespace plugrt::xnnpack_test {

// The shared test support, unqualified in this backend's tests.
using namespace backend_test;  // NOLINT(build/namespaces)

/// A registry with the built-in backends and the XNNPACK plugin file.
class XnnpackEnvironment : public backend_test::PluginEnvironment {
 public:
  XnnpackEnvironment() : PluginEnvironment(PLUGRT_XNNPACK_PLUGIN_FILE) {}
};

}  // namespace plugrt::xnnpack_test

#endif  // PLUGRT_BACKENDS_XNNPACK_TEST_XNNPACK_TEST_SUPPORT_H_
