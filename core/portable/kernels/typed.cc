// SPDX-License-Identifier: Apache-2.0
#include "typed.h"

namespace plugrt::portable {

bool dtype_in(DType dtype, unsigned set) {
  switch (dtype) {
    case DType::kFloat32: return (set & kFloat32Only) != 0;
    case DType::kDouble: return (set & kDoubleType) != 0;
    case DType::kFloat16:
    case DType::kBFloat16: return (set & kHalfTypes) != 0;
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64: return (set & kSignedInts) != 0;
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64: return (set & kUnsignedInts) != 0;
    case DType::kBool: return (set & kBoolType) != 0;
    case DType::kUndefined: break;
  }
  return false;
}

std::string describe_dtypes(unsigned set) {
  std::string text;
  auto add = [&text, set](unsigned bit, const char* names) {
    if ((set & bit) == 0) return;
    text += (text.empty() ? "" : ", ") + std::string(names);
  };
  add(kFloat32Only, "float32");
  add(kDoubleType, "double");
  add(kHalfTypes, "float16, bfloat16");
  add(kSignedInts, "int8 to int64");
  add(kUnsignedInts, "uint8 to uint64");
  add(kBoolType, "bool");
  return text;
}

}  // namespace plugrt::portable
