// SPDX-License-Identifier: Apache-2.0
/// \file dim_expr.h
/// Symbolic dimensions: a bounded dynamic dimension is an integer expression over a
/// graph's symbols, stored as a short postfix program of 64-bit words. The host reads
/// the same words, so the code is the vocabulary both share (plugrt/common/dim_expr.h,
/// which says how the words are built and read); this header gives it the SDK's names:
/// sdk::DimExpr, sdk::DimRange, sdk::check_dim_expr(), sdk::evaluate_dim_expr(), ...
/// Header-only; plugrt::sdk.
#ifndef PLUGRT_SDK_DIM_EXPR_H_
#define PLUGRT_SDK_DIM_EXPR_H_

#include "plugrt/common/dim_expr.h"

namespace plugrt::sdk {

using common::DimOp;
using common::kMaxDimConstant;
using common::kMaxDimExprDepth;
using common::kMaxDimExprWords;

using common::dim_word;
using common::dim_word_op;
using common::dim_word_operand;

using common::DimRange;

using common::check_dim_expr;
using common::check_dim_within;
using common::dim_expr_range;
using common::evaluate_dim_expr;
using common::sole_symbol;

using common::DimExpr;

using common::dim_upper_bound;
using common::dim_upper_bounds;

using common::ceil_div;
using common::floor_div;
using common::max;
using common::min;
using common::operator+;
using common::operator-;
using common::operator*;

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_DIM_EXPR_H_
