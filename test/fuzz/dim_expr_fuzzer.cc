// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: symbolic dimension expressions (plugrt/common/dim_expr.h), the shape
// code that reads what a graph or program file stores and that the host runs on each
// call. Beyond never crashing, it checks what the header promises:
// - an expression check_dim_expr() accepts prints, and when dim_expr_range() bounds it
//   over the symbols' ranges, evaluate_dim_expr() succeeds for every assignment tried
//   within them (each symbol's ends and middle), with a value inside that range;
// - DimExpr's simplified combination of two accepted expressions evaluates to the op
//   applied to their values wherever it evaluates, and it evaluates wherever every value
//   the expressions as written pass through is under 2^31.
// Input: byte 0 picks the encoding (even: raw 64-bit words, as a file may hold them;
// odd: two bytes a word, op and a small operand, which reaches valid programs sooner),
// byte 1 the symbol count (0 to 3) and the op combining the two halves, then two bytes
// per symbol (its minimum, its width), then the words; the first half of them is one
// expression, the rest the other.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "plugrt/common/dim_expr.h"

namespace {

using plugrt::common::DimExpr;
using plugrt::common::DimOp;
using plugrt::common::DimRange;

constexpr size_t kMaxSymbols = 3;

bool accepted(const std::vector<int64_t>& words, size_t num_symbols) {
  return plugrt::common::check_dim_expr(words.data(), words.size(), num_symbols).empty();
}

bool evaluate(const std::vector<int64_t>& words, const int64_t* symbols, int64_t* value) {
  return plugrt::common::evaluate_dim_expr(words.data(), words.size(), symbols, value);
}

/// Every assignment of each symbol's minimum, middle and maximum (3^n of them).
template <typename Visit>
void for_each_assignment(const DimRange* ranges, size_t num_symbols, Visit visit) {
  size_t total = 1;
  for (size_t s = 0; s < num_symbols; ++s) total *= 3;
  for (size_t n = 0; n < total; ++n) {
    int64_t values[kMaxSymbols] = {};
    size_t code = n;
    for (size_t s = 0; s < num_symbols; ++s, code /= 3) {
      const DimRange& r = ranges[s];
      values[s] = code % 3 == 0 ? r.min : code % 3 == 1 ? r.max : r.min + (r.max - r.min) / 2;
    }
    visit(values);
  }
}

void check_bounds(const std::vector<int64_t>& words, const DimRange* ranges, size_t num_symbols) {
  DimRange range;
  if (!plugrt::common::dim_expr_range(words.data(), words.size(), ranges, &range)) return;
  if (range.min > range.max) std::abort();
  for_each_assignment(ranges, num_symbols, [&](const int64_t* values) {
    int64_t value = 0;
    if (!evaluate(words, values, &value)) std::abort();  // bounded, yet it failed
    if (!range.contains(value)) std::abort();
  });
}

constexpr int64_t kSmall = int64_t{1} << 31;

/// The largest magnitude of any value an expression passes through as written (its
/// leaves and every intermediate), or kSmall when it does not evaluate.
int64_t largest_value(const std::vector<int64_t>& words, const int64_t* symbols) {
  int64_t largest = 0;
  int64_t stack[plugrt::common::kMaxDimExprDepth];
  size_t depth = 0;
  for (int64_t word : words) {
    const DimOp op = plugrt::common::dim_word_op(word);
    if (op == DimOp::kConstant || op == DimOp::kSymbol) {
      const int64_t operand = plugrt::common::dim_word_operand(word);
      stack[depth++] = op == DimOp::kConstant ? operand : symbols[operand];
    } else {
      --depth;
      if (!plugrt::common::dim_detail::apply(op, stack[depth - 1], stack[depth], &stack[depth - 1])) return kSmall;
    }
    const int64_t top = stack[depth - 1];
    if (top == INT64_MIN) return kSmall;
    largest = std::max(largest, top < 0 ? -top : top);
  }
  return largest;
}

void check_combination(const std::vector<int64_t>& a, const std::vector<int64_t>& b, DimOp op, const DimRange* ranges,
                       size_t num_symbols) {
  const DimExpr combined = DimExpr::combine(op, DimExpr::from_words(a), DimExpr::from_words(b));
  if (!accepted(combined.words(), num_symbols)) return;  // too long or deep: refused where stored
  for_each_assignment(ranges, num_symbols, [&](const int64_t* values) {
    int64_t x = 0;
    int64_t y = 0;
    int64_t expected = 0;
    if (!evaluate(a, values, &x) || !evaluate(b, values, &y)) return;
    const bool defined = plugrt::common::dim_detail::apply(op, x, y, &expected);
    int64_t got = 0;
    const bool evaluated = evaluate(combined.words(), values, &got);
    if (evaluated && defined && got != expected) std::abort();
    // The simplified form reorders sums and distributes products, so it may overflow
    // where the expression as written does not, but only near 64-bit limits: with every
    // value the written form passes through under 2^31, it must evaluate.
    if (defined && !evaluated && largest_value(a, values) < kSmall && largest_value(b, values) < kSmall &&
        (expected < 0 ? -expected : expected) < kSmall) {
      std::abort();
    }
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const bool raw = (data[0] & 1) == 0;
  const size_t num_symbols = data[1] % (kMaxSymbols + 1);
  const auto op = static_cast<DimOp>(2 + (data[1] >> 2) % 7);  // a binary op
  size_t at = 2;
  DimRange ranges[kMaxSymbols];
  for (size_t s = 0; s < num_symbols; ++s) {
    if (at + 2 > size) return 0;
    const int64_t min = static_cast<int8_t>(data[at]);
    ranges[s] = DimRange{min, min + data[at + 1]};
    at += 2;
  }
  std::vector<int64_t> words;
  const size_t word_size = raw ? sizeof(int64_t) : 2;
  for (; at + word_size <= size && words.size() <= 2 * plugrt::common::kMaxDimExprWords; at += word_size) {
    if (raw) {
      int64_t word = 0;
      std::memcpy(&word, data + at, sizeof(word));
      words.push_back(word);
    } else {
      const auto kind = static_cast<DimOp>(data[at] % 9);
      const bool leaf = kind == DimOp::kConstant || kind == DimOp::kSymbol;
      words.push_back(plugrt::common::dim_word(kind, leaf ? static_cast<int8_t>(data[at + 1]) : 0));
    }
  }
  const std::vector<int64_t> first(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(words.size() / 2));
  const std::vector<int64_t> second(words.begin() + static_cast<std::ptrdiff_t>(words.size() / 2), words.end());
  std::vector<std::string> names;
  for (size_t s = 0; s + 1 < num_symbols; ++s) names.push_back("s" + std::to_string(s));  // the last one unnamed
  for (const std::vector<int64_t>* e : {&std::as_const(words), &first, &second}) {
    if (!accepted(*e, num_symbols)) continue;
    if (DimExpr::from_words(*e).to_string(names).empty()) std::abort();
    check_bounds(*e, ranges, num_symbols);
  }
  if (accepted(first, num_symbols) && accepted(second, num_symbols)) {
    check_combination(first, second, op, ranges, num_symbols);
  }
  return 0;
}
