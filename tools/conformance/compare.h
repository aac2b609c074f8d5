// SPDX-License-Identifier: Apache-2.0
// Comparing a method's output with the expected tensor of an ONNX test.
//
// Tolerances, by dtype:
//  - float32: |actual - expected| <= atol + rtol * |expected|, rtol = 1e-3, atol = 1e-5
//    (numpy.testing.assert_allclose's rule, as ONNX's backend test runner applies it).
//    NaN equals NaN; an infinity equals only the same infinity.
//  - float16: widened to float32, then the float32 rule (rtol 1e-3 is about one float16
//    unit in the last place).
//  - int8, uint8, int32, int64: exact.
//  - bool: exact (any non-zero byte is true).
#ifndef PLUGRT_TOOLS_CONFORMANCE_COMPARE_H_
#define PLUGRT_TOOLS_CONFORMANCE_COMPARE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plugrt/dtype.h"

namespace plugrt::conformance {

struct FloatTolerance {
  double rtol;
  double atol;
};
inline constexpr FloatTolerance kFloat32Tolerance{1e-3, 1e-5};
inline constexpr FloatTolerance kFloat16Tolerance{1e-3, 1e-5};
inline constexpr FloatTolerance kDoubleTolerance{1e-3, 1e-5};
/// One unit in the last place of bfloat16's 8 significant bits: the test data rounds
/// float32 to bfloat16 by truncation, plugrt to nearest.
inline constexpr FloatTolerance kBFloat16Tolerance{1.0 / 128, 1e-5};

/// Whether `actual` is close enough to `expected` under `tolerance`.
bool float_close(double actual, double expected, FloatTolerance tolerance);

/// Compares `count` elements of `dtype` laid out densely (row-major, `shape`). Empty when
/// they match; otherwise "3 of 60 elements differ; first at [0, 1, 2] (index 6): got
/// 0.5, expected 0.25 (float32: atol 1e-05 + rtol 0.001 * |expected|)".
std::string compare_elements(DType dtype, const std::vector<int64_t>& shape, const void* actual, const void* expected,
                             size_t count);

}  // namespace plugrt::conformance

#endif  // PLUGRT_TOOLS_CONFORMANCE_COMPARE_H_
