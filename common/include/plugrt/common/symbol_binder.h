// SPDX-License-Identifier: Apache-2.0
/// \file symbol_binder.h
/// The symbols' values of one call: the values the host passes (ABI 1.6), or else read
/// from its inputs' shapes (an input dimension whose expression is a symbol alone is
/// that symbol's size). Checks each value against its symbol's range, and every input
/// dimension against what the symbols make it, with a message naming the input, the
/// dimension and the bound. Binding allocates nothing (only a failure's message may).
/// Header-only; plugrt::common (plugrt::sdk::SymbolBinder through plugrt/sdk/symbol_binder.h).
#ifndef PLUGRT_COMMON_SYMBOL_BINDER_H_
#define PLUGRT_COMMON_SYMBOL_BINDER_H_

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <dlpack/dlpack.h>

#include "plugrt/common/dim_expr.h"

namespace plugrt::common {

class SymbolBinder {
 public:
  void add_symbol(std::string name, DimRange range) {
    names_.push_back(std::move(name));
    ranges_.push_back(range);
    values_.push_back(range.max);
    from_host_.push_back(false);
  }
  /// The next input: its name, its shape (each varying dimension at its bound) and, per
  /// dimension, its expression's words (empty for a static one; `dims` may be empty).
  void add_input(std::string name, std::vector<int64_t> bounds, std::vector<std::vector<int64_t>> dims) {
    Input input{std::move(name), std::move(bounds), std::move(dims), {}};
    input.dims.resize(input.bounds.size());
    for (const std::vector<int64_t>& words : input.dims) {
      input.symbol.push_back(words.empty() ? -1 : sole_symbol(words.data(), words.size()));
    }
    inputs_.push_back(std::move(input));
  }
  /// Symbol `s` is used but is the size of no input dimension (a partition starting after
  /// a strided convolution sees only expressions of the length): only the values the
  /// host passes with a call (ABI 1.6) can give it.
  void needs_host_value(size_t s) { from_host_.at(s) = true; }

  size_t num_symbols() const { return names_.size(); }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<DimRange>& ranges() const { return ranges_; }
  /// The last bind()'s values, one per symbol (each symbol's maximum before any).
  const std::vector<int64_t>& values() const { return values_; }

  /// Reads the symbols' values from `inputs` (one per input added, in order); false with
  /// the reason in `error` when a shape does not fit.
  bool bind(const DLTensor* const* inputs, size_t num_inputs, char* error, size_t error_capacity) {
    return bind(inputs, num_inputs, nullptr, 0, error, error_capacity);
  }

  /// Takes the symbols' values from `given` when it holds one per symbol (the host's
  /// plugrt_execute_args.symbol_values), else reads them from the inputs' shapes; then
  /// checks every input dimension against them. False with the reason in `error` when a
  /// value or a shape does not fit.
  bool bind(const DLTensor* const* inputs, size_t num_inputs, const int64_t* given, size_t num_given, char* error,
            size_t error_capacity) {
    if (num_inputs != inputs_.size()) {
      std::snprintf(error, error_capacity, "expected %zu inputs, got %zu", inputs_.size(), num_inputs);
      return false;
    }
    for (size_t k = 0; k < num_inputs; ++k) {
      const Input& input = inputs_[k];
      const DLTensor* tensor = inputs[k];
      if (tensor == nullptr || tensor->ndim != static_cast<int32_t>(input.bounds.size()) ||
          (tensor->ndim > 0 && tensor->shape == nullptr)) {
        std::snprintf(error, error_capacity, "input %zu ('%s') has rank %d; it takes rank %zu", k, input.name.c_str(),
                      tensor == nullptr ? -1 : tensor->ndim, input.bounds.size());
        return false;
      }
    }
    if (given != nullptr && num_given == values_.size()) {
      for (size_t s = 0; s < num_given; ++s) {
        if (!ranges_[s].contains(given[s])) {
          std::snprintf(error, error_capacity, "symbol '%s' is %lld, outside [%lld, %lld]", names_[s].c_str(),
                        static_cast<long long>(given[s]), static_cast<long long>(ranges_[s].min),
                        static_cast<long long>(ranges_[s].max));
          return false;
        }
        values_[s] = given[s];
      }
    } else if (!read_from_shapes(inputs, error, error_capacity)) {
      return false;
    }
    for (size_t k = 0; k < num_inputs; ++k) {  // every dimension as the symbols make it
      const Input& input = inputs_[k];
      for (size_t axis = 0; axis < input.bounds.size(); ++axis) {
        const std::vector<int64_t>& words = input.dims[axis];
        int64_t expected = input.bounds[axis];
        if (!words.empty()) (void)evaluate_dim_expr(words.data(), words.size(), values_.data(), &expected);
        if (inputs[k]->shape[axis] != expected) {
          const std::string formula = words.empty() ? "" : " = " + DimExpr::from_words(words).to_string(names_);
          std::snprintf(error, error_capacity, "input %zu ('%s') dimension %zu is %lld; it takes %lld%s", k,
                        input.name.c_str(), axis, static_cast<long long>(inputs[k]->shape[axis]),
                        static_cast<long long>(expected), formula.c_str());
          return false;
        }
      }
    }
    return true;
  }

 private:
  /// Each symbol from the input dimension that is its size, checked against its range.
  bool read_from_shapes(const DLTensor* const* inputs, char* error, size_t error_capacity) {
    std::fill(values_.begin(), values_.end(), -1);
    for (size_t k = 0; k < inputs_.size(); ++k) {
      const Input& input = inputs_[k];
      for (size_t axis = 0; axis < input.bounds.size(); ++axis) {
        if (input.symbol[axis] < 0) continue;
        const auto s = static_cast<size_t>(input.symbol[axis]);
        const int64_t given = inputs[k]->shape[axis];
        const DimRange& range = ranges_[s];
        if (!range.contains(given)) {
          const bool above = given > range.max;
          std::snprintf(error, error_capacity, "input %zu ('%s') dimension %zu is %lld, %s %lld, the %s '%s' may be", k,
                        input.name.c_str(), axis, static_cast<long long>(given), above ? "above" : "below",
                        static_cast<long long>(above ? range.max : range.min), above ? "largest" : "smallest",
                        names_[s].c_str());
          return false;
        }
        if (values_[s] >= 0 && values_[s] != given) {
          std::snprintf(error, error_capacity, "input %zu ('%s') dimension %zu is %lld, but '%s' is %lld elsewhere", k,
                        input.name.c_str(), axis, static_cast<long long>(given), names_[s].c_str(),
                        static_cast<long long>(values_[s]));
          return false;
        }
        values_[s] = given;
      }
    }
    for (size_t s = 0; s < values_.size(); ++s) {
      if (from_host_[s]) {
        std::snprintf(error, error_capacity,
                      "symbol '%s' is the size of no input dimension, and the call brought no symbol values (a host "
                      "before plugin ABI 1.6)",
                      names_[s].c_str());
        return false;
      }
      // A symbol no input gives and nothing uses takes its upper bound.
      if (values_[s] < 0) values_[s] = ranges_[s].max;
    }
    return true;
  }

 private:
  struct Input {
    std::string name;
    std::vector<int64_t> bounds;
    std::vector<std::vector<int64_t>> dims;
    std::vector<int64_t> symbol;  // per dimension: the symbol it is the size of, or -1
  };
  std::vector<std::string> names_;
  std::vector<DimRange> ranges_;
  std::vector<int64_t> values_;
  std::vector<bool> from_host_;  // per symbol: needs_host_value
  std::vector<Input> inputs_;
};

}  // namespace plugrt::common

#endif  // PLUGRT_COMMON_SYMBOL_BINDER_H_
