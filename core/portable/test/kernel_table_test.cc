// SPDX-License-Identifier: Apache-2.0
// The kernel table: every op the portable backend promises, each registered once.
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel.h"

namespace plugrt::portable {
namespace {

TEST(KernelTable, EveryPromisedOpHasAKernel) {
  // The list in core/portable/README.md.
  const char* promised[] = {"Abs",
                            "Add",
                            "AveragePool",
                            "BatchNormalization",
                            "Cast",
                            "Clip",
                            "Concat",
                            "Conv",
                            "ConvTranspose",
                            "Div",
                            "Equal",
                            "Erf",
                            "Exp",
                            "Expand",
                            "Flatten",
                            "Gather",
                            "Gemm",
                            "GlobalAveragePool",
                            "Greater",
                            "HardSigmoid",
                            "HardSwish",
                            "Identity",
                            "LayerNormalization",
                            "LeakyRelu",
                            "Less",
                            "Log",
                            "LogSoftmax",
                            "MatMul",
                            "MaxPool",
                            "Mul",
                            "Neg",
                            "Pad",
                            "Pow",
                            "Reciprocal",
                            "ReduceMax",
                            "ReduceMean",
                            "ReduceSum",
                            "Relu",
                            "Reshape",
                            "Resize",
                            "Shape",
                            "Sigmoid",
                            "Slice",
                            "Softmax",
                            "Split",
                            "Sqrt",
                            "Squeeze",
                            "Sub",
                            "Tanh",
                            "Transpose",
                            "Unsqueeze",
                            "Where",
                            "If",
                            "Loop",
                            "Scan"};
  for (const char* op : promised) EXPECT_NE(find_kernel(op), nullptr) << op;
  EXPECT_EQ(find_kernel("NoSuchOp"), nullptr);
}

TEST(KernelTable, EachOpTypeIsRegisteredOnce) {
  std::vector<std::string_view> ops = supported_op_types();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  EXPECT_EQ(std::adjacent_find(ops.begin(), ops.end()), ops.end()) << "an op type has two kernels";
}

}  // namespace
}  // namespace plugrt::portable
