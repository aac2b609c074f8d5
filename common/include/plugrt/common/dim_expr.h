// SPDX-License-Identifier: Apache-2.0
/// \file dim_expr.h
/// Symbolic dimensions. A bounded dynamic dimension is an integer expression over a
/// graph's symbols (ONNX's `dim_param`s, each bounded MIN..MAX): `seq`, `seq + 1`,
/// `(seq - 3) / 2 + 1`. An expression is a short postfix program of 64-bit words, the
/// form a graph or program file stores: the host evaluates it on each run from the
/// actual input dimensions, and a backend takes its range to size what it prepares.
///
/// Checking, evaluating and bounding allocate nothing and never overflow: they fail
/// instead. When range() succeeds for the symbols' bounds, evaluate() succeeds for every
/// assignment within them, with a value inside the range. Header-only; plugrt::common
/// (the SDK names the same as plugrt::sdk::DimExpr, ... through plugrt/sdk/dim_expr.h).
#ifndef PLUGRT_COMMON_DIM_EXPR_H_
#define PLUGRT_COMMON_DIM_EXPR_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace plugrt::common {

/// What one word does. A word holds its op in the low 8 bits and a signed 56-bit operand
/// above them: a constant's value, or a symbol's index. The other ops pop two values
/// and push one; division is by a positive divisor only.
enum class DimOp : uint8_t {
  kConstant = 0,  ///< pushes the operand
  kSymbol = 1,    ///< pushes symbol number `operand`
  kAdd = 2,
  kSub = 3,  ///< a - b (b on top)
  kMul = 4,
  kFloorDiv = 5,  ///< a / b rounded down
  kCeilDiv = 6,   ///< a / b rounded up
  kMin = 7,
  kMax = 8,
};

/// Limits of a stored expression, far above what an exported model's shapes need.
inline constexpr size_t kMaxDimExprWords = 64;
inline constexpr size_t kMaxDimExprDepth = 16;
/// A constant's operand lies within +-2^55.
inline constexpr int64_t kMaxDimConstant = (int64_t{1} << 55) - 1;

inline int64_t dim_word(DimOp op, int64_t operand) {
  return static_cast<int64_t>((static_cast<uint64_t>(operand) << 8) | static_cast<uint8_t>(op));
}
inline DimOp dim_word_op(int64_t word) { return static_cast<DimOp>(static_cast<uint64_t>(word) & 0xffu); }
/// The operand, sign-extended from 56 bits.
inline int64_t dim_word_operand(int64_t word) {
  const uint64_t bits = static_cast<uint64_t>(word) >> 8;
  return (bits & (uint64_t{1} << 55)) != 0 ? static_cast<int64_t>(bits | (uint64_t{0xff} << 56))
                                           : static_cast<int64_t>(bits);
}

/// The values a symbol (or an expression) may take, both ends included.
struct DimRange {
  int64_t min = 0;
  int64_t max = 0;
  bool contains(int64_t value) const { return value >= min && value <= max; }
};

namespace dim_detail {

inline bool is_binary(DimOp op) { return op >= DimOp::kAdd && op <= DimOp::kMax; }

inline int64_t floor_div(int64_t a, int64_t b) {  // b > 0
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
inline int64_t ceil_div(int64_t a, int64_t b) {  // b > 0
  const int64_t q = a / b;
  return (a % b != 0 && a > 0) ? q + 1 : q;
}

/// a op b for one binary op; false on overflow or a non-positive divisor.
inline bool apply(DimOp op, int64_t a, int64_t b, int64_t* out) {
  switch (op) {
    case DimOp::kAdd: return !__builtin_add_overflow(a, b, out);
    case DimOp::kSub: return !__builtin_sub_overflow(a, b, out);
    case DimOp::kMul: return !__builtin_mul_overflow(a, b, out);
    case DimOp::kFloorDiv:
      if (b <= 0) return false;
      *out = floor_div(a, b);
      return true;
    case DimOp::kCeilDiv:
      if (b <= 0) return false;
      *out = ceil_div(a, b);
      return true;
    case DimOp::kMin: *out = std::min(a, b); return true;
    case DimOp::kMax: *out = std::max(a, b); return true;
    default: return false;
  }
}

}  // namespace dim_detail

/// Whether `words` is a well-formed expression over `num_symbols` symbols: "" or the
/// reason it is not (unknown op, operand out of range, stack misuse, over the limits).
inline std::string check_dim_expr(const int64_t* words, size_t count, size_t num_symbols) {
  if (count == 0) return "the expression is empty";
  if (count > kMaxDimExprWords) {
    return "the expression has " + std::to_string(count) + " words (at most " + std::to_string(kMaxDimExprWords) + ")";
  }
  size_t depth = 0;
  for (size_t i = 0; i < count; ++i) {
    const DimOp op = dim_word_op(words[i]);
    const int64_t operand = dim_word_operand(words[i]);
    const std::string where = "word " + std::to_string(i);
    if (op == DimOp::kConstant || op == DimOp::kSymbol) {
      if (op == DimOp::kSymbol && (operand < 0 || static_cast<uint64_t>(operand) >= num_symbols)) {
        return where + " names symbol " + std::to_string(operand) + " of " + std::to_string(num_symbols);
      }
      if (op == DimOp::kConstant && (operand > kMaxDimConstant || operand < -kMaxDimConstant)) {
        return where + " holds a constant out of range";
      }
      if (++depth > kMaxDimExprDepth) return "the expression nests deeper than " + std::to_string(kMaxDimExprDepth);
    } else if (dim_detail::is_binary(op)) {
      if (operand != 0) return where + " has an operand on a binary op";
      if (depth < 2) return where + " pops more values than were pushed";
      --depth;
    } else {
      return where + " has unknown op " + std::to_string(static_cast<unsigned>(op));
    }
  }
  if (depth != 1) return "the expression leaves " + std::to_string(depth) + " values, not one";
  return {};
}

/// The value of an expression that check_dim_expr() accepted, for these symbol values
/// (one per symbol); false on overflow or a division by a value that is not positive.
inline bool evaluate_dim_expr(const int64_t* words, size_t count, const int64_t* symbols, int64_t* value) {
  int64_t stack[kMaxDimExprDepth];
  size_t depth = 0;
  for (size_t i = 0; i < count; ++i) {
    const DimOp op = dim_word_op(words[i]);
    if (op == DimOp::kConstant || op == DimOp::kSymbol) {
      const int64_t operand = dim_word_operand(words[i]);
      stack[depth++] = op == DimOp::kConstant ? operand : symbols[operand];
      continue;
    }
    --depth;
    if (!dim_detail::apply(op, stack[depth - 1], stack[depth], &stack[depth - 1])) return false;
  }
  *value = stack[0];
  return true;
}

/// The range a checked expression takes when each symbol stays within its range (each
/// min <= max); false
/// when it cannot be bounded (an intermediate may overflow, or a divisor may not be
/// positive).
inline bool dim_expr_range(const int64_t* words, size_t count, const DimRange* symbols, DimRange* range) {
  DimRange stack[kMaxDimExprDepth];
  size_t depth = 0;
  for (size_t i = 0; i < count; ++i) {
    const DimOp op = dim_word_op(words[i]);
    if (op == DimOp::kConstant) {
      const int64_t operand = dim_word_operand(words[i]);
      stack[depth++] = DimRange{operand, operand};
      continue;
    }
    if (op == DimOp::kSymbol) {
      stack[depth++] = symbols[dim_word_operand(words[i])];
      continue;
    }
    --depth;
    const DimRange a = stack[depth - 1];
    const DimRange b = stack[depth];
    DimRange& out = stack[depth - 1];
    if (op == DimOp::kMin || op == DimOp::kMax) {
      out = op == DimOp::kMin ? DimRange{std::min(a.min, b.min), std::min(a.max, b.max)}
                              : DimRange{std::max(a.min, b.min), std::max(a.max, b.max)};
      continue;
    }
    if ((op == DimOp::kFloorDiv || op == DimOp::kCeilDiv) && b.min <= 0) return false;
    if (op == DimOp::kAdd || op == DimOp::kSub) {
      // Monotonic in each operand: the ends come from the ends.
      const bool add = op == DimOp::kAdd;
      if (!dim_detail::apply(op, a.min, add ? b.min : b.max, &out.min)) return false;
      if (!dim_detail::apply(op, a.max, add ? b.max : b.min, &out.max)) return false;
      continue;
    }
    // Products and quotients are monotonic in each operand for the other fixed, so the
    // extremes lie among the four corners.
    const int64_t corners[4][2] = {{a.min, b.min}, {a.min, b.max}, {a.max, b.min}, {a.max, b.max}};
    int64_t lo = 0;
    int64_t hi = 0;
    for (int c = 0; c < 4; ++c) {
      int64_t v = 0;
      if (!dim_detail::apply(op, corners[c][0], corners[c][1], &v)) return false;
      lo = c == 0 ? v : std::min(lo, v);
      hi = c == 0 ? v : std::max(hi, v);
    }
    out = DimRange{lo, hi};
  }
  *range = stack[0];
  return true;
}

/// The symbol an expression is alone (as `seq`, not `seq + 1`), or -1.
inline int64_t sole_symbol(const int64_t* words, size_t count) {
  return count == 1 && dim_word_op(words[0]) == DimOp::kSymbol ? dim_word_operand(words[0]) : -1;
}

/// Checks a stored dimension: well formed over the symbols, and within [0, bound] for
/// every value they may take. "" or the reason (phrased to follow the dimension's name).
inline std::string check_dim_within(const int64_t* words, size_t count, const std::vector<DimRange>& symbols,
                                    int64_t bound) {
  if (std::string why = check_dim_expr(words, count, symbols.size()); !why.empty()) return ": " + why;
  DimRange range;
  if (!dim_expr_range(words, count, symbols.data(), &range) || range.min < 0 || range.max > bound) {
    return " may leave [0, " + std::to_string(bound) + "] (its bound) for the symbols' ranges";
  }
  return {};
}

/// A dimension as the importer builds it: a constant, or an expression over symbols.
/// Combining folds constants and drops identities (x + 0, x * 1, x / 1), so a dimension
/// that does not depend on a symbol stays a constant.
class DimExpr {
 public:
  DimExpr() : DimExpr(constant(0)) {}
  /// |value| <= kMaxDimConstant (dimensions are far smaller).
  static DimExpr constant(int64_t value) { return DimExpr({dim_word(DimOp::kConstant, value)}); }
  static DimExpr symbol(size_t index) { return DimExpr({dim_word(DimOp::kSymbol, static_cast<int64_t>(index))}); }
  /// An expression read from a file; check_dim_expr() first.
  static DimExpr from_words(std::vector<int64_t> words) { return DimExpr(std::move(words)); }

  const std::vector<int64_t>& words() const { return words_; }
  bool is_constant() const { return words_.size() == 1 && dim_word_op(words_[0]) == DimOp::kConstant; }
  /// The value of a constant expression.
  int64_t constant_value() const { return dim_word_operand(words_[0]); }

  bool operator==(const DimExpr& other) const { return words_ == other.words_; }
  bool operator!=(const DimExpr& other) const { return words_ != other.words_; }

  /// a op b, simplified to a canonical form: constants folded, identities dropped (x + 0,
  /// x * 1, x / 1), a constant term kept last and merged (x + 2 - 1 -> x + 1), constant
  /// factors merged, and exact integer rules for division by a positive constant k:
  /// (x + m*k) / k -> x / k + m, (x * m*k) / k -> x * m, (x / j) / k -> x / (j*k), the same
  /// for ceil_div. So the length formulas of stacked convolutions and pools stay short:
  /// ((s - 1) / 2 + 1 - 1) / 2 + 1 -> (s - 1) / 4 + 1. A constant result out of a word's
  /// range stays unfolded, so check_dim_expr() refuses it where it is stored.
  static DimExpr combine(DimOp op, const DimExpr& a, const DimExpr& b) {
    if (a.is_constant() && b.is_constant()) {
      int64_t folded = 0;
      if (dim_detail::apply(op, a.constant_value(), b.constant_value(), &folded) && folded <= kMaxDimConstant &&
          folded >= -kMaxDimConstant) {
        return constant(folded);
      }
    }
    const auto is = [](const DimExpr& e, int64_t value) { return e.is_constant() && e.constant_value() == value; };
    switch (op) {
      case DimOp::kAdd:
        if (is(a, 0)) return b;
        if (is(b, 0)) return a;
        if (a.is_constant() && !b.is_constant()) return combine(op, b, a);  // the constant last
        return simplified_sum(a, b, false);
      case DimOp::kSub:
        if (is(b, 0)) return a;
        if (a.is_constant()) break;
        return simplified_sum(a, b, true);
      case DimOp::kMul:
        if (is(a, 1)) return b;
        if (is(b, 1)) return a;
        if (a.is_constant() && !b.is_constant()) return combine(op, b, a);
        if (b.is_constant() && !a.is_constant()) return scaled(a, b.constant_value());
        break;
      case DimOp::kFloorDiv:
      case DimOp::kCeilDiv:
        if (is(b, 1)) return a;
        if (b.is_constant() && b.constant_value() > 0) return divided(op, a, b.constant_value());
        break;
      case DimOp::kMin:
      case DimOp::kMax:
        if (a == b) return a;
        break;
      default: break;
    }
    return joined(op, a, b);
  }

  /// Infix text with the symbols' names ("(seq + 2) / 2", "min(seq, 8)", "/" rounding
  /// down, ceil_div(a, b) up); symbol k without a name is "$k". The expression must be
  /// checked.
  std::string to_string(const std::vector<std::string>& names) const {
    std::vector<std::pair<std::string, int>> stack;  // text, precedence (3: atom)
    for (int64_t word : words_) {
      const DimOp op = dim_word_op(word);
      const int64_t operand = dim_word_operand(word);
      if (op == DimOp::kConstant) {
        stack.emplace_back(std::to_string(operand), operand < 0 ? 0 : 3);
        continue;
      }
      if (op == DimOp::kSymbol) {
        const auto k = static_cast<size_t>(operand);
        stack.emplace_back(k < names.size() && !names[k].empty() ? names[k] : "$" + std::to_string(k), 3);
        continue;
      }
      auto b = std::move(stack.back());
      stack.pop_back();
      auto a = std::move(stack.back());
      stack.pop_back();
      if (op == DimOp::kMin || op == DimOp::kMax || op == DimOp::kCeilDiv) {
        const char* function = op == DimOp::kMin ? "min(" : op == DimOp::kMax ? "max(" : "ceil_div(";
        stack.emplace_back(function + a.first + ", " + b.first + ")", 3);
        continue;
      }
      const int precedence = (op == DimOp::kAdd || op == DimOp::kSub) ? 1 : 2;
      const char* symbol = op == DimOp::kAdd ? " + " : op == DimOp::kSub ? " - " : op == DimOp::kMul ? " * " : " / ";
      // Left-associative: the right operand needs parentheses at equal precedence too.
      const std::string left = a.second < precedence ? "(" + a.first + ")" : a.first;
      const std::string right = b.second <= precedence ? "(" + b.first + ")" : b.first;
      stack.emplace_back(left + symbol + right, precedence);
    }
    return stack.empty() ? std::string() : stack.back().first;
  }

 private:
  explicit DimExpr(std::vector<int64_t> words) : words_(std::move(words)) {}

  /// a op b as written, unsimplified.
  static DimExpr joined(DimOp op, const DimExpr& a, const DimExpr& b) {
    std::vector<int64_t> words = a.words_;
    words.insert(words.end(), b.words_.begin(), b.words_.end());
    words.push_back(dim_word(op, 0));
    return DimExpr(std::move(words));
  }
  /// Whether the last op is `op` with a constant right operand: e == *base op *k.
  static bool split_constant(const DimExpr& e, DimOp op, DimExpr* base, int64_t* k) {
    const std::vector<int64_t>& w = e.words_;
    if (w.size() < 3 || dim_word_op(w.back()) != op || dim_word_op(w[w.size() - 2]) != DimOp::kConstant) return false;
    *base = DimExpr(std::vector<int64_t>(w.begin(), w.end() - 2));
    *k = dim_word_operand(w[w.size() - 2]);
    return true;
  }
  /// e == *base + *offset, *offset a constant (0 when e has no constant term).
  static void split_offset(const DimExpr& e, DimExpr* base, int64_t* offset) {
    *offset = 0;
    if (e.is_constant()) {
      *base = constant(0);
      *offset = e.constant_value();
      return;
    }
    if (split_constant(e, DimOp::kAdd, base, offset)) return;
    if (split_constant(e, DimOp::kSub, base, offset)) {
      *offset = -*offset;
      return;
    }
    *base = e;
  }
  /// base + offset, offset within a word's range; false when it is not.
  static bool with_offset(const DimExpr& base, int64_t offset, DimExpr* out) {
    if (offset > kMaxDimConstant || offset < -kMaxDimConstant) return false;
    if (base.is_constant()) {
      *out = combine(DimOp::kAdd, base, constant(offset));
    } else {
      *out = offset == 0  ? base
             : offset > 0 ? joined(DimOp::kAdd, base, constant(offset))
                          : joined(DimOp::kSub, base, constant(-offset));
    }
    return true;
  }
  /// a + b or a - b with their constant terms merged into one, kept last.
  static DimExpr simplified_sum(const DimExpr& a, const DimExpr& b, bool subtract) {
    DimExpr a_base, b_base, out;
    int64_t a_offset = 0, b_offset = 0, offset = 0;
    split_offset(a, &a_base, &a_offset);
    split_offset(b, &b_base, &b_offset);
    const bool fits = subtract ? !__builtin_sub_overflow(a_offset, b_offset, &offset)
                               : !__builtin_add_overflow(a_offset, b_offset, &offset);
    if (!fits) return joined(subtract ? DimOp::kSub : DimOp::kAdd, a, b);
    DimExpr base;
    if (b.is_constant()) {
      base = a_base;
    } else if (subtract && a_base == b_base) {
      base = constant(0);
    } else {
      base = joined(subtract ? DimOp::kSub : DimOp::kAdd, a_base, b_base);
    }
    if (!with_offset(base, offset, &out)) return joined(subtract ? DimOp::kSub : DimOp::kAdd, a, b);
    return out;
  }
  /// a * k for a constant k other than 1: constant terms and factors merged.
  static DimExpr scaled(const DimExpr& a, int64_t k) {
    if (k == 0) return constant(0);
    DimExpr base, out;
    int64_t offset = 0, factor = 0, product = 0;
    split_offset(a, &base, &offset);
    if (offset != 0 && !__builtin_mul_overflow(offset, k, &product) &&
        with_offset(combine(DimOp::kMul, base, constant(k)), product, &out)) {
      return out;
    }
    if (offset == 0 && split_constant(a, DimOp::kMul, &base, &factor) && !__builtin_mul_overflow(factor, k, &product) &&
        product <= kMaxDimConstant && product >= -kMaxDimConstant) {
      return combine(DimOp::kMul, base, constant(product));
    }
    return joined(DimOp::kMul, a, constant(k));
  }
  /// a / k (floor or ceil) for a constant k > 1, by the exact integer rules in combine().
  static DimExpr divided(DimOp op, const DimExpr& a, int64_t k) {
    DimExpr base, out;
    int64_t offset = 0, factor = 0, product = 0;
    split_offset(a, &base, &offset);
    if (offset != 0 && offset % k == 0 && with_offset(combine(op, base, constant(k)), offset / k, &out)) return out;
    if (split_constant(a, DimOp::kMul, &base, &factor) && factor % k == 0) {
      return combine(DimOp::kMul, base, constant(factor / k));
    }
    if (split_constant(a, op, &base, &factor) && factor > 0 && !__builtin_mul_overflow(factor, k, &product) &&
        product <= kMaxDimConstant) {
      return joined(op, base, constant(product));
    }
    return joined(op, a, constant(k));
  }

  std::vector<int64_t> words_;
};

/// The largest value `dim` takes over the symbols' ranges; -1 when it is malformed or
/// cannot be bounded.
inline int64_t dim_upper_bound(const DimExpr& dim, const std::vector<DimRange>& symbols) {
  DimRange range;
  if (!check_dim_expr(dim.words().data(), dim.words().size(), symbols.size()).empty() ||
      !dim_expr_range(dim.words().data(), dim.words().size(), symbols.data(), &range)) {
    return -1;
  }
  return range.max;
}

/// Each dimension's upper bound over the symbols' ranges (-1 where it has none, which
/// readers refuse); `*varies` says whether any dimension is not a constant.
inline std::vector<int64_t> dim_upper_bounds(const std::vector<DimExpr>& dims, const std::vector<DimRange>& symbols,
                                             bool* varies) {
  std::vector<int64_t> bounds;
  *varies = false;
  for (const DimExpr& dim : dims) {
    bounds.push_back(dim_upper_bound(dim, symbols));
    *varies = *varies || !dim.is_constant();
  }
  return bounds;
}

inline DimExpr operator+(const DimExpr& a, const DimExpr& b) { return DimExpr::combine(DimOp::kAdd, a, b); }
inline DimExpr operator-(const DimExpr& a, const DimExpr& b) { return DimExpr::combine(DimOp::kSub, a, b); }
inline DimExpr operator*(const DimExpr& a, const DimExpr& b) { return DimExpr::combine(DimOp::kMul, a, b); }
inline DimExpr floor_div(const DimExpr& a, const DimExpr& b) { return DimExpr::combine(DimOp::kFloorDiv, a, b); }
inline DimExpr ceil_div(const DimExpr& a, const DimExpr& b) { return DimExpr::combine(DimOp::kCeilDiv, a, b); }
inline DimExpr min(const DimExpr& a, const DimExpr& b) { return DimExpr::combine(DimOp::kMin, a, b); }
inline DimExpr max(const DimExpr& a, const DimExpr& b) { return DimExpr::combine(DimOp::kMax, a, b); }

}  // namespace plugrt::common

#endif  // PLUGRT_COMMON_DIM_EXPR_H_
