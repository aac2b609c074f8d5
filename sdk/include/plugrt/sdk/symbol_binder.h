// SPDX-License-Identifier: Apache-2.0
/// \file symbol_binder.h
/// The symbols' values of one call, read from the values the host passes or from the
/// inputs' shapes and checked against their ranges: the host's executor and a backend
/// bind them alike, so the code is the vocabulary both share
/// (plugrt/common/symbol_binder.h); this header names it sdk::SymbolBinder.
/// Header-only; plugrt::sdk.
#ifndef PLUGRT_SDK_SYMBOL_BINDER_H_
#define PLUGRT_SDK_SYMBOL_BINDER_H_

#include "plugrt/common/symbol_binder.h"
#include "plugrt/sdk/dim_expr.h"

namespace plugrt::sdk {

using common::SymbolBinder;

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_SYMBOL_BINDER_H_
