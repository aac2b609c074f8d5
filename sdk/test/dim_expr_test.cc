// SPDX-License-Identifier: Apache-2.0
// Symbolic dimensions: building, checking, evaluating and bounding expressions.
#include "plugrt/sdk/dim_expr.h"

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace plugrt::sdk {
namespace {

using ::testing::HasSubstr;

const DimExpr kSeq = DimExpr::symbol(0);
const DimExpr kBatch = DimExpr::symbol(1);
const std::vector<std::string> kNames = {"seq", "batch"};

int64_t evaluate(const DimExpr& e, std::vector<int64_t> symbols) {
  int64_t value = -1;
  EXPECT_EQ(check_dim_expr(e.words().data(), e.words().size(), 2), "");
  EXPECT_TRUE(evaluate_dim_expr(e.words().data(), e.words().size(), symbols.data(), &value));
  return value;
}

TEST(DimExpr, WordsRoundTripTheirOpAndSignedOperand) {
  for (int64_t operand : {int64_t{0}, int64_t{1}, int64_t{-1}, kMaxDimConstant, -kMaxDimConstant}) {
    const int64_t word = dim_word(DimOp::kConstant, operand);
    EXPECT_EQ(dim_word_op(word), DimOp::kConstant);
    EXPECT_EQ(dim_word_operand(word), operand);
  }
  EXPECT_EQ(dim_word_op(dim_word(DimOp::kMax, 0)), DimOp::kMax);
}

TEST(DimExpr, FoldsConstantsAndDropsIdentities) {
  EXPECT_TRUE((DimExpr::constant(3) * DimExpr::constant(4) + DimExpr::constant(1)).is_constant());
  EXPECT_EQ((DimExpr::constant(3) * DimExpr::constant(4) + DimExpr::constant(1)).constant_value(), 13);
  EXPECT_EQ(kSeq + DimExpr::constant(0), kSeq);
  EXPECT_EQ(DimExpr::constant(1) * kSeq, kSeq);
  EXPECT_EQ(floor_div(kSeq, DimExpr::constant(1)), kSeq);
  EXPECT_EQ(max(kSeq, kSeq), kSeq);
  EXPECT_NE(kSeq + DimExpr::constant(1), kSeq);
  // Division by zero is not folded: the expression keeps it, and evaluation fails.
  const DimExpr by_zero = floor_div(DimExpr::constant(4), DimExpr::constant(0));
  EXPECT_FALSE(by_zero.is_constant());
  int64_t value = 0;
  EXPECT_FALSE(evaluate_dim_expr(by_zero.words().data(), by_zero.words().size(), nullptr, &value));
}

TEST(DimExpr, EvaluatesAConvolutionsOutputLength) {
  // Conv1d, kernel 3, stride 2, padding 1: (seq + 2 - 3) / 2 + 1.
  const DimExpr length =
      floor_div(kSeq + DimExpr::constant(2) - DimExpr::constant(3), DimExpr::constant(2)) + DimExpr::constant(1);
  EXPECT_EQ(evaluate(length, {1, 1}), 1);
  EXPECT_EQ(evaluate(length, {16, 1}), 8);
  EXPECT_EQ(evaluate(length, {17, 1}), 9);
  EXPECT_EQ(length.to_string(kNames), "(seq - 1) / 2 + 1");
}

TEST(DimExpr, KeepsStackedConvolutionLengthsShort) {
  // PP-OCR's recogniser as exported: each layer's length formula applied to the last,
  // with "+ 1 - 1" pairs from kernel-1 layers between the strided ones.
  DimExpr length = kSeq;
  for (int layer = 0; layer < 40; ++layer) {
    if (layer % 8 == 0) {
      length =
          floor_div(length + DimExpr::constant(2) - DimExpr::constant(3), DimExpr::constant(2)) + DimExpr::constant(1);
    } else {
      length = length - DimExpr::constant(1) + DimExpr::constant(1);
    }
  }
  EXPECT_EQ(length.to_string(kNames), "(seq - 1) / 32 + 1");
  for (int64_t seq : {1, 31, 32, 33, 320, 959}) {
    int64_t want = seq;
    for (int strided = 0; strided < 5; ++strided) want = (want + 2 - 3) / 2 + 1;  // seq >= 1: C++ / floors here
    EXPECT_EQ(evaluate(length, {seq, 1}), want) << seq;
  }
}

TEST(DimExpr, SimplifiesByExactIntegerRulesOnly) {
  const DimExpr two = DimExpr::constant(2), three = DimExpr::constant(3);
  EXPECT_EQ((DimExpr::constant(5) + kSeq).to_string(kNames), "seq + 5");
  EXPECT_EQ((kSeq + two - DimExpr::constant(5)).to_string(kNames), "seq - 3");
  EXPECT_EQ(((kSeq + two) - (kSeq + three)).constant_value(), -1);
  EXPECT_EQ(((kSeq + two) * three).to_string(kNames), "seq * 3 + 6");
  EXPECT_EQ((kSeq * two * three).to_string(kNames), "seq * 6");
  EXPECT_EQ(floor_div(kSeq * DimExpr::constant(6), three).to_string(kNames), "seq * 2");
  EXPECT_EQ(floor_div(kSeq + DimExpr::constant(6), three).to_string(kNames), "seq / 3 + 2");
  EXPECT_EQ(floor_div(floor_div(kSeq, two), three).to_string(kNames), "seq / 6");
  EXPECT_EQ(ceil_div(ceil_div(kSeq, two), three).to_string(kNames), "ceil_div(seq, 6)");
  // Not exact, so left alone: (seq + 1) / 2 * 2 is not seq; seq / 2 + seq / 2 is not seq.
  EXPECT_EQ((floor_div(kSeq + DimExpr::constant(1), two) * two).to_string(kNames), "(seq + 1) / 2 * 2");
  EXPECT_EQ(floor_div(kSeq + DimExpr::constant(1), two).to_string(kNames), "(seq + 1) / 2");
}

/// A random expression over seq and batch, built with DimExpr's operators, and its value
/// computed directly at each of `points`.
DimExpr random_expression(std::mt19937& random, int depth, const std::vector<std::vector<int64_t>>& points,
                          std::vector<int64_t>* values, bool* defined) {
  std::uniform_int_distribution<int> pick(0, 9);
  const int choice = depth == 0 ? pick(random) % 3 : pick(random);
  if (choice < 3) {
    const int64_t c = static_cast<int64_t>(pick(random)) - 3;
    for (size_t p = 0; p < points.size(); ++p) (*values)[p] = choice == 0 ? c : points[p][choice - 1];
    return choice == 0 ? DimExpr::constant(c) : DimExpr::symbol(static_cast<size_t>(choice - 1));
  }
  std::vector<int64_t> left(points.size()), right(points.size());
  const DimExpr a = random_expression(random, depth - 1, points, &left, defined);
  const DimExpr b = choice >= 6 ? DimExpr::constant(pick(random) % 4 + 1)
                                : random_expression(random, depth - 1, points, &right, defined);
  if (choice >= 6) std::fill(right.begin(), right.end(), b.constant_value());
  const DimOp ops[7] = {DimOp::kAdd,      DimOp::kSub,     DimOp::kMul, DimOp::kMul,
                        DimOp::kFloorDiv, DimOp::kCeilDiv, DimOp::kAdd};
  const DimOp op = ops[choice - 3];
  for (size_t p = 0; p < points.size(); ++p) {
    *defined = *defined && common::dim_detail::apply(op, left[p], right[p], &(*values)[p]);
  }
  return DimExpr::combine(op, a, b);
}

TEST(DimExpr, ConstantsThatDoNotFoldStayAsWritten) {
  // Found by the dim_expr fuzz target: a sum or product of two constants whose result is
  // out of a word's range recursed for ever.
  const DimExpr big = DimExpr::constant(kMaxDimConstant);
  const DimExpr sum = big + big, product = big * big;
  EXPECT_FALSE(sum.is_constant());
  EXPECT_FALSE(product.is_constant());
  int64_t value = 0;
  ASSERT_TRUE(evaluate_dim_expr(sum.words().data(), sum.words().size(), nullptr, &value));
  EXPECT_EQ(value, 2 * kMaxDimConstant);
  EXPECT_FALSE(evaluate_dim_expr(product.words().data(), product.words().size(), nullptr, &value));
}

TEST(DimExpr, SimplifiedExpressionsEvaluateAsBuilt) {
  std::mt19937 random(7);
  const std::vector<std::vector<int64_t>> points = {{1, 1}, {7, 3}, {32, 4}, {100, 2}, {959, 1}, {0, 0}};
  int checked = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<int64_t> want(points.size());
    bool defined = true;
    const DimExpr e = random_expression(random, 4, points, &want, &defined);
    if (!defined || !check_dim_expr(e.words().data(), e.words().size(), 2).empty()) continue;
    ++checked;
    for (size_t p = 0; p < points.size(); ++p) {
      int64_t got = 0;
      ASSERT_TRUE(evaluate_dim_expr(e.words().data(), e.words().size(), points[p].data(), &got)) << e.to_string(kNames);
      ASSERT_EQ(got, want[p]) << e.to_string(kNames) << " at seq " << points[p][0] << ", batch " << points[p][1];
    }
  }
  EXPECT_GT(checked, 1500);
}

TEST(DimExpr, RoundsDivisionDownOrUpAlsoBelowZero) {
  const DimExpr down = floor_div(kSeq - DimExpr::constant(8), DimExpr::constant(3));
  const DimExpr up = ceil_div(kSeq - DimExpr::constant(8), DimExpr::constant(3));
  EXPECT_EQ(evaluate(down, {1, 0}), -3);  // -7 / 3
  EXPECT_EQ(evaluate(up, {1, 0}), -2);
  EXPECT_EQ(evaluate(down, {15, 0}), 2);  // 7 / 3
  EXPECT_EQ(evaluate(up, {15, 0}), 3);
  EXPECT_EQ(up.to_string(kNames), "ceil_div(seq - 8, 3)");
}

TEST(DimExpr, PrintsParenthesesOnlyWhereNeeded) {
  EXPECT_EQ((kSeq * (kBatch + DimExpr::constant(1))).to_string(kNames), "seq * (batch + 1)");
  EXPECT_EQ((kSeq - (kBatch * DimExpr::constant(2) - kSeq)).to_string(kNames), "seq - (batch * 2 - seq)");
  EXPECT_EQ((kSeq - (kBatch - DimExpr::constant(1))).to_string(kNames), "seq - batch + 1");
  EXPECT_EQ(min(kSeq, DimExpr::constant(8)).to_string(kNames), "min(seq, 8)");
  EXPECT_EQ(DimExpr::symbol(5).to_string(kNames), "$5");
}

TEST(DimExpr, BoundsAnExpressionOverTheSymbolsRanges) {
  const DimRange symbols[2] = {{1, 256}, {1, 4}};
  const DimExpr tokens = kSeq * kBatch;
  DimRange range;
  ASSERT_TRUE(dim_expr_range(tokens.words().data(), tokens.words().size(), symbols, &range));
  EXPECT_EQ(range.min, 1);
  EXPECT_EQ(range.max, 1024);
  // Subtraction takes the other operand's opposite end.
  const DimExpr gap = kSeq - kBatch;
  ASSERT_TRUE(dim_expr_range(gap.words().data(), gap.words().size(), symbols, &range));
  EXPECT_EQ(range.min, -3);
  EXPECT_EQ(range.max, 255);
  // A divisor that may reach zero cannot be bounded.
  const DimExpr ratio = floor_div(kSeq, kBatch - DimExpr::constant(1));
  EXPECT_FALSE(dim_expr_range(ratio.words().data(), ratio.words().size(), symbols, &range));
}

TEST(DimExpr, RefusesMalformedPrograms) {
  const int64_t unknown_op[] = {dim_word(DimOp::kConstant, 1), int64_t{0x7f}};
  EXPECT_THAT(check_dim_expr(unknown_op, 2, 0), HasSubstr("has unknown op 127"));
  const int64_t underflow[] = {dim_word(DimOp::kConstant, 1), dim_word(DimOp::kAdd, 0)};
  EXPECT_THAT(check_dim_expr(underflow, 2, 0), HasSubstr("pops more values than were pushed"));
  const int64_t leftover[] = {dim_word(DimOp::kConstant, 1), dim_word(DimOp::kConstant, 2)};
  EXPECT_THAT(check_dim_expr(leftover, 2, 0), HasSubstr("leaves 2 values"));
  const int64_t symbol[] = {dim_word(DimOp::kSymbol, 2)};
  EXPECT_THAT(check_dim_expr(symbol, 1, 2), HasSubstr("names symbol 2 of 2"));
  const int64_t operand[] = {dim_word(DimOp::kConstant, 1), dim_word(DimOp::kConstant, 1), dim_word(DimOp::kAdd, 3)};
  EXPECT_THAT(check_dim_expr(operand, 3, 0), HasSubstr("has an operand on a binary op"));
  EXPECT_THAT(check_dim_expr(nullptr, 0, 0), HasSubstr("is empty"));
  std::vector<int64_t> deep(kMaxDimExprDepth + 1, dim_word(DimOp::kConstant, 1));
  EXPECT_THAT(check_dim_expr(deep.data(), deep.size(), 0), HasSubstr("nests deeper than"));
  std::vector<int64_t> long_one(kMaxDimExprWords + 1, dim_word(DimOp::kConstant, 1));
  EXPECT_THAT(check_dim_expr(long_one.data(), long_one.size(), 0), HasSubstr("at most 64"));
}

TEST(DimExpr, EvaluationFailsInsteadOfOverflowing) {
  const DimExpr square = kSeq * kSeq;
  const int64_t symbols[2] = {int64_t{1} << 40, 0};
  int64_t value = 0;
  EXPECT_FALSE(evaluate_dim_expr(square.words().data(), square.words().size(), symbols, &value));
  const DimRange ranges[2] = {{1, int64_t{1} << 40}, {0, 0}};
  DimRange range;
  EXPECT_FALSE(dim_expr_range(square.words().data(), square.words().size(), ranges, &range));
}

}  // namespace
}  // namespace plugrt::sdk
