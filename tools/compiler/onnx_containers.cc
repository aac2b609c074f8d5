// SPDX-License-Identifier: Apache-2.0
#include "onnx_containers.h"

#include <algorithm>
#include <numeric>

namespace plugrt::compiler::onnx_import {

namespace {

/// The int attribute `name`, or `fallback` (with `*present` false).
int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback, bool* present = nullptr) {
  const onnx::AttributeProto* attribute = find_attribute(node, name);
  if (present != nullptr) *present = attribute != nullptr;
  return attribute != nullptr ? attribute->i() : fallback;
}

/// The integers of the int32 or int64 constant `name` of rank 0 or 1, and its rank.
bool constant_ints(const StaticContainers::Constants& constants, const std::string& name, std::vector<int64_t>* values,
                   size_t* rank) {
  const auto found = constants.find(name);
  if (found == constants.end() || !tensor_ints(found->second, values)) return false;
  *rank = found->second.shape.size();
  return true;
}

const char kAtCompileTime[] =
    ": plugrt lowers sequences when the model is imported (bind such an input with "
    "--input-value)";

}  // namespace

bool StaticContainers::handles(const onnx::NodeProto& node) {
  static const char* const kOps[] = {"SequenceEmpty", "SequenceConstruct",  "SequenceInsert",     "SequenceErase",
                                     "SequenceAt",    "SequenceLength",     "ConcatFromSequence", "SplitToSequence",
                                     "Optional",      "OptionalHasElement", "OptionalGetElement"};
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  return std::find(std::begin(kOps), std::end(kOps), node.op_type()) != std::end(kOps);
}

std::string StaticContainers::elements_of(const std::string& name, const std::vector<std::string>** elements) const {
  const auto found = sequences_.find(name);
  *elements = found != sequences_.end() ? &found->second : nullptr;
  if (*elements != nullptr) return "";
  return "its sequence '" + name +
         "' is not one plugrt can lower (sequences that are graph inputs or come from Loop, If or SequenceMap are not "
         "supported)";
}

std::string StaticContainers::lower(const onnx::NodeProto& node, const Constants& constants, const TypeOf& type_of,
                                    std::vector<onnx::NodeProto>* nodes,
                                    std::vector<std::pair<std::string, Tensor>>* made) {
  const std::string& op = node.op_type();
  if (node.output_size() != 1 || node.output(0).empty()) return "it does not have exactly one output";
  const std::string& output = node.output(0);
  auto input = [&node](int k) { return k < node.input_size() ? node.input(k) : std::string(); };
  if (op == "SequenceEmpty") {
    sequences_[output] = {};
    return "";
  }
  if (op == "SequenceConstruct") {
    sequences_[output] = {node.input().begin(), node.input().end()};
    return "";
  }
  if (op == "SplitToSequence") return split(node, constants, type_of, nodes, made);
  if (op.rfind("Optional", 0) == 0) return optional(node, type_of, nodes, made);
  const std::vector<std::string>* elements = nullptr;
  if (std::string why = elements_of(input(0), &elements); !why.empty()) return why;
  const auto n = static_cast<int64_t>(elements->size());
  if (op == "SequenceLength") {
    made->emplace_back(output, int64_tensor({n}, {}));
    return "";
  }
  if (op == "ConcatFromSequence") return concat(node, *elements, type_of, nodes, made);
  // SequenceInsert (at the end by default), SequenceErase (the last by default), SequenceAt.
  const bool insert = op == "SequenceInsert";
  const std::string position_name = input(insert ? 2 : 1);
  int64_t position = insert ? n : n - 1;
  if (!position_name.empty()) {
    std::vector<int64_t> values;
    size_t rank = 0;
    if (!constant_ints(constants, position_name, &values, &rank) || values.size() != 1) {
      return "its position '" + position_name + "' is not a constant integer" + kAtCompileTime;
    }
    position = values[0];
  } else if (op == "SequenceAt") {
    return "it has no position";
  }
  const int64_t highest = insert ? n : n - 1;
  if (position < -n || position > highest) {
    return "position " + std::to_string(position) + " is outside its sequence of " + std::to_string(n) + " tensors";
  }
  if (position < 0) position += n;
  std::vector<std::string> result = *elements;
  if (insert) {
    if (input(1).empty()) return "it inserts no tensor";
    result.insert(result.begin() + position, input(1));
  } else if (op == "SequenceErase") {
    result.erase(result.begin() + position);
  } else {  // SequenceAt
    nodes->push_back(make_node("Identity", {result[static_cast<size_t>(position)]}, {output}, node.name()));
    return "";
  }
  sequences_[output] = std::move(result);
  return "";
}

std::string StaticContainers::optional(const onnx::NodeProto& node, const TypeOf& type_of,
                                       std::vector<onnx::NodeProto>* nodes,
                                       std::vector<std::pair<std::string, Tensor>>* made) {
  const std::string& op = node.op_type();
  const std::string& output = node.output(0);
  const std::string value = node.input_size() > 0 ? node.input(0) : std::string();
  if (op == "Optional") {
    optionals_[output] = value;
    return "";
  }
  // From opset 18 the input may be a tensor or a sequence too (present), or absent.
  const auto found = optionals_.find(value);
  const std::string held = found != optionals_.end() ? found->second : value;
  if (found == optionals_.end() && sequences_.count(value) == 0 && type_of(value).non_tensor) {
    return "its optional '" + value +
           "' is not one plugrt can lower (optionals that are graph inputs or come from "
           "Loop or If are not supported)";
  }
  if (op == "OptionalHasElement") {
    Tensor present;
    present.dtype = DType::kBool;
    present.bytes = {static_cast<uint8_t>(held.empty() ? 0 : 1)};
    made->emplace_back(output, std::move(present));
    return "";
  }
  // OptionalGetElement
  if (held.empty()) return "its optional '" + value + "' is empty";
  if (const auto sequence = sequences_.find(held); sequence != sequences_.end()) {
    sequences_[output] = sequence->second;
    return "";
  }
  nodes->push_back(make_node("Identity", {held}, {output}, node.name()));
  return "";
}

std::string StaticContainers::split(const onnx::NodeProto& node, const Constants& constants, const TypeOf& type_of,
                                    std::vector<onnx::NodeProto>* nodes,
                                    std::vector<std::pair<std::string, Tensor>>* made) {
  const std::string& x = node.input(0);
  const std::string& output = node.output(0);
  const ValueType type = type_of(x);
  if (!type.is_static()) return "its input '" + x + "' has no static shape (give it with --input-shape)";
  const auto rank = static_cast<int64_t>(type.dims.size());
  int64_t axis = int_attribute(node, "axis", 0);
  if (axis < -rank || axis >= rank) return "its axis " + std::to_string(axis) + " is outside the input's rank";
  if (axis < 0) axis += rank;
  const int64_t length = type.dims[static_cast<size_t>(axis)];
  bool keepdims = int_attribute(node, "keepdims", 1) != 0;
  std::vector<int64_t> sizes(static_cast<size_t>(length), 1);
  if (node.input_size() > 1 && !node.input(1).empty()) {
    std::vector<int64_t> split;
    size_t split_rank = 0;
    if (!constant_ints(constants, node.input(1), &split, &split_rank)) {
      return "its split '" + node.input(1) + "' is not a constant integer scalar or list" + kAtCompileTime;
    }
    keepdims = true;        // ONNX ignores keepdims when split is given
    if (split_rank == 0) {  // chunks of split[0], the last one shorter
      if (split.size() != 1 || split[0] < 1) return "its split is not a positive integer";
      sizes.clear();
      for (int64_t begin = 0; begin < length; begin += split[0]) sizes.push_back(std::min(split[0], length - begin));
    } else {
      const bool valid = std::all_of(split.begin(), split.end(), [](int64_t s) { return s >= 0; });
      if (!valid || std::accumulate(split.begin(), split.end(), int64_t{0}) != length) {
        return "its split does not add up to the input's length " + std::to_string(length) + " along the axis";
      }
      sizes = split;
    }
  }
  std::vector<int64_t> squeezed = type.dims;
  squeezed.erase(squeezed.begin() + axis);
  std::vector<std::string> elements;
  int64_t begin = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string element = output + "/" + std::to_string(i);
    const std::string sliced = keepdims ? element : element + "/slice";
    made->emplace_back(element + "/starts", int64_tensor({begin}, {1}));
    made->emplace_back(element + "/ends", int64_tensor({begin + sizes[i]}, {1}));
    made->emplace_back(element + "/axes", int64_tensor({axis}, {1}));
    nodes->push_back(make_node("Slice", {x, element + "/starts", element + "/ends", element + "/axes"}, {sliced},
                               node.name() + "/slice_" + std::to_string(i)));
    if (!keepdims) {
      made->emplace_back(element + "/shape", int64_tensor(squeezed, {static_cast<int64_t>(squeezed.size())}));
      nodes->push_back(
          make_node("Reshape", {sliced, element + "/shape"}, {element}, node.name() + "/squeeze_" + std::to_string(i)));
    }
    elements.push_back(element);
    begin += sizes[i];
  }
  sequences_[output] = std::move(elements);
  return "";
}

std::string StaticContainers::concat(const onnx::NodeProto& node, const std::vector<std::string>& elements,
                                     const TypeOf& type_of, std::vector<onnx::NodeProto>* nodes,
                                     std::vector<std::pair<std::string, Tensor>>* made) const {
  if (elements.empty()) return "its sequence is empty (ConcatFromSequence needs a tensor)";
  bool has_axis = false;
  int64_t axis = int_attribute(node, "axis", 0, &has_axis);
  if (!has_axis) return "it has no axis";
  const bool new_axis = int_attribute(node, "new_axis", 0) != 0;
  const ValueType first = type_of(elements[0]);
  if (!first.has_shape) return "the rank of '" + elements[0] + "' is not known";
  const auto rank = static_cast<int64_t>(first.dims.size()) + (new_axis ? 1 : 0);
  if (axis < -rank || axis >= rank) return "its axis " + std::to_string(axis) + " is outside the elements' rank";
  if (axis < 0) axis += rank;
  std::vector<std::string> inputs = elements;
  if (new_axis) {  // each element with a dimension of 1 inserted at the axis
    for (size_t i = 0; i < elements.size(); ++i) {
      const ValueType type = type_of(elements[i]);
      if (!type.is_static()) return "the shape of '" + elements[i] + "' is not static (give it with --input-shape)";
      std::vector<int64_t> shape = type.dims;
      shape.insert(shape.begin() + std::min<int64_t>(axis, static_cast<int64_t>(shape.size())), 1);
      inputs[i] = node.output(0) + "/" + std::to_string(i);
      made->emplace_back(inputs[i] + "/shape", int64_tensor(shape, {static_cast<int64_t>(shape.size())}));
      nodes->push_back(make_node("Reshape", {elements[i], inputs[i] + "/shape"}, {inputs[i]},
                                 node.name() + "/unsqueeze_" + std::to_string(i)));
    }
  }
  nodes->push_back(make_node("Concat", inputs, {node.output(0)}, node.name()));
  set_int_attribute(&nodes->back(), "axis", axis);
  return "";
}

}  // namespace plugrt::compiler::onnx_import
