// SPDX-License-Identifier: Apache-2.0
// Sequences and optionals known at compile time, lowered to the tensors they hold.
// plugrt's programs compute tensors only.
// - A sequence whose length, elements and positions are all known when the model is
//   imported (built by SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase
//   and SplitToSequence of a tensor of static shape, read by SequenceAt, SequenceLength
//   and ConcatFromSequence) is a list of values, and each read is an ordinary node:
//   SequenceAt an Identity, SequenceLength a constant, ConcatFromSequence a Concat (of
//   Reshapes for new_axis), SplitToSequence Slices.
// - An optional built by Optional is its value or nothing: OptionalHasElement is a bool
//   constant (an If on it then folds, as TorchScript's `is None` tests export) and
//   OptionalGetElement an Identity (or the sequence it holds).
// Positions given at run time, and sequences or optionals that are graph inputs or
// outputs, or carried by Loop, If or SequenceMap, are refused.
#ifndef PLUGRT_TOOLS_COMPILER_ONNX_CONTAINERS_H_
#define PLUGRT_TOOLS_COMPILER_ONNX_CONTAINERS_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onnx_internal.h"

namespace plugrt::compiler::onnx_import {

class StaticContainers {
 public:
  /// The constants of the graph so far, and what is known of each value's type.
  using Constants = std::map<std::string, Tensor>;
  using TypeOf = std::function<ValueType(const std::string&)>;

  /// Whether `node` is one of the sequence or optional ops above (default domain).
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
  std::string optional(const onnx::NodeProto& node, const TypeOf& type_of, std::vector<onnx::NodeProto>* nodes,
                       std::vector<std::pair<std::string, Tensor>>* made);

  std::map<std::string, std::vector<std::string>> sequences_;  // name -> its elements' value names
  std::map<std::string, std::string> optionals_;               // name -> its value's name, "" when empty
};

}  // namespace plugrt::compiler::onnx_import

#endif  // PLUGRT_TOOLS_COMPILER_ONNX_CONTAINERS_H_
