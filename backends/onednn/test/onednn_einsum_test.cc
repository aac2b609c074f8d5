// SPDX-License-Identifier: Apache-2.0
// Einsum as one oneDNN matmul through strided views (aot/lowering_einsum.cc): the
// equations of real models, random batched matrix products with permuted operands and
// results, against the portable backend; and the equations oneDNN leaves to portable.
#include <map>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onednn_test_support.h"

namespace plugrt::onednn_test {
namespace {

/// The shape of `term` (letters only) under `sizes`.
Ints shape_of(const std::string& term, const std::map<char, int64_t>& sizes) {
  Ints shape;
  for (char c : term) shape.push_back(sizes.at(c));
  return shape;
}

/// One Einsum of an input and an input or constant (`constant_b`) whose shapes the
/// equation's letters and `sizes` give; `after` may add ops on its result.
std::vector<uint8_t> einsum(const std::string& equation, const std::map<char, int64_t>& sizes, bool constant_b = false,
                            const std::function<ValueId(TestGraph&, ValueId, const Ints&)>& after = nullptr) {
  const size_t comma = equation.find(','), arrow = equation.find("->");
  const std::string a_term = equation.substr(0, comma), b_term = equation.substr(comma + 1, arrow - comma - 1);
  const Ints ys = shape_of(equation.substr(arrow + 2), sizes);
  TestGraph g;
  ValueId a = g.input(shape_of(a_term, sizes));
  ValueId b = constant_b ? g.constant(shape_of(b_term, sizes)) : g.input(shape_of(b_term, sizes));
  ValueId y = g.node("Einsum", {a, b}, ys, {S("equation", equation.c_str())});
  return g.finish({after ? after(g, y, ys) : y});
}

/// One Einsum of two inputs of the given shapes (for ellipses and implicit outputs).
std::vector<uint8_t> einsum_shapes(const char* equation, Ints as, Ints bs, Ints ys, bool constant_a = false) {
  TestGraph g;
  ValueId a = constant_a ? g.constant(as) : g.input(as);
  ValueId b = g.input(bs);
  return g.finish({g.node("Einsum", {a, b}, ys, {S("equation", equation)})});
}

std::vector<OpCase> model_cases() {
  return {
      {"AttentionScores",
       [] {
         return einsum("bhid,bhjd->bhij", {{'b', 2}, {'h', 3}, {'i', 5}, {'j', 7}, {'d', 8}});
       }},
      {"AttentionValues",
       [] {
         return einsum("bhij,bhjd->bhid", {{'b', 2}, {'h', 3}, {'i', 5}, {'j', 7}, {'d', 8}});
       }},
      {"BatchedScores",
       [] {
         return einsum("bid,bjd->bij", {{'b', 3}, {'i', 5}, {'j', 6}, {'d', 9}});
       }},
      {"PlainProduct",
       [] {
         return einsum("ij,jk->ik", {{'i', 5}, {'j', 7}, {'k', 3}});
       }},
      {"PlainProductOtherLetters",
       [] {
         return einsum("ik,kj->ij", {{'i', 4}, {'k', 6}, {'j', 5}});
       }},
      {"ScoresOfOneQuery",
       [] {
         return einsum("bnqd,bnkd->bnqk", {{'b', 1}, {'n', 2}, {'q', 1}, {'k', 9}, {'d', 8}});
       }},
      {"ResultTransposed",
       [] {
         return einsum("ij,jk->ki", {{'i', 5}, {'j', 7}, {'k', 3}});
       }},
      {"ResultPermutedBatched",
       [] {
         return einsum("bid,bjd->jbi", {{'b', 3}, {'i', 5}, {'j', 6}, {'d', 9}});
       }},
      {"ConstantWeights",
       [] {
         return einsum("bij,bjk->bik", {{'b', 2}, {'i', 5}, {'j', 7}, {'k', 3}}, true);
       }},
      {"PositionBias",  // swin's relative position: h batched, b broadcast over the weights
       [] {
         return einsum("bhwc,hkc->bhwk", {{'b', 2}, {'h', 3}, {'w', 5}, {'k', 4}, {'c', 8}}, true);
       }},
      {"PositionBiasComputed",
       [] {
         return einsum("bhwc,hkc->bhwk", {{'b', 2}, {'h', 3}, {'w', 5}, {'k', 4}, {'c', 8}});
       }},
      {"RowsMergeIntoM",
       [] {
         return einsum("bxyd,de->bxye", {{'b', 2}, {'x', 3}, {'y', 5}, {'d', 7}, {'e', 6}}, true);
       }},
      {"SummedIndicesMergeIntoK",
       [] {
         return einsum("bijk,bjkl->bil", {{'b', 2}, {'i', 3}, {'j', 5}, {'k', 2}, {'l', 4}});
       }},
      {"BatchInnermost",  // no unit stride in any matrix: the operands are copied plain
       [] {
         return einsum("ijb,jkb->ikb", {{'b', 3}, {'i', 5}, {'j', 7}, {'k', 4}});
       }},
      {"GramOfOneValue",  // both operands one tensor, read through two views
       [] {
         TestGraph g;
         ValueId x = g.input({2, 5, 8});
         return g.finish({g.node("Einsum", {x, x}, {2, 5, 5}, {S("equation", "bid,bjd->bij")})});
       }},
      {"DotProduct", [] { return einsum_shapes("i,i->", {7}, {7}, {}); }},
      {"OuterProduct",
       [] {
         return einsum("i,j->ij", {{'i', 5}, {'j', 3}});
       }},
      {"ImplicitOutput",
       [] {
         return einsum_shapes("ij,jk", {5, 7}, {7, 3}, {5, 3});
       }},
      {"ConstantFirstInput",
       [] {
         return einsum_shapes("ij,bjk->bik", {4, 6}, {2, 6, 5}, {2, 4, 5}, true);
       }},
      {"EllipsisOfOtherRanks",
       [] {
         return einsum_shapes("...id,...jd->...ij", {2, 3, 5, 4}, {3, 6, 4}, {2, 3, 5, 6});
       }},
      {"EllipsisBroadcastBothWays",
       [] {
         return einsum_shapes("...id,...jd->...ij", {2, 1, 5, 4}, {1, 3, 6, 4}, {2, 3, 5, 6});
       }},
      {"EllipsisInTheMiddle",
       [] {
         return einsum_shapes("b...d,bjd->b...j", {2, 3, 5, 4}, {2, 6, 4}, {2, 3, 5, 6});
       }},
      {"SizeOneEverywhere",
       [] {
         return einsum("bhid,bhjd->bhij", {{'b', 1}, {'h', 1}, {'i', 1}, {'j', 1}, {'d', 1}});
       }},
      {"ScaledMaskedSoftmax",  // attention: the scale and the mask fuse into the matmul
       [] {
         return einsum("bhid,bhjd->bhij", {{'b', 2}, {'h', 3}, {'i', 5}, {'j', 7}, {'d', 8}}, false,
                       [](TestGraph& g, ValueId y, const Ints& ys) {
                         ValueId scaled = g.node("Mul", {y, g.scalar(0.125f)}, ys);
                         ValueId masked = g.node("Add", {scaled, g.constant({1, 1, 5, 7})}, ys);
                         return g.node("Softmax", {masked}, ys, {I("axis", -1)});
                       });
       }},
      {"PermutedResultThenReluAndAdd",  // the Relu fuses; the Add runs on its own
       [] {
         return einsum("bid,bjd->bji", {{'b', 3}, {'i', 5}, {'j', 6}, {'d', 9}}, false,
                       [](TestGraph& g, ValueId y, const Ints& ys) {
                         ValueId relu = g.node("Relu", {y}, ys);
                         return g.node("Add", {relu, g.constant(ys)}, ys);
                       });
       }},
  };
}

/// Random batched matrix products: up to two batch labels, up to two M and N labels, one
/// or no K label, each of size 1 to 5 or 9, every operand and the result in a random
/// order (the M or N labels that end up apart become broadcast batch dims).
std::vector<OpCase> random_cases() {
  std::vector<OpCase> cases;
  std::mt19937 random(11);
  auto between = [&random](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(random); };
  for (int n = 0; n < 24; ++n) {
    std::string batch, m, k, nn, letters = "abcdefghijklmnopqrstuvwxyz";
    std::shuffle(letters.begin(), letters.end(), random);
    size_t next = 0;
    auto take = [&](std::string* into, int count) {
      for (int i = 0; i < count; ++i) *into += letters[next++];
    };
    take(&batch, between(0, 2));
    take(&m, between(0, 2));
    take(&nn, between(0, 2));
    take(&k, between(0, 1));
    std::string a = batch + m + k, b = batch + k + nn, y = batch + m + nn;
    if (a.empty() || b.empty()) continue;
    std::shuffle(a.begin(), a.end(), random);
    std::shuffle(b.begin(), b.end(), random);
    std::shuffle(y.begin(), y.end(), random);
    std::map<char, int64_t> sizes;
    const std::vector<int64_t> choices = {1, 2, 3, 4, 5, 9};
    for (char c : batch + m + nn + k) sizes[c] = choices[static_cast<size_t>(between(0, 5))];
    const std::string equation = a + "," + b + "->" + y;
    const bool constant_b = between(0, 3) == 0;
    cases.push_back(
        {"Random" + std::to_string(n), [equation, sizes, constant_b] { return einsum(equation, sizes, constant_b); }});
  }
  return cases;
}

class OnednnEinsumTest : public ::testing::TestWithParam<OpCase> {
 protected:
  OnednnEnvironment env_;
};

TEST_P(OnednnEinsumTest, TakenAsOneMatmulAndMatchesPortable) {
  expect_taken_and_matching_portable(env_, "onednn", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Einsum, OnednnEinsumTest, ::testing::ValuesIn(joined(model_cases(), random_cases())),
                         [](const ::testing::TestParamInfo<OpCase>& param) { return param.param.name; });

std::vector<RefusedCase> refused_cases() {
  return {
      {"Diagonal", "Einsum",
       [] {
         return einsum_shapes("iij,jk->ik", {3, 3, 4}, {4, 5}, {3, 5});
       }},
      {"SummedWithinOneInput", "Einsum",
       [] {
         return einsum("ij,jk->k", {{'i', 3}, {'j', 4}, {'k', 5}});
       }},
      {"SummedIndicesApart", "Einsum",
       [] {
         return einsum("ajb,akb->jk", {{'a', 3}, {'j', 4}, {'b', 2}, {'k', 5}});
       }},
      {"SummedIndicesInTwoOrders", "Einsum",
       [] {
         return einsum("iab,bak->ik", {{'i', 3}, {'a', 4}, {'b', 2}, {'k', 5}});
       }},
      {"ThreeInputs", "Einsum",
       [] {
         TestGraph g;
         ValueId a = g.input({3, 4}), b = g.input({4, 5}), c = g.input({5, 2});
         return g.finish({g.node("Einsum", {a, b, c}, {3, 2}, {S("equation", "ij,jk,kl->il")})});
       }},
      {"FiveBatchDimsThatDoNotMerge", "Einsum",
       [] {
         return einsum("abcdeij,edcbajk->abcdeik",
                       {{'a', 2}, {'b', 2}, {'c', 2}, {'d', 2}, {'e', 2}, {'i', 3}, {'j', 2}, {'k', 3}});
       }},
  };
}

class OnednnEinsumRefusalTest : public ::testing::TestWithParam<RefusedCase> {
 protected:
  OnednnEnvironment env_;
};

TEST_P(OnednnEinsumRefusalTest, LeavesTheNodeToPortable) { expect_left_to_portable(env_, "onednn", GetParam()); }

INSTANTIATE_TEST_SUITE_P(EinsumRefusals, OnednnEinsumRefusalTest, ::testing::ValuesIn(refused_cases()),
                         [](const ::testing::TestParamInfo<RefusedCase>& param) { return param.param.name; });

}  // namespace
}  // namespace plugrt::onednn_test
