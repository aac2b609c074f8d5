// SPDX-License-Identifier: Apache-2.0
// Dimensions that vary, at import (ImportOptions::dims). Each ONNX dim_param given
// bounds becomes a symbol, and each dimension of a value an expression over the symbols
// (common::DimExpr). ONNX's own inference carries dim_params through the ops that copy
// dimensions, so an expression travels in a TypeProto as a dim_param text that this
// table maps back to it. Where ONNX's inference leaves a dimension unknown (a
// convolution's length, a Reshape whose target is computed from shapes, a Concat along
// a varying axis), plugrt's own rules give it. Small integer tensors computed from
// shapes (Shape, Gather, Concat, arithmetic: "shape values") are followed element by
// element, so that a Reshape's or Expand's target is known as expressions.
#ifndef PLUGRT_TOOLS_COMPILER_ONNX_SYMBOLIC_H_
#define PLUGRT_TOOLS_COMPILER_ONNX_SYMBOLIC_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "onnx_internal.h"
#include "plugrt/common/dim_expr.h"

namespace plugrt::compiler::onnx_import {

/// One input of a node, as the symbolic rules see it.
struct Operand {
  const ValueType* type = nullptr;                         ///< null for an absent input or an unknown type
  const Tensor* constant = nullptr;                        ///< its value, when it is a constant
  const std::vector<common::DimExpr>* elements = nullptr;  ///< its elements, when it is a shape value
};

class SymbolicDims {
 public:
  /// Adds symbol `name`, in [min, max]; its dim_param text is its name.
  void add_symbol(const std::string& name, int64_t min, int64_t max);
  bool empty() const { return names_.empty(); }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<common::DimRange>& ranges() const { return ranges_; }

  /// The expressions of `type`'s dimensions; false when one is unknown (no value, and no
  /// dim_param that stands for an expression here).
  bool dims_of(const ValueType& type, std::vector<common::DimExpr>* dims) const;
  /// Sets `type`'s shape to `dims`: a dim_value for a constant, else the expression's text.
  void set_dims(const std::vector<common::DimExpr>& dims, onnx::TypeProto* type);
  /// Whether a TypeProto dimension is known: a value, or a text kept here.
  bool knows(const onnx::TensorShapeProto::Dimension& dim) const;
  /// "seq", "(seq + 1) / 2".
  std::string describe(const common::DimExpr& dim) const { return dim.to_string(names_); }

  /// After ONNX's inference of `node` (`outputs`, one per output): fills in by plugrt's
  /// rules the dimensions it left unknown, and gives the elements of each output that is
  /// a shape value (`values`: one entry per output, empty where it is not one).
  void infer(const onnx::NodeProto& node, int64_t opset, const std::vector<Operand>& inputs,
             std::vector<onnx::TypeProto>* outputs, std::vector<std::vector<common::DimExpr>>* values);

 private:
  bool output_dims(const onnx::NodeProto& node, int64_t opset, const std::vector<Operand>& inputs,
                   std::vector<common::DimExpr>* dims) const;
  std::vector<std::string> names_;
  std::vector<common::DimRange> ranges_;
  std::map<std::string, common::DimExpr> by_text_;  // dim_param text -> its expression
};

/// The elements of a node's output computed from shape values (Shape of a value that
/// varies, then Gather, Unsqueeze, Concat, Cast, arithmetic...); false when the node
/// computes no such value or the rules do not cover it.
bool shape_value(const onnx::NodeProto& node, int64_t opset, const std::vector<Operand>& inputs,
                 const SymbolicDims& symbols, std::vector<common::DimExpr>* elements);

}  // namespace plugrt::compiler::onnx_import

#endif  // PLUGRT_TOOLS_COMPILER_ONNX_SYMBOLIC_H_
