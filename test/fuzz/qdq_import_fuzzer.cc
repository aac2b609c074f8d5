// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: ONNX models with QDQ groups through the importer, whose QDQ pass
// (tools/compiler/onnx_qdq.cc) turns DequantizeLinear -> Conv or MatMul ->
// QuantizeLinear into QLinearConv or QLinearMatMul. Must never crash, hang or exhaust
// memory: a bad model fails with kInvalidArgument or kNotSupported, and a model that
// imports gives a graph IR that the portable backend's checks accept (a fused group
// that the literal graph would not have computed is a bug of the pass).
//
// An input whose first byte is even is a model's bytes as they are (a serialised model
// starts with 0x08, ir_version's tag), so the corpus holds real models that libFuzzer
// mutates. An odd first byte builds a QDQ group from the bytes that follow with the onnx
// protobuf API: the op, the types, shapes and ranks of every scale and zero point, the
// axis, the bias and its scale, extra readers and graph outputs, so that mutations reach
// each of the pass's conditions. With PLUGRT_FUZZ_QDQ_DUMP=FILE set, the model built is
// also written there (how the corpus's model seeds were made).
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "onnx_importer.h"
#include "plugrt/builtin_backends.h"

namespace {

/// Reads choices from the fuzzer's bytes; zeros once they run out.
class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  /// A number in [0, n).
  int below(int n) { return byte() % n; }
  bool flag() { return byte() & 1; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

const int32_t kTypes[] = {onnx::TensorProto::UINT8, onnx::TensorProto::INT8, onnx::TensorProto::INT32,
                          onnx::TensorProto::FLOAT};

class Builder {
 public:
  explicit Builder(Choices choices) : c_(choices) {}
  onnx::ModelProto build();

 private:
  /// An initializer whose values come from the bytes; its float values (if float32).
  std::vector<float> initializer(const std::string& name, int32_t type, const std::vector<int64_t>& dims);
  /// A scale of a scalar or `count` elements, of float32 or (rarely) another type.
  std::vector<float> scale(const std::string& name, int64_t count);
  /// The bias's scale: drawn as the others, or x_scale * w_scale as a QDQ group has it.
  void bias_scale(const std::vector<float>& x_scale, const std::vector<float>& w_scale, int64_t count);
  /// A zero point of `type`, scalar or of `count` elements, values near zero.
  void zero_point(const std::string& name, int32_t type, int64_t count);
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output);
  void value_info(onnx::ValueInfoProto* info, const std::string& name, int32_t type, const std::vector<int64_t>& dims);
  int32_t type_8bit() { return c_.flag() ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8; }
  int32_t any_type() { return kTypes[c_.below(4)]; }
  /// Mostly `usual`, sometimes one element off or 1.
  int64_t count(int64_t usual) {
    const int which = c_.below(8);
    return which == 7 ? 1 : which == 6 ? usual + 1 : which == 5 ? std::max<int64_t>(usual - 1, 0) : usual;
  }

  Choices c_;
  onnx::ModelProto model_;
  onnx::GraphProto* graph_ = model_.mutable_graph();
};

std::vector<float> Builder::initializer(const std::string& name, int32_t type, const std::vector<int64_t>& dims) {
  std::vector<float> floats;
  onnx::TensorProto* t = graph_->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  int64_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= d;
  for (int64_t i = 0; i < n; ++i) {
    const int v = static_cast<int8_t>(c_.byte());
    if (type == onnx::TensorProto::FLOAT) floats.push_back(v == 0 ? 0.0f : 1.0f / static_cast<float>(v));
    if (type == onnx::TensorProto::FLOAT) t->add_float_data(floats.back());
    if (type == onnx::TensorProto::UINT8) t->add_int32_data(v & 0xff);
    if (type == onnx::TensorProto::INT8 || type == onnx::TensorProto::INT32) t->add_int32_data(v);
  }
  return floats;
}

std::vector<float> Builder::scale(const std::string& name, int64_t channels) {
  const int32_t type = c_.below(16) == 15 ? any_type() : onnx::TensorProto::FLOAT;
  return initializer(name, type, c_.flag() ? std::vector<int64_t>{count(channels)} : std::vector<int64_t>{});
}

void Builder::bias_scale(const std::vector<float>& x_scale, const std::vector<float>& w_scale, int64_t channels) {
  if (c_.flag() || x_scale.empty() || w_scale.empty()) {
    scale("bs", channels);
    return;
  }
  onnx::TensorProto* t = graph_->add_initializer();
  t->set_name("bs");
  t->set_data_type(onnx::TensorProto::FLOAT);
  if (w_scale.size() > 1) t->add_dims(static_cast<int64_t>(w_scale.size()));
  for (float w : w_scale) t->add_float_data(x_scale[0] * w);
}

void Builder::zero_point(const std::string& name, int32_t type, int64_t channels) {
  initializer(name, type, c_.flag() ? std::vector<int64_t>{count(channels)} : std::vector<int64_t>{});
}

onnx::NodeProto* Builder::node(const std::string& op, const std::vector<std::string>& inputs,
                               const std::string& output) {
  onnx::NodeProto* n = graph_->add_node();
  n->set_op_type(op);
  n->set_name(output + "_node");
  for (const std::string& input : inputs) n->add_input(input);
  n->add_output(output);
  return n;
}

void Builder::value_info(onnx::ValueInfoProto* info, const std::string& name, int32_t type,
                         const std::vector<int64_t>& dims) {
  info->set_name(name);
  onnx::TypeProto_Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(type);
  for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

/// x (float) -> QuantizeLinear -> DequantizeLinear -> Conv or MatMul (weights and bias
/// dequantized) -> QuantizeLinear -> [DequantizeLinear] -> output.
onnx::ModelProto Builder::build() {
  model_.set_ir_version(8);
  graph_->set_name("qdq");
  model_.add_opset_import()->set_version(13 + c_.below(7));
  const bool conv = c_.flag();
  const int64_t n = 1 + c_.below(2), channels = 1 + c_.below(4), out = 1 + c_.below(4), size = 1 + c_.below(4);
  const std::vector<int64_t> xs =
      conv ? std::vector<int64_t>{n, channels, size, size} : std::vector<int64_t>{n, channels};
  const std::vector<int64_t> ws =
      conv ? std::vector<int64_t>{out, channels, 1, 1} : std::vector<int64_t>{channels, out};
  const std::vector<int64_t> ys = conv ? std::vector<int64_t>{n, out, size, size} : std::vector<int64_t>{n, out};
  value_info(graph_->add_input(), "x", onnx::TensorProto::FLOAT, xs);
  const int32_t x_type = type_8bit(), w_type = c_.below(8) == 7 ? any_type() : onnx::TensorProto::INT8;
  const std::vector<float> x_scale = scale("xs", channels);
  zero_point("xz", c_.below(8) == 7 ? type_8bit() : x_type, channels);
  node("QuantizeLinear", {"x", "xs", "xz"}, "xq");
  node("DequantizeLinear", {"xq", "xs", c_.below(8) == 7 ? "" : "xz"}, "xd");
  initializer("wq", w_type, ws);
  const std::vector<float> w_scale = scale("ws", out);
  zero_point("wz", c_.below(8) == 7 ? any_type() : w_type, out);
  onnx::NodeProto* dqw = node("DequantizeLinear", {"wq", "ws", "wz"}, "wd");
  if (c_.flag()) {
    onnx::AttributeProto* axis = dqw->add_attribute();
    axis->set_name("axis"), axis->set_type(onnx::AttributeProto::INT), axis->set_i(c_.below(6) - 2);
  }
  std::vector<std::string> inputs = {"xd", "wd"};
  if (conv && c_.flag()) {
    initializer("bq", c_.below(8) == 7 ? any_type() : onnx::TensorProto::INT32, {count(out)});
    bias_scale(x_scale, w_scale, out);
    zero_point("bz", c_.below(8) == 7 ? any_type() : onnx::TensorProto::INT32, out);
    node("DequantizeLinear", {"bq", "bs", c_.flag() ? "bz" : ""}, "bd");
    inputs.push_back("bd");
  }
  node(conv ? "Conv" : "MatMul", inputs, "y");
  scale("ys", out);
  const int32_t y_type = type_8bit();
  zero_point("yz", y_type, out);
  node("QuantizeLinear", {"y", "ys", "yz"}, "yq");
  const int ending = c_.below(4);  // 0: yq is the output; 1: y too; 2: y read again
  if (ending == 1) value_info(graph_->add_output(), "y", onnx::TensorProto::FLOAT, ys);
  if (ending == 2) {
    node("Relu", {"y"}, "y_again");
    value_info(graph_->add_output(), "y_again", onnx::TensorProto::FLOAT, ys);
  }
  if (ending == 0) {
    value_info(graph_->add_output(), "yq", y_type, ys);
  } else {
    node("DequantizeLinear", {"yq", "ys", "yz"}, "out");
    value_info(graph_->add_output(), "out", onnx::TensorProto::FLOAT, ys);
  }
  return model_;
}

bool expected_failure(plugrt::Error code) {
  return code == plugrt::Error::kInvalidArgument || code == plugrt::Error::kNotSupported ||
         code == plugrt::Error::kMemoryAllocationFailed;
}

/// Imports `bytes`: a refusal must be a clean one; what is accepted must verify.
void check_import(const std::string& bytes) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  plugrt::Result<plugrt::compiler::ImportedModel> model =
      plugrt::compiler::import_onnx_bytes(plugrt::Span<const uint8_t>(data, bytes.size()), "fuzz.onnx");
  if (!model.is_ok()) {
    if (!expected_failure(model.code())) std::abort();
    return;
  }
  const std::vector<uint8_t>& graph = model->graph;
  if (!plugrt::portable_node_support(plugrt::Span<const uint8_t>(graph.data(), graph.size())).is_ok()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if ((data[0] & 1) == 0) {
    check_import(std::string(reinterpret_cast<const char*>(data), size));
    return 0;
  }
  std::string bytes;
  Builder(Choices(data + 1, size - 1)).build().SerializeToString(&bytes);
  if (const char* dump = std::getenv("PLUGRT_FUZZ_QDQ_DUMP"); dump != nullptr) {
    std::ofstream(dump, std::ios::binary) << bytes;
  }
  check_import(bytes);
  return 0;
}
