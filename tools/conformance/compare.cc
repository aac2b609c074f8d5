// SPDX-License-Identifier: Apache-2.0
#include "compare.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "plugrt/half_float.h"

namespace plugrt::conformance {

namespace {

template <typename T>
T load(const void* data, size_t index) {
  T value;
  std::memcpy(&value, static_cast<const uint8_t*>(data) + index * sizeof(T), sizeof(T));
  return value;
}

std::string format_float(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

std::string format_tolerance(const char* dtype, FloatTolerance tolerance) {
  char text[96];
  std::snprintf(text, sizeof(text), "%s: atol %g + rtol %g * |expected|", dtype, tolerance.atol, tolerance.rtol);
  return text;
}

// The multi-index of flat `index` in a row-major `shape`, "[0, 1, 2]".
std::string format_index(const std::vector<int64_t>& shape, size_t index) {
  std::vector<int64_t> coordinates(shape.size(), 0);
  uint64_t rest = index;
  for (size_t d = shape.size(); d-- > 0;) {
    const uint64_t extent = shape[d] > 0 ? static_cast<uint64_t>(shape[d]) : 1;
    coordinates[d] = static_cast<int64_t>(rest % extent);
    rest /= extent;
  }
  std::string text = "[";
  for (size_t d = 0; d < coordinates.size(); ++d) {
    if (d > 0) text += ", ";
    text += std::to_string(coordinates[d]);
  }
  return text + "]";
}

struct Counter {
  size_t mismatches = 0;
  size_t first = 0;
  std::string got, expected;
  void add(size_t index, const std::string& got_text, const std::string& expected_text) {
    if (mismatches++ == 0) {
      first = index;
      got = got_text;
      expected = expected_text;
    }
  }
  std::string report(const std::vector<int64_t>& shape, size_t count, const std::string& rule) const {
    if (mismatches == 0) return std::string();
    return std::to_string(mismatches) + " of " + std::to_string(count) + " elements differ; first at " +
           format_index(shape, first) + " (index " + std::to_string(first) + "): got " + got + ", expected " +
           expected + " (" + rule + ")";
  }
};

template <typename T>
std::string compare_exact(const std::vector<int64_t>& shape, const void* actual, const void* expected, size_t count,
                          const char* dtype) {
  Counter counter;
  for (size_t i = 0; i < count; ++i) {
    const T a = load<T>(actual, i);
    const T e = load<T>(expected, i);
    if (a != e) counter.add(i, std::to_string(a), std::to_string(e));
  }
  return counter.report(shape, count, std::string(dtype) + ": exact");
}

}  // namespace

bool float_close(double actual, double expected, FloatTolerance tolerance) {
  if (std::isnan(actual) || std::isnan(expected)) return std::isnan(actual) && std::isnan(expected);
  if (std::isinf(actual) || std::isinf(expected)) return actual == expected;
  return std::fabs(actual - expected) <= tolerance.atol + tolerance.rtol * std::fabs(expected);
}

std::string compare_elements(DType dtype, const std::vector<int64_t>& shape, const void* actual, const void* expected,
                             size_t count) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kDouble: {
      FloatTolerance tolerance = kFloat32Tolerance;
      if (dtype == DType::kFloat16) tolerance = kFloat16Tolerance;
      if (dtype == DType::kBFloat16) tolerance = kBFloat16Tolerance;
      if (dtype == DType::kDouble) tolerance = kDoubleTolerance;
      auto element = [dtype](const void* data, size_t i) -> double {
        switch (dtype) {
          case DType::kFloat16: return float16_to_float(load<uint16_t>(data, i));
          case DType::kBFloat16: {
            const uint32_t bits = static_cast<uint32_t>(load<uint16_t>(data, i)) << 16;
            float value;
            std::memcpy(&value, &bits, sizeof(value));
            return value;
          }
          case DType::kDouble: return load<double>(data, i);
          default: return load<float>(data, i);
        }
      };
      Counter counter;
      for (size_t i = 0; i < count; ++i) {
        const double a = element(actual, i);
        const double e = element(expected, i);
        if (!float_close(a, e, tolerance)) counter.add(i, format_float(a), format_float(e));
      }
      return counter.report(shape, count, format_tolerance(std::string(to_string(dtype)).c_str(), tolerance));
    }
    case DType::kInt64: return compare_exact<int64_t>(shape, actual, expected, count, "int64");
    case DType::kInt32: return compare_exact<int32_t>(shape, actual, expected, count, "int32");
    case DType::kInt8: return compare_exact<int8_t>(shape, actual, expected, count, "int8");
    case DType::kUInt8: return compare_exact<uint8_t>(shape, actual, expected, count, "uint8");
    case DType::kInt16: return compare_exact<int16_t>(shape, actual, expected, count, "int16");
    case DType::kUInt16: return compare_exact<uint16_t>(shape, actual, expected, count, "uint16");
    case DType::kUInt32: return compare_exact<uint32_t>(shape, actual, expected, count, "uint32");
    case DType::kUInt64: return compare_exact<uint64_t>(shape, actual, expected, count, "uint64");
    case DType::kBool: {
      Counter counter;
      for (size_t i = 0; i < count; ++i) {
        const bool a = load<uint8_t>(actual, i) != 0;
        const bool e = load<uint8_t>(expected, i) != 0;
        if (a != e) counter.add(i, a ? "true" : "false", e ? "true" : "false");
      }
      return counter.report(shape, count, "bool: exact");
    }
    case DType::kUndefined: break;
  }
  return "cannot compare elements of dtype " + std::string(to_string(dtype));
}

}  // namespace plugrt::conformance
