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
#include "test_graph.h"

namespace plugrt::backend_test {

/// Every case of the catalogue.
const std::vector<OpCase>& op_catalogue();

/// Every case of the catalogue but those named. A name the catalogue lacks is a mistake
/// in the test program: it throws std::invalid_argument, naming it.
std::vector<OpCase> catalogue_except(std::initializer_list<std::string_view> names);

/// A graph of one ConvTranspose of a fresh input with constant weights (and a constant
/// bias when `bias`), `group` groups.
std::vector<uint8_t> conv_transpose(Ints x_shape, Ints w_shape, Ints y_shape, std::vector<Attribute> attrs,
                                    bool bias = false, int64_t group = 1);

/// The cases of `first` and then `second`.
std::vector<OpCase> joined(std::vector<OpCase> first, const std::vector<OpCase>& second);

}  // namespace plugrt::backend_test

#endif  // PLUGRT_TEST_BACKEND_SUPPORT_OP_CATALOGUE_H_
