// Shared by the XNNPACK backend's tests: the backends' common test support
// (test/backend_support/) with the real libplugrt_xnnpack.so.
#ifndef PLUGRT_BACKENDS_XNNPACK_TEST_XNNPACK_TEST_SUPPORT_H_
#define PLUGRT_BACKENDS_XNNPACK_TEST_XNNPACK_TEST_SUPPORT_H_

#include "backend_test_support.h"

namespace plugrt::xnnpack_test {

using backend_test::relative_difference;
using backend_test::run_with_seed;

/// A registry with the built-in backends and the XNNPACK plugin file.
class XnnpackEnvironment : public backend_test::PluginEnvironment {
 public:
  XnnpackEnvironment() : PluginEnvironment(PLUGRT_XNNPACK_PLUGIN_FILE) {}
};

}  // namespace plugrt::xnnpack_test

#endif  // PLUGRT_BACKENDS_XNNPACK_TEST_XNNPACK_TEST_SUPPORT_H_
