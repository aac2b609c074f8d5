// SPDX-License-Identifier: Apache-2.0
// Node tests whose expected outputs were computed with something their model does not
// say, found by reading the test data against ONNX's specification. They are declared
// unsupported with the reason, since no backend that follows the model can pass them.
#ifndef PLUGRT_TOOLS_CONFORMANCE_TEST_DATA_ERRATA_H_
#define PLUGRT_TOOLS_CONFORMANCE_TEST_DATA_ERRATA_H_

#include <string>

namespace plugrt::conformance {

/// How the test data of `test_name` contradicts its model; empty for every other test.
std::string test_data_erratum(const std::string& test_name);

}  // namespace plugrt::conformance

#endif  // PLUGRT_TOOLS_CONFORMANCE_TEST_DATA_ERRATA_H_
