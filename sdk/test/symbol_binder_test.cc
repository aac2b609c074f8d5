// SPDX-License-Identifier: Apache-2.0
// Binding a call's symbol values: from the values the host passes (ABI 1.6), or from the
// input shapes; every input dimension checked against them.
#include "plugrt/sdk/symbol_binder.h"

#include <cstdint>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/sdk/tensor.h"

namespace plugrt::sdk {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const DimExpr kLen = DimExpr::symbol(0);

/// One input [1, 4, (len - 1) / 2 + 1]: what a partition after a stride-2 convolution
/// of kernel 3 (no padding) sees; `len` itself is no input's dimension.
SymbolBinder after_a_strided_convolution() {
  SymbolBinder binder;
  binder.add_symbol("len", {3, 64});
  const DimExpr length = floor_div(kLen - DimExpr::constant(3), DimExpr::constant(2)) + DimExpr::constant(1);
  binder.add_input("x", {1, 4, 31}, {{}, {}, length.words()});
  binder.needs_host_value(0);
  return binder;
}

struct View {
  std::vector<int64_t> shape;
  DLTensor tensor{};
  explicit View(std::vector<int64_t> dims) : shape(std::move(dims)) {
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.shape = shape.data();
  }
};

TEST(SymbolBinder, TakesTheValuesTheHostPassesAndChecksTheInputsAgainstThem) {
  SymbolBinder binder = after_a_strided_convolution();
  View x({1, 4, 5});  // len 11 or 12
  const DLTensor* inputs[] = {&x.tensor};
  char error[256] = "";
  const int64_t eleven[] = {11};
  ASSERT_TRUE(binder.bind(inputs, 1, eleven, 1, error, sizeof(error))) << error;
  EXPECT_THAT(binder.values(), ElementsAre(11));
  const int64_t twelve[] = {12};
  ASSERT_TRUE(binder.bind(inputs, 1, twelve, 1, error, sizeof(error))) << error;
  EXPECT_THAT(binder.values(), ElementsAre(12));

  const int64_t thirteen[] = {13};
  EXPECT_FALSE(binder.bind(inputs, 1, thirteen, 1, error, sizeof(error)));
  EXPECT_THAT(error, HasSubstr("input 0 ('x') dimension 2 is 5; it takes 6 = (len - 3) / 2 + 1"));
  const int64_t too_long[] = {65};
  EXPECT_FALSE(binder.bind(inputs, 1, too_long, 1, error, sizeof(error)));
  EXPECT_THAT(error, HasSubstr("symbol 'len' is 65, outside [3, 64]"));
}

TEST(SymbolBinder, WithoutTheHostsValuesASymbolNoInputGivesFailsTheCall) {
  SymbolBinder binder = after_a_strided_convolution();
  View x({1, 4, 5});
  const DLTensor* inputs[] = {&x.tensor};
  char error[256] = "";
  EXPECT_FALSE(binder.bind(inputs, 1, error, sizeof(error)));
  EXPECT_THAT(error, HasSubstr("symbol 'len' is the size of no input dimension, and the call brought no symbol values "
                               "(a host before plugin ABI 1.6)"));
  const int64_t wrong_count[] = {11, 12};
  EXPECT_FALSE(binder.bind(inputs, 1, wrong_count, 2, error, sizeof(error)));
}

TEST(SymbolBinder, ReadsASymbolThatIsAnInputsDimensionFromItsShape) {
  SymbolBinder binder;
  binder.add_symbol("seq", {1, 16});
  binder.add_input("x", {1, 16, 8}, {{}, kLen.words(), {}});
  View x({1, 5, 8});
  const DLTensor* inputs[] = {&x.tensor};
  char error[256] = "";
  ASSERT_TRUE(binder.bind(inputs, 1, error, sizeof(error))) << error;
  EXPECT_THAT(binder.values(), ElementsAre(5));
  const int64_t other[] = {6};
  EXPECT_FALSE(binder.bind(inputs, 1, other, 1, error, sizeof(error)));
  EXPECT_THAT(error, HasSubstr("dimension 1 is 5; it takes 6 = seq"));
}

TEST(Arguments, SymbolValuesAreReadOnlyFromArgsThatHoldThem) {
  const int64_t values[] = {7};
  plugrt_execute_args args{};
  args.struct_size = sizeof(args);
  args.symbol_values = values;
  args.num_symbol_values = 1;
  EXPECT_EQ(Arguments(&args).symbol_values(), values);
  EXPECT_EQ(Arguments(&args).num_symbol_values(), 1u);
  args.struct_size = PLUGRT_EXECUTE_ARGS_SIZE_1_2;  // a host before 1.6
  EXPECT_EQ(Arguments(&args).symbol_values(), nullptr);
  EXPECT_EQ(Arguments(&args).num_symbol_values(), 0u);
}

}  // namespace
}  // namespace plugrt::sdk
