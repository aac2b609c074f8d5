// SPDX-License-Identifier: Apache-2.0
// Sequences known at compile time, lowered to the tensors they hold. plugrt's programs
// compute tensors only; a sequence whose length, elements and positions are all known
// when the model is imported (built by SequenceEmpty, SequenceConstruct,
// SequenceInsert, SequenceErase and SplitToSequence of a tensor of static shape, read
// by SequenceAt, SequenceLength and ConcatFromSequence) is a list of tensor values, and
// each read is an ordinary node: SequenceAt an Identity, SequenceLength a constant,
// ConcatFromSequence a Concat (of Reshapes for new_axis), SplitToSequence Slices.
// Positions given at run time, and sequences that are inputs, outputs, or carried by
// Loop, If or SequenceMap, are refused.
#ifndef PLUGRT_TOOLS_COMPILER_ONNX_SEQUENCES_H_
#define PLUGRT_TOOLS_COMPILER_ONNX_SEQUENCES_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onnx_internal.h"

namespace plugrt::compiler::onnx_import {

class StaticSequences {
 public:
  /// The constants of the graph so far, and what is known of each value's type.
  using Constants = std::map<std::string, Tensor>;
  using TypeOf = std::function<ValueType(const std::string&)>;

  /// Whether `node` is one of the sequence ops above (default domain).
  static bool handles(const onnx::NodeProto& node);

  /// Lowers `node`: records the sequence it makes, or puts the nodes that compute its
  /// tensor output in `nodes` and the constants they read in `made`. Returns "" or why
  /// it cannot (a message that says what to do).
  std::string lower(const onnx::NodeProto& node, const Constants& constants, const TypeOf& type_of,
                    std::vector<onnx::NodeProto>* nodes, std::vector<std::pair<std::string, Tensor>>* made);

 private:
  /// The elements of sequence `name`, or "" with `*elements` null and the reason.
  std::string elements_of(const std::string& name, const std::vector<std::string>** elements) const;
  std::string split(const onnx::NodeProto& node, const Constants& constants, const TypeOf& type_of,
                    std::vector<onnx::NodeProto>* nodes, std::vector<std::pair<std::string, Tensor>>* made);
  std::string concat(const onnx::NodeProto& node, const std::vector<std::string>& elements, const TypeOf& type_of,
                     std::vector<onnx::NodeProto>* nodes, std::vector<std::pair<std::string, Tensor>>* made) const;

  std::map<std::string, std::vector<std::string>> sequences_;  // name -> its elements' value names
};

}  // namespace plugrt::compiler::onnx_import

#endif  // PLUGRT_TOOLS_COMPILER_ONNX_SEQUENCES_H_
