// SPDX-License-Identifier: Apache-2.0
// The catalogue of op cases the backends' op tests pick from by name: small graphs of
// the ONNX forms a fast backend takes whole (convolutions, dense layers, elementwise
// ops, activations, pooling, softmax, normalization, layout changes, small blocks).
// A backend's op test runs the catalogue, less the cases it names as not its own, through
// expect_taken_and_matching_portable, and adds in its own file only its own cases.
#ifndef PLUGRT_TEST_BACKEND_SUPPORT_OP_CATALOGUE_H_
#define PLUGRT_TEST_BACKEND_SUPPORT_OP_CATALOGUE_H_

#include <initializer_list>
#include <string_view>
#include <vector>

#include "op_checks.h"

namespace plugrt::backend_test {

/// Every case of the catalogue.
const std::vector<OpCase>& op_catalogue();

/// Every case of the catalogue but those named. A name the catalogue lacks is a mistake
/// in the test program: it throws std::invalid_argument, naming it.
std::vector<OpCase> catalogue_except(std::initializer_list<std::string_view> names);

/// The cases of `first` and then `second`.
std::vector<OpCase> joined(std::vector<OpCase> first, const std::vector<OpCase>& second);

}  // namespace plugrt::backend_test

#endif  // PLUGRT_TEST_BACKEND_SUPPORT_OP_CATALOGUE_H_
