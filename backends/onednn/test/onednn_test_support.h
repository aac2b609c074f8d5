// SPDX-License-Identifier: Apache-2.0
// Shared by the oneDNN backend's tests: the backends' common test support
// (test/backend_support/) with the real libplugrt_onednn.so.
#ifndef PLUGRT_BACKENDS_ONEDNN_TEST_ONEDNN_TEST_SUPPORT_H_
#define PLUGRT_BACKENDS_ONEDNN_TEST_ONEDNN_TEST_SUPPORT_H_

#include "backend_suite.h"
#include "backend_test_support.h"
#include "op_catalogue.h"
#include "op_checks.h"
#include "test_graph.h"

namespace plugrt::onednn_test {

// The shared test support, unqualified in this backend's tests.
using namespace backend_test;  // NOLINT(build/namespaces)

/// A registry with the built-in backends and the oneDNN plugin file.
class OnednnEnvironment : public backend_test::PluginEnvironment {
 public:
  OnednnEnvironment() : PluginEnvironment(PLUGRT_ONEDNN_PLUGIN_FILE) {}
};

}  // namespace plugrt::onednn_test

#endif  // PLUGRT_BACKENDS_ONEDNN_TEST_ONEDNN_TEST_SUPPORT_H_
