// SPDX-License-Identifier: Apache-2.0
// The tests every backend plugin in backends/ passes the same way, parameterised by
// the backend: availability and self-description, blob compatibility and the fallback,
// damaged blobs, execute's argument checks, thread counts, parked workers, concurrent
// handles, and the plugin file's exports. Each backend's test instantiates the suite
// with its BackendUnderTest and keeps in its own files only what is its own (its models,
// its fuzzers' findings, its ops).
#ifndef PLUGRT_TEST_BACKEND_SUPPORT_BACKEND_SUITE_H_
#define PLUGRT_TEST_BACKEND_SUPPORT_BACKEND_SUITE_H_

#include <ostream>
#include <string>

#include <gtest/gtest.h>

namespace plugrt::backend_test {

struct BackendUnderTest {
  std::string name;             ///< "xnnpack"
  std::string plugin_file;      ///< the built libplugrt_<name>.so
  std::string blob_magic;       ///< the 8 characters its blobs start with ("PRTXNNPK")
  std::string description;      ///< a part of what its description says ("XNNPACK")
  std::string runtime_library;  ///< the start of the library it links ("libXNNPACK")
  std::string threaded_model;   ///< a bundled model it runs whole or mostly, for the thread tests
};

inline std::ostream& operator<<(std::ostream& os, const BackendUnderTest& backend) { return os << backend.name; }

class BackendSuite : public ::testing::TestWithParam<BackendUnderTest> {};
/// The quantized checks (quantized_suite.cc), for the backends with int8 kernels.
class QuantizedSuite : public ::testing::TestWithParam<BackendUnderTest> {};

/// The instance name of a BackendSuite parameter: the backend's name.
std::string backend_suite_name(const ::testing::TestParamInfo<BackendUnderTest>& info);

}  // namespace plugrt::backend_test

#endif  // PLUGRT_TEST_BACKEND_SUPPORT_BACKEND_SUITE_H_
