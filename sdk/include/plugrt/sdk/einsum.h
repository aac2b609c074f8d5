// SPDX-License-Identifier: Apache-2.0
/// \file einsum.h
/// Einsum's equation as ONNX (and NumPy) write it: "bij,bjk->bik". The compiler and the
/// backends parse it alike, so the parser is the shared vocabulary
/// (plugrt/common/einsum.h); this header gives it the SDK's names. Header-only; plugrt::sdk.
#ifndef PLUGRT_SDK_EINSUM_H_
#define PLUGRT_SDK_EINSUM_H_

#include "plugrt/common/einsum.h"

namespace plugrt::sdk {

using common::EinsumEquation;
using common::EinsumTerm;
using common::parse_einsum;
using common::parse_einsum_term;

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_EINSUM_H_
