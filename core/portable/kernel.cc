// SPDX-License-Identifier: Apache-2.0
#include "kernel.h"

#include <cstdint>
#include <cstring>
#include <new>

#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::portable {

namespace {

const ir::Attribute* find_attribute(const ir::Node& node, std::string_view name) {
  if (node.attributes() == nullptr) return nullptr;
  for (const ir::Attribute* attribute : *node.attributes()) {
    if (attribute->name()->string_view() == name) return attribute;
  }
  return nullptr;
}

template <typename T>
std::vector<T> read_elements(const TensorInfo& info) {
  std::vector<T> values(static_cast<size_t>(info.num_elements()));
  if (!values.empty()) std::memcpy(values.data(), info.constant_data, values.size() * sizeof(T));
  return values;
}

}  // namespace

NodeContext::NodeContext(const ir::Node& node, int opset, std::vector<const TensorInfo*> inputs,
                         std::vector<const TensorInfo*> outputs)
    : node_(node), opset_(opset), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}

std::string_view NodeContext::op_type() const { return node_.op_type()->string_view(); }

std::string_view NodeContext::name() const {
  return node_.name() != nullptr ? node_.name()->string_view() : std::string_view();
}

bool NodeContext::has_attribute(std::string_view name) const { return find_attribute(node_, name) != nullptr; }

int64_t NodeContext::attr_int(std::string_view name, int64_t fallback) const {
  const ir::Attribute* attribute = find_attribute(node_, name);
  return attribute != nullptr && attribute->kind() == ir::AttributeKind::Int ? attribute->i() : fallback;
}

float NodeContext::attr_float(std::string_view name, float fallback) const {
  const ir::Attribute* attribute = find_attribute(node_, name);
  return attribute != nullptr && attribute->kind() == ir::AttributeKind::Float ? attribute->f() : fallback;
}

std::string NodeContext::attr_string(std::string_view name, std::string_view fallback) const {
  const ir::Attribute* attribute = find_attribute(node_, name);
  if (attribute != nullptr && attribute->kind() == ir::AttributeKind::String && attribute->s() != nullptr) {
    return attribute->s()->str();
  }
  return std::string(fallback);
}

std::vector<int64_t> NodeContext::attr_ints(std::string_view name) const {
  const ir::Attribute* attribute = find_attribute(node_, name);
  if (attribute == nullptr || attribute->kind() != ir::AttributeKind::Ints || attribute->ints() == nullptr) {
    return {};
  }
  return std::vector<int64_t>(attribute->ints()->begin(), attribute->ints()->end());
}

std::vector<float> NodeContext::attr_floats(std::string_view name) const {
  const ir::Attribute* attribute = find_attribute(node_, name);
  if (attribute == nullptr || attribute->kind() != ir::AttributeKind::Floats || attribute->floats() == nullptr) {
    return {};
  }
  return std::vector<float>(attribute->floats()->begin(), attribute->floats()->end());
}

const uint8_t* NodeContext::attr_graph(std::string_view name, size_t* size) const {
  const ir::Attribute* attribute = find_attribute(node_, name);
  *size = 0;
  if (attribute == nullptr || attribute->kind() != ir::AttributeKind::Graph || attribute->graph() == nullptr) {
    return nullptr;
  }
  *size = attribute->graph()->size();
  return attribute->graph()->data();
}

void NodeContext::want_values(size_t i) const {
  const TensorInfo* info = input(i);
  if (info != nullptr && info->constant_data == nullptr && i < 64) values_wanted_ |= uint64_t{1} << i;
}

const void* NodeContext::constant_data(size_t i) const {
  want_values(i);
  const TensorInfo* info = input(i);
  return info != nullptr ? info->constant_data : nullptr;
}

std::optional<std::vector<int64_t>> NodeContext::constant_ints(size_t i) const {
  want_values(i);
  const TensorInfo* info = input(i);
  if (info == nullptr || info->constant_data == nullptr) return std::nullopt;
  if (info->dtype == DType::kInt64) return read_elements<int64_t>(*info);
  if (info->dtype == DType::kInt32) {
    std::vector<int32_t> narrow = read_elements<int32_t>(*info);
    return std::vector<int64_t>(narrow.begin(), narrow.end());
  }
  return std::nullopt;
}

std::optional<std::vector<float>> NodeContext::constant_floats(size_t i) const {
  want_values(i);
  const TensorInfo* info = input(i);
  if (info == nullptr || info->constant_data == nullptr || info->dtype != DType::kFloat32) {
    return std::nullopt;
  }
  return read_elements<float>(*info);
}

std::unique_ptr<std::byte[]> allocate_aligned(size_t bytes, std::byte** aligned) {
  constexpr size_t kAlignment = 64;
  // Asked without throwing, then thrown here: a sanitizer's allocator ends the process on a
  // failed throwing new, but a program that asks for more than the machine has is input.
  if (bytes > SIZE_MAX - kAlignment) throw std::bad_alloc();
  std::unique_ptr<std::byte[]> storage(new (std::nothrow) std::byte[bytes + kAlignment]);
  if (storage == nullptr) throw std::bad_alloc();
  const auto address = reinterpret_cast<uintptr_t>(storage.get());
  *aligned = storage.get() + (kAlignment - address % kAlignment) % kAlignment;
  return storage;
}

Prepared prepare_error(const NodeContext& node, std::string why) {
  std::string message(node.op_type());
  if (!node.name().empty()) message += " '" + std::string(node.name()) + "'";
  return Prepared{nullptr, message + ": " + why};
}

std::string check_arity(const NodeContext& node, size_t min_inputs, size_t max_inputs, size_t min_outputs,
                        size_t max_outputs) {
  if (node.num_inputs() < min_inputs || node.num_inputs() > max_inputs) {
    return "takes " + std::to_string(min_inputs) +
           (max_inputs != min_inputs ? " to " + std::to_string(max_inputs) : std::string()) + " inputs, got " +
           std::to_string(node.num_inputs());
  }
  for (size_t i = 0; i < min_inputs; ++i) {
    if (node.input(i) == nullptr) return "input " + std::to_string(i) + " is required";
  }
  if (node.num_outputs() < min_outputs || node.num_outputs() > max_outputs) {
    return "has " + std::to_string(node.num_outputs()) + " outputs, expected " + std::to_string(min_outputs) +
           (max_outputs != min_outputs ? " to " + std::to_string(max_outputs) : std::string());
  }
  for (size_t i = 0; i < min_outputs; ++i) {
    if (node.output(i) == nullptr) return "output " + std::to_string(i) + " is required";
  }
  return {};
}

std::string check_dtype(const char* what, size_t index, const TensorInfo* info, DType dtype) {
  if (info == nullptr || info->dtype == dtype) return {};
  return std::string(what) + " " + std::to_string(index) + " is " + std::string(to_string(info->dtype)) +
         ", expected " + std::string(to_string(dtype));
}

std::string check_output(const NodeContext& node, size_t index, const Shape& expected, DType dtype) {
  const TensorInfo* output = node.output(index);
  if (output == nullptr) return "output " + std::to_string(index) + " is missing";
  if (output->dtype != dtype) return check_dtype("output", index, output, dtype);
  if (output->shape != expected) {
    return "output " + std::to_string(index) + " has shape " + to_string(output->shape) + ", but the inputs give " +
           to_string(expected);
  }
  return {};
}

}  // namespace plugrt::portable
