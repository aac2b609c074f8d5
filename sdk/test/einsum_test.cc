// SPDX-License-Identifier: Apache-2.0
// Einsum equations: terms, ellipses, the implied output and what is refused.
#include "plugrt/sdk/einsum.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace plugrt::sdk {
namespace {

using ::testing::HasSubstr;

TEST(Einsum, ParsesExplicitTermsWithSpacesAndEllipses) {
  EinsumEquation parsed;
  ASSERT_EQ(parse_einsum("...ij, ...jk -> ...ik", &parsed), "");
  ASSERT_EQ(parsed.inputs.size(), 2u);
  EXPECT_EQ(parsed.inputs[0].letters, "ij");
  EXPECT_EQ(parsed.inputs[0].ellipsis_at, 0);
  EXPECT_EQ(parsed.inputs[1].letters, "jk");
  EXPECT_EQ(parsed.output.letters, "ik");
  EXPECT_EQ(parsed.output.ellipsis_at, 0);
}

TEST(Einsum, ImpliesTheOutputFromLettersUsedOnce) {
  // b and j repeat; the rest, in character order (upper case first), after the ellipsis.
  EinsumEquation parsed;
  ASSERT_EQ(parse_einsum("bjz,bjA", &parsed), "");
  EXPECT_EQ(parsed.output.letters, "Az");
  EXPECT_EQ(parsed.output.ellipsis_at, -1);
  ASSERT_EQ(parse_einsum("i...", &parsed), "");
  EXPECT_EQ(parsed.output.letters, "i");
  EXPECT_EQ(parsed.output.ellipsis_at, 0);
}

TEST(Einsum, RefusesMalformedEquations) {
  EinsumEquation parsed;
  EXPECT_THAT(parse_einsum("i..j...,j", &parsed), HasSubstr("neither a letter"));
  EXPECT_THAT(parse_einsum("...i...,i", &parsed), HasSubstr("more than one ellipsis"));
  EXPECT_THAT(parse_einsum("ij,jk->iz", &parsed), HasSubstr("'z' appears in no input"));
  EXPECT_THAT(parse_einsum("ij->ii", &parsed), HasSubstr("'i' repeats"));
  EXPECT_THAT(parse_einsum("i1->i", &parsed), HasSubstr("'1'"));
}

}  // namespace
}  // namespace plugrt::sdk
