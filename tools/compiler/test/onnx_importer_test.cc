// SPDX-License-Identifier: Apache-2.0
// The ONNX importer: small ModelProtos built here with the onnx protobuf API, and real
// files from Debian's libonnx-testdata, checked through the graph IR reader and run on
// the built-in portable backend.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "onnx_importer.h"
#include "plugrt/backend.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/common/dim_expr.h"
#include "plugrt/dtype.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::compiler {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// ---- Building models ------------------------------------------------------------

onnx::ModelProto make_model(int64_t opset = 13) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("plugrt-test");
  model.set_producer_version("1.0");
  onnx::OperatorSetIdProto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  model.mutable_graph()->set_name("test");
  return model;
}

/// A tensor value description; a negative dimension becomes the symbol "N".
void describe(onnx::ValueInfoProto* info, const std::string& name, int32_t elem_type,
              const std::vector<int64_t>* dims) {
  info->set_name(name);
  onnx::TypeProto::Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  if (dims == nullptr) return;
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t d : *dims) {
    if (d >= 0) {
      shape->add_dim()->set_dim_value(d);
    } else {
      shape->add_dim()->set_dim_param("N");
    }
  }
}

void add_input(onnx::ModelProto& model, const std::string& name, std::vector<int64_t> dims,
               int32_t elem_type = onnx::TensorProto::FLOAT) {
  describe(model.mutable_graph()->add_input(), name, elem_type, &dims);
}

/// A graph output; the checker wants a shape, so give at least the rank (negative
/// dimensions are symbols that inference replaces).
void add_output(onnx::ModelProto& model, const std::string& name, std::vector<int64_t> dims,
                int32_t elem_type = onnx::TensorProto::FLOAT) {
  describe(model.mutable_graph()->add_output(), name, elem_type, &dims);
}

onnx::NodeProto* add_node(onnx::ModelProto& model, const std::string& op_type, const std::string& name,
                          std::vector<std::string> inputs, std::vector<std::string> outputs) {
  onnx::NodeProto* node = model.mutable_graph()->add_node();
  node->set_op_type(op_type);
  node->set_name(name);
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  return node;
}

void set_int(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void set_ints(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

/// A float initializer in float_data.
void add_float_initializer(onnx::ModelProto& model, const std::string& name, std::vector<int64_t> dims,
                           const std::vector<float>& values) {
  onnx::TensorProto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

/// An int64 initializer in raw_data.
void add_int64_initializer(onnx::ModelProto& model, const std::string& name, std::vector<int64_t> dims,
                           const std::vector<int64_t>& values) {
  onnx::TensorProto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t)));
}

/// A Constant node holding an int64 tensor.
void add_int64_constant(onnx::ModelProto& model, const std::string& output, std::vector<int64_t> dims,
                        const std::vector<int64_t>& values) {
  onnx::NodeProto* node = add_node(model, "Constant", output + "_node", {}, {output});
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

std::string serialize(const onnx::ModelProto& model) {
  std::string bytes;
  EXPECT_TRUE(model.SerializeToString(&bytes));
  return bytes;
}

Result<ImportedModel> import_model(const onnx::ModelProto& model, const ImportOptions& options = {}) {
  const std::string bytes = serialize(model);
  return import_onnx_bytes(Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                           "test.onnx", options);
}

// ---- Reading the graph IR ----------------------------------------------------------

const ir::Graph& graph_of(const ImportedModel& model) {
  flatbuffers::Verifier verifier(model.graph.data(), model.graph.size());
  EXPECT_TRUE(ir::VerifyGraphBuffer(verifier));
  return *ir::GetGraph(model.graph.data());
}

std::vector<std::string> op_types(const ir::Graph& graph) {
  std::vector<std::string> ops;
  if (graph.nodes() != nullptr) {
    for (const ir::Node* node : *graph.nodes()) ops.push_back(node->op_type()->str());
  }
  return ops;
}

const ir::Value& value_at(const ir::Graph& graph, int32_t index) {
  return *graph.values()->Get(static_cast<flatbuffers::uoffset_t>(index));
}

std::string value_name(const ir::Graph& graph, int32_t index) { return value_at(graph, index).name()->str(); }

std::vector<int64_t> value_shape(const ir::Graph& graph, int32_t index) {
  const auto* shape = value_at(graph, index).shape();
  return shape != nullptr ? std::vector<int64_t>(shape->begin(), shape->end()) : std::vector<int64_t>{};
}

const ir::Node* find_node(const ir::Graph& graph, const std::string& op_type) {
  for (const ir::Node* node : *graph.nodes()) {
    if (node->op_type()->str() == op_type) return node;
  }
  return nullptr;
}

const ir::Attribute* find_attribute(const ir::Node& node, const std::string& name) {
  if (node.attributes() == nullptr) return nullptr;
  for (const ir::Attribute* a : *node.attributes()) {
    if (a->name()->str() == name) return a;
  }
  return nullptr;
}

template <typename T>
std::vector<T> constant_values(const ir::Graph& graph, int32_t index) {
  const auto* data = value_at(graph, index).data();
  std::vector<T> values(data != nullptr ? data->size() / sizeof(T) : 0);
  if (!values.empty()) std::memcpy(values.data(), data->data(), values.size() * sizeof(T));
  return values;
}

// ---- Running on the portable backend --------------------------------------------------

struct HostTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

HostTensor float_tensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  HostTensor t;
  t.shape = std::move(shape);
  t.bytes.resize(values.size() * sizeof(float));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

std::vector<float> floats_of(const HostTensor& t) {
  std::vector<float> values(t.bytes.size() / sizeof(float));
  if (!values.empty()) std::memcpy(values.data(), t.bytes.data(), t.bytes.size());
  return values;
}

DLTensor as_dltensor(HostTensor& t) {
  static uint8_t empty = 0;
  DLTensor d{};
  d.data = t.bytes.empty() ? &empty : t.bytes.data();
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = static_cast<int32_t>(t.shape.size());
  d.dtype = to_dlpack(t.dtype);
  d.shape = t.shape.data();
  return d;
}

/// Runs the imported graph on the built-in portable backend; the outputs in graph order,
/// of the graph's shapes or, where its dimensions vary, of `output_shapes`.
std::vector<HostTensor> run_portable(const ImportedModel& model, std::vector<HostTensor> inputs,
                                     const std::vector<std::vector<int64_t>>& output_shapes = {}) {
  const ir::Graph& graph = graph_of(model);
  std::vector<HostTensor> outputs;
  for (int32_t v : *graph.outputs()) {
    HostTensor t;
    t.dtype = static_cast<DType>(value_at(graph, v).dtype());
    t.shape = outputs.size() < output_shapes.size() ? output_shapes[outputs.size()] : value_shape(graph, v);
    size_t count = 1;
    for (int64_t d : t.shape) count *= static_cast<size_t>(d);
    t.bytes.resize(count * dtype_size(t.dtype));
    outputs.push_back(std::move(t));
  }
  InitOptions options;
  options.blob = model.graph.data();
  options.blob_size = model.graph.size();
  Result<DelegateHandle> handle = builtin_portable_backend().init(options);
  EXPECT_TRUE(handle.is_ok()) << handle.status().to_string();
  if (!handle.is_ok()) return {};
  std::vector<DLTensor> in(inputs.size()), out(outputs.size());
  std::vector<const DLTensor*> in_ptrs, out_ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in[i] = as_dltensor(inputs[i]);
    in_ptrs.push_back(&in[i]);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    out[i] = as_dltensor(outputs[i]);
    out_ptrs.push_back(&out[i]);
  }
  Status status = handle->execute(Span<const DLTensor* const>(in_ptrs.data(), in_ptrs.size()),
                                  Span<const DLTensor* const>(out_ptrs.data(), out_ptrs.size()));
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return outputs;
}

// ---- Models built here -------------------------------------------------------------

TEST(OnnxImporter, ConvReluWithInitializers) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {1, 1, 5, 5});
  add_float_initializer(model, "W", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  onnx::TensorProto* bias = model.mutable_graph()->add_initializer();  // raw_data
  bias->set_name("B");
  bias->set_data_type(onnx::TensorProto::FLOAT);
  bias->add_dims(1);
  const float half = 0.5f;
  bias->set_raw_data(std::string(reinterpret_cast<const char*>(&half), sizeof(half)));
  onnx::NodeProto* conv = add_node(model, "Conv", "conv1", {"x", "W", "B"}, {"c"});
  set_ints(conv, "pads", {1, 1, 1, 1});
  set_ints(conv, "kernel_shape", {3, 3});
  add_node(model, "Relu", "relu1", {"c"}, {"y"});
  add_output(model, "y", {-1, -1, -1, -1});

  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_EQ(imported->opset, 13);
  EXPECT_EQ(imported->producer, "plugrt-test 1.0");
  EXPECT_EQ(imported->folded_nodes, 0u);
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_EQ(graph.opset(), 13);
  EXPECT_THAT(op_types(graph), ElementsAre("Conv", "Relu"));
  ASSERT_EQ(graph.inputs()->size(), 1u);
  EXPECT_EQ(value_name(graph, graph.inputs()->Get(0)), "x");
  ASSERT_EQ(graph.outputs()->size(), 1u);
  const int32_t y = graph.outputs()->Get(0);
  EXPECT_EQ(value_name(graph, y), "y");
  EXPECT_THAT(value_shape(graph, y), ElementsAre(1, 1, 5, 5));
  const ir::Node* conv_node = graph.nodes()->Get(0);
  EXPECT_EQ(conv_node->name()->str(), "conv1");
  ASSERT_EQ(conv_node->inputs()->size(), 3u);
  const int32_t w = conv_node->inputs()->Get(1);
  EXPECT_EQ(value_name(graph, w), "W");
  EXPECT_EQ(static_cast<int32_t>(value_at(graph, w).dtype()), static_cast<int32_t>(DType::kFloat32));
  EXPECT_EQ(constant_values<float>(graph, w), std::vector<float>(9, 1.0f));
  EXPECT_EQ(constant_values<float>(graph, conv_node->inputs()->Get(2)), std::vector<float>{0.5f});
  const ir::Attribute* pads = find_attribute(*conv_node, "pads");
  ASSERT_NE(pads, nullptr);
  EXPECT_THAT(std::vector<int64_t>(pads->ints()->begin(), pads->ints()->end()), ElementsAre(1, 1, 1, 1));

  // All ones through a 3x3 kernel of ones, padded: 4 at corners, 6 on edges, 9 inside.
  std::vector<HostTensor> outputs = run_portable(*imported, {float_tensor({1, 1, 5, 5}, std::vector<float>(25, 1.0f))});
  ASSERT_EQ(outputs.size(), 1u);
  const std::vector<float> result = floats_of(outputs[0]);
  ASSERT_EQ(result.size(), 25u);
  EXPECT_FLOAT_EQ(result[0], 4.5f);
  EXPECT_FLOAT_EQ(result[1], 6.5f);
  EXPECT_FLOAT_EQ(result[12], 9.5f);
  EXPECT_FLOAT_EQ(result[24], 4.5f);
}

/// A uint8 scalar initializer.
void add_uint8_initializer(onnx::ModelProto& model, const std::string& name, uint8_t value) {
  onnx::TensorProto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::UINT8);
  t->set_raw_data(std::string(1, static_cast<char>(value)));
}

/// QLinearAdd (com.microsoft) of uint8 a [2, 3] and b [3], then QLinearGlobalAveragePool
/// of x [1, 2, 3, 3]: ONNX has no schema for them, so the importer types them itself.
onnx::ModelProto contrib_model(const std::string& second_op) {
  onnx::ModelProto model = make_model(13);
  onnx::OperatorSetIdProto* import = model.add_opset_import();
  import->set_domain("com.microsoft");
  import->set_version(1);
  add_input(model, "a", {2, 3}, onnx::TensorProto::UINT8);
  add_input(model, "b", {3}, onnx::TensorProto::UINT8);
  add_input(model, "x", {1, 2, 3, 3}, onnx::TensorProto::UINT8);
  add_float_initializer(model, "s", {}, {0.5f});
  add_uint8_initializer(model, "z", 128);
  add_node(model, "QLinearAdd", "add", {"a", "s", "z", "b", "s", "z", "s", "z"}, {"y"})->set_domain("com.microsoft");
  add_node(model, second_op, "pool", {"x", "s", "z", "s", "z"}, {"p"})->set_domain("com.microsoft");
  add_output(model, "y", {-1, -1}, onnx::TensorProto::UINT8);
  add_output(model, "p", {-1, -1, -1, -1}, onnx::TensorProto::UINT8);
  return model;
}

TEST(OnnxImporter, TakesTheComMicrosoftQLinearOpsOfOnnxRuntimesQuantizer) {
  Result<ImportedModel> imported = import_model(contrib_model("QLinearGlobalAveragePool"));
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("com.microsoft.QLinearAdd", "com.microsoft.QLinearGlobalAveragePool"));
  EXPECT_THAT(value_shape(graph, graph.outputs()->Get(0)), ElementsAre(2, 3));
  EXPECT_EQ(static_cast<int32_t>(value_at(graph, graph.outputs()->Get(0)).dtype()),
            static_cast<int32_t>(DType::kUInt8));
  EXPECT_THAT(value_shape(graph, graph.outputs()->Get(1)), ElementsAre(1, 2, 1, 1));

  Result<ImportedModel> refused = import_model(contrib_model("QLinearAveragePool"));
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.code(), Error::kNotSupported);
  EXPECT_THAT(refused.status().message(), HasSubstr("domain 'com.microsoft' is not supported"));
}

/// An initializer of raw little-endian bytes.
void add_raw_initializer(onnx::ModelProto& model, const std::string& name, int32_t type, std::vector<int64_t> dims,
                         const std::string& bytes) {
  onnx::TensorProto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(bytes);
}

/// x [1, 2, 5, 5] float -> QuantizeLinear -> DequantizeLinear -> Conv (weights int8
/// [3, 2, 3, 3] dequantized per output channel, an int32 bias dequantized by
/// `bias_scale` x the weights' scales) -> QuantizeLinear -> DequantizeLinear: a QDQ
/// convolution as ONNX Runtime's static quantizer writes it.
onnx::ModelProto qdq_conv_model(float bias_scale) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {1, 2, 5, 5}, onnx::TensorProto::FLOAT);
  add_float_initializer(model, "xs", {}, {0.5f});
  add_uint8_initializer(model, "xz", 128);
  const std::vector<float> w_scales = {0.25f, 0.125f, 0.5f};
  add_float_initializer(model, "ws", {3}, w_scales);
  add_raw_initializer(model, "wq", onnx::TensorProto::INT8, {3, 2, 3, 3}, std::string(54, '\x02'));
  add_raw_initializer(model, "wz", onnx::TensorProto::INT8, {3}, std::string(3, '\0'));
  std::vector<float> b_scales;
  for (float w : w_scales) b_scales.push_back(bias_scale * w);
  add_float_initializer(model, "bs", {3}, b_scales);
  const int32_t bias[3] = {10, -20, 30};
  add_raw_initializer(model, "bq", onnx::TensorProto::INT32, {3}, std::string(reinterpret_cast<const char*>(bias), 12));
  add_raw_initializer(model, "bz", onnx::TensorProto::INT32, {3}, std::string(12, '\0'));
  add_float_initializer(model, "ys", {}, {0.75f});
  add_uint8_initializer(model, "yz", 100);
  add_node(model, "QuantizeLinear", "qx", {"x", "xs", "xz"}, {"x_q"});
  add_node(model, "DequantizeLinear", "dqx", {"x_q", "xs", "xz"}, {"x_dq"});
  set_int(add_node(model, "DequantizeLinear", "dqw", {"wq", "ws", "wz"}, {"w_dq"}), "axis", 0);
  set_int(add_node(model, "DequantizeLinear", "dqb", {"bq", "bs", "bz"}, {"b_dq"}), "axis", 0);
  set_ints(add_node(model, "Conv", "conv", {"x_dq", "w_dq", "b_dq"}, {"y"}), "pads", {1, 1, 1, 1});
  add_node(model, "QuantizeLinear", "qy", {"y", "ys", "yz"}, {"y_q"});
  add_node(model, "DequantizeLinear", "dqy", {"y_q", "ys", "yz"}, {"out"});
  add_output(model, "out", {1, 3, 5, 5}, onnx::TensorProto::FLOAT);
  return model;
}

TEST(OnnxImporter, TurnsAQdqConvolutionIntoQLinearConv) {
  Result<ImportedModel> imported = import_model(qdq_conv_model(0.5f));
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("QuantizeLinear", "QLinearConv", "DequantizeLinear"));
  // x = 1 quantizes to 130 (2 above the zero point); each output sums 2 * 2 over the
  // taps inside the image, plus the bias: the centre of channel 0 is
  // (18 taps * 4 + 10) * 0.5 * 0.25 / 0.75 = 13.67 -> 14 above 100, i.e. 10.5.
  std::vector<HostTensor> outputs = run_portable(*imported, {float_tensor({1, 2, 5, 5}, std::vector<float>(50, 1.0f))});
  ASSERT_EQ(outputs.size(), 1u);
  const std::vector<float> result = floats_of(outputs[0]);
  ASSERT_EQ(result.size(), 75u);
  EXPECT_FLOAT_EQ(result[12], 10.5f);
}

TEST(OnnxImporter, KeepsAQdqConvolutionWhoseBiasScaleIsNotTheProduct) {
  // The bias dequantized by another scale than x_scale * w_scale: the integer bias is
  // not the group's, so the group stays as written (and the weights fold to float32).
  Result<ImportedModel> imported = import_model(qdq_conv_model(0.25f));
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_THAT(op_types(graph_of(*imported)),
              ElementsAre("QuantizeLinear", "DequantizeLinear", "Conv", "QuantizeLinear", "DequantizeLinear"));
}

// Found by the ONNX importer fuzzer (test/fuzz/corpus/onnx_importer): ONNX 1.12's
// inference of LayerNormalization on a scalar, with its Mean output, indexed dimension -1.
TEST(OnnxImporter, RefusesLayerNormalizationOfAScalar) {
  std::ifstream in(PLUGRT_FUZZ_CORPUS_DIR "/onnx_importer/crash-layernorm-scalar-input.onnx", std::ios::binary);
  ASSERT_TRUE(in.good());
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<ImportedModel> model = import_onnx_bytes(Span<const uint8_t>(bytes.data(), bytes.size()), "model.onnx");
  ASSERT_FALSE(model.is_ok());
  EXPECT_EQ(model.code(), Error::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("(LayerNormalization"));
  EXPECT_THAT(model.status().message(), HasSubstr("has rank 0; at least 1 is needed"));
}

// Found by the QDQ import fuzzer (test/fuzz/corpus/qdq_import): a QDQ convolution with
// a bias whose weights' scale has no element. The pass compared the bias's scale with
// the weights' first scale, read past the empty one; such a group is not fused now.
TEST(OnnxImporter, KeepsAQdqConvolutionWhoseWeightScaleIsEmpty) {
  std::ifstream in(PLUGRT_FUZZ_CORPUS_DIR "/qdq_import/crash-qdq-empty-weight-scale-with-bias.onnx", std::ios::binary);
  ASSERT_TRUE(in.good());
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<ImportedModel> model = import_onnx_bytes(Span<const uint8_t>(bytes.data(), bytes.size()), "model.onnx");
  if (!model.is_ok()) {
    EXPECT_EQ(model.code(), Error::kInvalidArgument) << model.status().to_string();
    return;
  }
  EXPECT_THAT(op_types(graph_of(*model)), Not(Contains("QLinearConv")));
}

/// The QDQ convolution of qdq_conv_model, its weights' scale per channel with a scale
/// more (or fewer) than the weights' output channels, or its zero point per tensor.
onnx::ModelProto qdq_conv_with_weight_scales(const std::vector<float>& scales, int64_t zero_points) {
  onnx::ModelProto model = qdq_conv_model(0.5f);
  onnx::GraphProto* graph = model.mutable_graph();
  for (onnx::TensorProto& t : *graph->mutable_initializer()) {
    if (t.name() == "ws") {
      t.clear_float_data(), t.clear_dims();
      t.add_dims(static_cast<int64_t>(scales.size()));
      for (float s : scales) t.add_float_data(s);
    }
    if (t.name() == "wz") {
      t.clear_dims();
      if (zero_points > 0) t.add_dims(zero_points);
      t.set_raw_data(std::string(static_cast<size_t>(std::max<int64_t>(zero_points, 1)), '\0'));
    }
  }
  // Without the bias, whose scale would no longer be the product.
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    if (node.op_type() == "Conv") node.mutable_input()->RemoveLast();
  }
  return model;
}

// The pass fuses only weights whose per-channel scale and zero point have one element per
// output channel: otherwise the group stays as written (and the importer judges it).
TEST(OnnxImporter, KeepsAQdqConvolutionWhoseWeightScalesAreNotOnePerChannel) {
  for (const auto& [scales, zero_points] : std::vector<std::pair<std::vector<float>, int64_t>>{
           {{0.25f, 0.125f, 0.5f, 0.5f}, 4}, {{0.25f, 0.125f}, 2}, {{0.25f, 0.125f, 0.5f}, 0}}) {
    Result<ImportedModel> imported = import_model(qdq_conv_with_weight_scales(scales, zero_points));
    if (!imported.is_ok()) continue;  // refused as it is: a DequantizeLinear of mismatched shapes
    EXPECT_THAT(op_types(graph_of(*imported)), Not(Contains("QLinearConv"))) << scales.size() << " scales";
  }
  Result<ImportedModel> fused = import_model(qdq_conv_with_weight_scales({0.25f, 0.125f, 0.5f}, 3));
  ASSERT_TRUE(fused.is_ok()) << fused.status().to_string();
  EXPECT_THAT(op_types(graph_of(*fused)), Contains("QLinearConv"));
}

// Found by the ONNX importer fuzzer: the Conv1d net with its second kernel grown to 14,
// longer than the input at the smallest length --dim allows. The length expression goes
// negative there, and the graph written used to fail the reader's own check.
TEST(OnnxImporter, RefusesADimensionThatMayBeNegativeWithinTheBounds) {
  std::ifstream in(PLUGRT_FUZZ_CORPUS_DIR "/onnx_importer/crash-conv-kernel-longer-than-the-shortest-input.onnx",
                   std::ios::binary);
  ASSERT_TRUE(in.good());
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ImportOptions options;
  options.dims["len"] = {1, 17};
  Result<ImportedModel> model =
      import_onnx_bytes(Span<const uint8_t>(bytes.data(), bytes.size()), "model.onnx", options);
  ASSERT_FALSE(model.is_ok());
  EXPECT_EQ(model.code(), Error::kNotSupported);
  EXPECT_THAT(model.status().message(), HasSubstr("output '/conv2/Conv_output_0' dimension 2"));
  EXPECT_THAT(model.status().message(), HasSubstr("may be as low as -4 within the symbols' bounds"));
  options.dims["len"] = {9, 17};  // long enough for the kernel
  EXPECT_TRUE(import_onnx_bytes(Span<const uint8_t>(bytes.data(), bytes.size()), "model.onnx", options).is_ok());
}

// Found by the ONNX importer fuzzer: a malformed model of an old opset crashed ONNX's
// version converter, which trusts its input; the checker now sees the model first.
TEST(OnnxImporter, RefusesAMalformedOldModelBeforeUpgradingIt) {
  std::ifstream in(PLUGRT_FUZZ_CORPUS_DIR "/onnx_importer/crash-version-converter-malformed-graph.onnx",
                   std::ios::binary);
  ASSERT_TRUE(in.good());
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<ImportedModel> model = import_onnx_bytes(Span<const uint8_t>(bytes.data(), bytes.size()), "model.onnx");
  ASSERT_FALSE(model.is_ok());
  EXPECT_EQ(model.code(), Error::kInvalidArgument) << model.status().to_string();
  EXPECT_THAT(model.status().message(), HasSubstr("the ONNX checker refuses the model"));
}

// Found by the ONNX importer fuzzer too: an old model whose output no node writes passes
// the checker but crashed the converter.
TEST(OnnxImporter, RefusesAnOldModelWithAnUndefinedOutputBeforeUpgradingIt) {
  onnx::ModelProto model = make_model(6);
  add_input(model, "x", {2});
  add_node(model, "Relu", "relu", {"x"}, {"y"});
  add_output(model, "z", {2});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_FALSE(imported.is_ok());
  EXPECT_EQ(imported.code(), Error::kInvalidArgument);
  EXPECT_THAT(imported.status().message(), HasSubstr("'z' is used but no input, initializer or node defines it"));
}

TEST(OnnxImporter, AttributeDefaultsAreFilled) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {1, 2, 4, 4});
  add_float_initializer(model, "W", {2, 2, 1, 1}, {1, 0, 0, 1});
  add_node(model, "Conv", "conv", {"x", "W"}, {"c"});
  add_node(model, "LeakyRelu", "leaky", {"c"}, {"y"});
  add_output(model, "y", {1, 2, 4, 4});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);

  const ir::Node* conv = find_node(graph, "Conv");
  ASSERT_NE(conv, nullptr);
  const ir::Attribute* group = find_attribute(*conv, "group");
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->kind(), ir::AttributeKind::Int);
  EXPECT_EQ(group->i(), 1);
  const ir::Attribute* auto_pad = find_attribute(*conv, "auto_pad");
  ASSERT_NE(auto_pad, nullptr);
  EXPECT_EQ(auto_pad->kind(), ir::AttributeKind::String);
  EXPECT_EQ(auto_pad->s()->str(), "NOTSET");
  // Attributes without a schema default stay absent (the kernel derives them).
  EXPECT_EQ(find_attribute(*conv, "kernel_shape"), nullptr);
  EXPECT_EQ(find_attribute(*conv, "strides"), nullptr);

  const ir::Node* leaky = find_node(graph, "LeakyRelu");
  ASSERT_NE(leaky, nullptr);
  const ir::Attribute* alpha = find_attribute(*leaky, "alpha");
  ASSERT_NE(alpha, nullptr);
  EXPECT_EQ(alpha->kind(), ir::AttributeKind::Float);
  EXPECT_FLOAT_EQ(alpha->f(), 0.01f);
}

/// PyTorch's flatten export: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
TEST(OnnxImporter, FoldsShapeSubgraphIntoOneReshape) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2, 3, 4, 5});
  add_node(model, "Shape", "shape", {"x"}, {"s"});
  add_int64_constant(model, "zero", {}, {0});
  onnx::NodeProto* gather = add_node(model, "Gather", "gather", {"s", "zero"}, {"batch"});
  set_int(gather, "axis", 0);
  add_int64_initializer(model, "axes", {1}, {0});
  add_node(model, "Unsqueeze", "unsqueeze", {"batch", "axes"}, {"batch1"});
  add_int64_initializer(model, "minus_one", {1}, {-1});
  onnx::NodeProto* concat = add_node(model, "Concat", "concat", {"batch1", "minus_one"}, {"target"});
  set_int(concat, "axis", 0);
  add_node(model, "Reshape", "reshape", {"x", "target"}, {"flat"});
  add_node(model, "Relu", "relu", {"flat"}, {"y"});
  add_output(model, "y", {-1, -1});

  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_EQ(imported->folded_nodes, 5u);  // the Constant, Shape, Gather, Unsqueeze, Concat
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("Reshape", "Relu"));
  const ir::Node* reshape = graph.nodes()->Get(0);
  const int32_t shape = reshape->inputs()->Get(1);
  EXPECT_NE(value_at(graph, shape).data(), nullptr);
  EXPECT_EQ(value_name(graph, shape), "target");
  EXPECT_THAT(constant_values<int64_t>(graph, shape), ElementsAre(2, -1));
  EXPECT_THAT(value_shape(graph, graph.outputs()->Get(0)), ElementsAre(2, 60));
  // The unused initializers are not written.
  for (const ir::Value* value : *graph.values()) {
    EXPECT_NE(value->name()->str(), "axes");
    EXPECT_NE(value->name()->str(), "minus_one");
  }
  std::vector<float> data(120);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) - 60.0f;
  std::vector<HostTensor> outputs = run_portable(*imported, {float_tensor({2, 3, 4, 5}, data)});
  ASSERT_EQ(outputs.size(), 1u);
  const std::vector<float> result = floats_of(outputs[0]);
  ASSERT_EQ(result.size(), 120u);
  EXPECT_FLOAT_EQ(result[0], 0.0f);
  EXPECT_FLOAT_EQ(result[119], 59.0f);
}

TEST(OnnxImporter, FoldsWeightTransposeAndConstantOfShape) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {1, 3});
  add_float_initializer(model, "W", {2, 3}, {1, 2, 3, 4, 5, 6});
  add_node(model, "Transpose", "transpose_w", {"W"}, {"Wt"});
  add_node(model, "MatMul", "matmul", {"x", "Wt"}, {"m"});
  // ConstantOfShape (computed by the importer itself) of a constant shape: zeros [1, 2].
  add_int64_initializer(model, "bias_shape", {2}, {1, 2});
  onnx::NodeProto* fill = add_node(model, "ConstantOfShape", "fill", {"bias_shape"}, {"bias"});
  onnx::AttributeProto* value = fill->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_float_data(0.25f);
  add_node(model, "Add", "add", {"m", "bias"}, {"y"});
  add_output(model, "y", {1, 2});

  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_EQ(imported->folded_nodes, 2u);
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("MatMul", "Add"));
  EXPECT_THAT(constant_values<float>(graph, graph.nodes()->Get(0)->inputs()->Get(1)), ElementsAre(1, 4, 2, 5, 3, 6));
  EXPECT_THAT(constant_values<float>(graph, graph.nodes()->Get(1)->inputs()->Get(1)), ElementsAre(0.25f, 0.25f));
  std::vector<HostTensor> outputs = run_portable(*imported, {float_tensor({1, 3}, {1, 1, 1})});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_THAT(floats_of(outputs[0]), ElementsAre(6.25f, 15.25f));
}

TEST(OnnxImporter, CarriesConstantOfShapesValueTensorAsTwoInts) {
  // The shape is fed, so the node stays for the portable kernel; its value (float32
  // 0.25) travels as value_dtype and value_bits.
  onnx::ModelProto model = make_model(13);
  add_input(model, "shape", {2}, onnx::TensorProto::INT64);
  onnx::NodeProto* fill = add_node(model, "ConstantOfShape", "fill", {"shape"}, {"y"});
  onnx::AttributeProto* value = fill->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_float_data(0.25f);
  add_output(model, "y", {2, 3});

  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  const ir::Node* node = find_node(graph, "ConstantOfShape");
  ASSERT_NE(node, nullptr);
  const ir::Attribute* dtype = find_attribute(*node, "value_dtype");
  const ir::Attribute* bits = find_attribute(*node, "value_bits");
  ASSERT_NE(dtype, nullptr);
  ASSERT_NE(bits, nullptr);
  EXPECT_EQ(dtype->i(), static_cast<int64_t>(DType::kFloat32));
  EXPECT_EQ(bits->i(), 0x3e800000);
  EXPECT_EQ(find_attribute(*node, "value"), nullptr);
}

TEST(OnnxImporter, TakesTheOptimizersOfTheTrainingDomainAlone) {
  // A model of one Adagrad that imports only ai.onnx.preview.training, as ONNX's tests.
  onnx::ModelProto model = make_model(13);
  model.clear_opset_import();
  onnx::OperatorSetIdProto* import = model.add_opset_import();
  import->set_domain("ai.onnx.preview.training");
  import->set_version(1);
  add_input(model, "R", {}, onnx::TensorProto::FLOAT);
  add_input(model, "T", {}, onnx::TensorProto::INT64);
  add_input(model, "X", {2});
  add_input(model, "G", {2});
  add_input(model, "H", {2});
  add_node(model, "Adagrad", "step", {"R", "T", "X", "G", "H"}, {"X_new", "H_new"})
      ->set_domain("ai.onnx.preview.training");
  add_output(model, "X_new", {2});
  add_output(model, "H_new", {2});

  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("ai.onnx.preview.training.Adagrad"));
  EXPECT_THAT(value_shape(graph, graph.outputs()->Get(1)), ElementsAre(2));

  // Another op of that domain is refused, naming what is taken.
  model.mutable_graph()->mutable_node(0)->set_op_type("Gradient");
  Result<ImportedModel> refused = import_model(model);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.code(), Error::kNotSupported);
}

TEST(OnnxImporter, RemovesIdentityNodes) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2, 2});
  add_float_initializer(model, "W", {2, 2}, {1, 2, 3, 4});
  add_node(model, "Identity", "weight_identity", {"W"}, {"W_copy"});
  add_node(model, "Relu", "relu", {"x"}, {"a"});
  add_node(model, "Identity", "identity", {"a"}, {"b"});
  add_node(model, "Add", "add", {"b", "W_copy"}, {"c"});
  add_node(model, "Identity", "to_output", {"c"}, {"y"});
  add_output(model, "y", {2, 2});

  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("Relu", "Add"));
  const ir::Node* add = graph.nodes()->Get(1);
  EXPECT_EQ(value_name(graph, add->inputs()->Get(0)), "a");
  EXPECT_EQ(value_name(graph, add->inputs()->Get(1)), "W");
  // The Add writes the graph output itself, under the output's name.
  EXPECT_EQ(add->outputs()->Get(0), graph.outputs()->Get(0));
  EXPECT_EQ(value_name(graph, graph.outputs()->Get(0)), "y");
  std::vector<HostTensor> outputs = run_portable(*imported, {float_tensor({2, 2}, {-1, 1, -1, 1})});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_THAT(floats_of(outputs[0]), ElementsAre(1, 3, 3, 5));
}

TEST(OnnxImporter, KeepsIdentityFromInputToOutput) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {3});
  add_node(model, "Identity", "copy", {"x"}, {"y"});
  add_output(model, "y", {3});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("Identity"));
  EXPECT_EQ(value_name(graph, graph.inputs()->Get(0)), "x");
  EXPECT_EQ(value_name(graph, graph.outputs()->Get(0)), "y");
  std::vector<HostTensor> outputs = run_portable(*imported, {float_tensor({3}, {1, 2, 3})});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_THAT(floats_of(outputs[0]), ElementsAre(1, 2, 3));
}

TEST(OnnxImporter, ConstantOutputIsWrittenByAnIdentity) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2});
  add_node(model, "Relu", "relu", {"x"}, {"y"});
  add_int64_constant(model, "k", {2}, {7, 8});
  add_output(model, "y", {2});
  add_output(model, "k", {2}, onnx::TensorProto::INT64);
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("Relu", "Identity"));
  ASSERT_EQ(graph.outputs()->size(), 2u);
  EXPECT_EQ(value_name(graph, graph.outputs()->Get(1)), "k");
  EXPECT_EQ(value_at(graph, graph.outputs()->Get(1)).data(), nullptr);
  EXPECT_THAT(constant_values<int64_t>(graph, graph.nodes()->Get(1)->inputs()->Get(0)), ElementsAre(7, 8));
}

TEST(OnnxImporter, SortsNodesAndDropsDeadOnes) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {4});
  add_node(model, "Sigmoid", "second", {"a"}, {"y"});
  add_node(model, "Relu", "first", {"x"}, {"a"});
  add_node(model, "Tanh", "dead", {"x"}, {"unused"});
  add_output(model, "y", {4});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("Relu", "Sigmoid"));
}

TEST(OnnxImporter, OptionalInputsAreAbsentValues) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {4});
  add_float_initializer(model, "hi", {}, {1.0f});
  add_node(model, "Clip", "clip", {"x", "", "hi"}, {"y"});
  add_output(model, "y", {4});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  const ir::Node* clip = graph.nodes()->Get(0);
  ASSERT_EQ(clip->inputs()->size(), 3u);
  EXPECT_EQ(clip->inputs()->Get(1), -1);
  std::vector<HostTensor> outputs = run_portable(*imported, {float_tensor({4}, {-2, 0.5f, 2, 3})});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_THAT(floats_of(outputs[0]), ElementsAre(-2, 0.5f, 1, 1));
}

TEST(OnnxImporter, RemovesInferenceDropout) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2, 2});
  add_float_initializer(model, "ratio", {}, {0.5f});
  add_node(model, "Dropout", "dropout", {"x", "ratio"}, {"d"});
  add_node(model, "Relu", "relu", {"d"}, {"y"});
  add_output(model, "y", {2, 2});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("Relu"));
  EXPECT_EQ(graph.nodes()->Get(0)->inputs()->Get(0), graph.inputs()->Get(0));
}

TEST(OnnxImporter, FoldsShapeAndRangeUpToAnOutput) {
  // Shape of a static input is a graph output: its value is a constant, copied out by
  // an Identity. Range (which the portable backend lacks) is computed by the importer.
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {3, 4});
  add_node(model, "Shape", "shape", {"x"}, {"s"});
  add_int64_initializer(model, "start", {}, {0});
  add_int64_initializer(model, "limit", {}, {4});
  add_int64_initializer(model, "delta", {}, {1});
  add_node(model, "Range", "range", {"start", "limit", "delta"}, {"r"});
  add_node(model, "Cast", "cast", {"r"}, {"rf"});
  set_int(model.mutable_graph()->mutable_node(2), "to", onnx::TensorProto::FLOAT);
  add_node(model, "Add", "add", {"x", "rf"}, {"y"});
  add_output(model, "s", {2}, onnx::TensorProto::INT64);
  add_output(model, "y", {3, 4});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_EQ(imported->folded_nodes, 3u);  // Shape, Range, Cast
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("Add", "Identity"));
  EXPECT_THAT(constant_values<float>(graph, graph.nodes()->Get(0)->inputs()->Get(1)), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(constant_values<int64_t>(graph, graph.nodes()->Get(1)->inputs()->Get(0)), ElementsAre(3, 4));
  std::vector<HostTensor> outputs = run_portable(*imported, {float_tensor({3, 4}, std::vector<float>(12, 1.0f))});
  ASSERT_EQ(outputs.size(), 2u);
  std::vector<int64_t> shape(2);
  std::memcpy(shape.data(), outputs[0].bytes.data(), 16);
  EXPECT_THAT(shape, ElementsAre(3, 4));
  EXPECT_THAT(floats_of(outputs[1]), ElementsAre(1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4));
}

TEST(OnnxImporter, InitializersListedAsInputsAreNotGraphInputs) {
  // IR version 3 models list every initializer among the graph inputs.
  onnx::ModelProto model = make_model(8);
  model.set_ir_version(3);
  add_input(model, "x", {2});
  add_input(model, "b", {2});
  add_float_initializer(model, "b", {2}, {1, 2});
  add_node(model, "Add", "add", {"x", "b"}, {"y"});
  add_output(model, "y", {2});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  ASSERT_EQ(graph.inputs()->size(), 1u);
  EXPECT_EQ(value_name(graph, graph.inputs()->Get(0)), "x");
  EXPECT_EQ(graph.opset(), 8);
}

TEST(OnnxImporter, RefusesDynamicIntermediate) {
  // A Reshape whose shape is a graph input: inference knows the rank only.
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2, 6});
  add_input(model, "shape", {2}, onnx::TensorProto::INT64);
  add_node(model, "Reshape", "reshape", {"x", "shape"}, {"y"});
  add_output(model, "y", {-1, -1});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_FALSE(imported.is_ok());
  EXPECT_EQ(imported.code(), Error::kNotSupported);
  EXPECT_THAT(imported.status().message(), StartsWith("test.onnx: node 'reshape' (Reshape, opset 13): "));
  EXPECT_THAT(imported.status().message(), HasSubstr("output 'y'"));
}

TEST(OnnxImporter, RefusesAttributesThatWouldCrashInference) {
  // ONNX 1.12's own inference divides by strides and indexes with axes unchecked.
  onnx::ModelProto conv = make_model(13);
  add_input(conv, "x", {1, 1, 4, 4});
  add_float_initializer(conv, "W", {1, 1, 1, 1}, {1});
  set_ints(add_node(conv, "Conv", "conv", {"x", "W"}, {"y"}), "strides", {0, 1});
  add_output(conv, "y", {-1, -1, -1, -1});
  Result<ImportedModel> imported = import_model(conv);
  EXPECT_EQ(imported.code(), Error::kInvalidArgument);
  EXPECT_THAT(imported.status().message(), StartsWith("test.onnx: node 'conv' (Conv, opset 13): "));
  EXPECT_THAT(imported.status().message(), HasSubstr("strides"));

  onnx::ModelProto norm = make_model(17);
  add_input(norm, "x", {2, 3});
  add_float_initializer(norm, "scale", {3}, {1, 1, 1});
  set_int(add_node(norm, "LayerNormalization", "ln", {"x", "scale"}, {"y"}), "axis", -3);
  add_output(norm, "y", {2, 3});
  Result<ImportedModel> norm_imported = import_model(norm);
  EXPECT_EQ(norm_imported.code(), Error::kInvalidArgument);
  EXPECT_THAT(norm_imported.status().message(), HasSubstr("node 'ln' (LayerNormalization, opset 17)"));

  onnx::ModelProto transpose = make_model(13);
  add_input(transpose, "x", {1, 1});
  add_float_initializer(transpose, "W", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  add_node(transpose, "ConvTranspose", "deconv", {"x", "W"}, {"y"});
  add_output(transpose, "y", {-1, -1, -1, -1});
  EXPECT_EQ(import_model(transpose).code(), Error::kInvalidArgument);
}

TEST(OnnxImporter, DynamicInputNeedsAShape) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {-1, 3});
  add_node(model, "Relu", "relu", {"x"}, {"y"});
  add_output(model, "y", {-1, 3});
  Result<ImportedModel> refused = import_model(model);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.code(), Error::kNotSupported);
  EXPECT_THAT(refused.status().message(), StartsWith("test.onnx: input 'x'"));
  EXPECT_THAT(refused.status().message(), HasSubstr("'N'"));
  EXPECT_THAT(refused.status().message(), HasSubstr("input_shapes"));

  // The same problem, structured, for a front end that words it for its own flags.
  InputShapeProblem problem;
  ImportOptions reporting;
  reporting.input_shape_problem = &problem;
  ASSERT_FALSE(import_model(model, reporting).is_ok());
  EXPECT_EQ(problem.kind, InputShapeProblem::Kind::kShapeNeeded);
  EXPECT_EQ(problem.input, "x");
  EXPECT_EQ(problem.rank, 2u);
  EXPECT_THAT(problem.reason, StartsWith("input 'x' has a dynamic dimension 0"));
  EXPECT_THAT(problem.reason, Not(HasSubstr("input_shapes")));

  ImportOptions options;
  options.input_shapes["x"] = {2, 3};
  Result<ImportedModel> imported = import_model(model, options);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(value_shape(graph, graph.inputs()->Get(0)), ElementsAre(2, 3));
  EXPECT_THAT(value_shape(graph, graph.outputs()->Get(0)), ElementsAre(2, 3));

  options.input_shapes["x"] = {2, 4};  // contradicts the static dimension 3
  options.input_shape_problem = &problem;
  EXPECT_EQ(import_model(model, options).code(), Error::kInvalidArgument);
  EXPECT_EQ(problem.kind, InputShapeProblem::Kind::kShapeRefused);
  EXPECT_EQ(problem.reason, "input 'x' has the static dimension 3 at axis 1, the shape given has 4");
  options.input_shape_problem = nullptr;
  options.input_shapes.clear();
  options.input_shapes["nope"] = {1};
  Result<ImportedModel> unknown = import_model(model, options);
  EXPECT_EQ(unknown.code(), Error::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("'nope'"));
}

/// Each dimension of a value as text: "7", or its expression over the graph's symbols.
std::vector<std::string> dim_texts(const ir::Graph& graph, int32_t index) {
  std::vector<std::string> names;
  if (graph.symbols() != nullptr) {
    for (const ir::Symbol* symbol : *graph.symbols()) names.push_back(symbol->name()->str());
  }
  std::vector<std::string> texts;
  const std::vector<int64_t> shape = value_shape(graph, index);
  const auto* dims = value_at(graph, index).dims();
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    const auto* words = dims != nullptr ? dims->Get(static_cast<flatbuffers::uoffset_t>(axis))->words() : nullptr;
    texts.push_back(words != nullptr && words->size() > 0
                        ? common::DimExpr::from_words({words->begin(), words->end()}).to_string(names)
                        : std::to_string(shape[axis]));
  }
  return texts;
}

/// x [1, N, 6], N in 1..32: a Reshape whose target comes from x's shape (Shape, Gather,
/// Unsqueeze, Concat with -1), a Concat and a Slice along N, and a strided Conv over it.
onnx::ModelProto shape_rules_model() {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {1, -1, 6});
  add_node(model, "Shape", "shape", {"x"}, {"s"});
  add_int64_constant(model, "one", {}, {1});
  add_node(model, "Gather", "length", {"s", "one"}, {"n"});
  add_int64_constant(model, "zero_axis", {1}, {0});
  add_node(model, "Unsqueeze", "unsqueeze", {"n", "zero_axis"}, {"n1"});
  add_int64_constant(model, "rest", {1}, {-1});
  set_int(add_node(model, "Concat", "target", {"n1", "rest"}, {"target"}), "axis", 0);
  add_node(model, "Reshape", "rows", {"x", "target"}, {"rows"});
  set_int(add_node(model, "Concat", "twice", {"rows", "rows"}, {"twice"}), "axis", 0);
  add_int64_initializer(model, "starts", {1}, {1});
  add_int64_initializer(model, "ends", {1}, {std::numeric_limits<int64_t>::max()});
  add_int64_initializer(model, "axes", {1}, {0});
  add_node(model, "Slice", "tail", {"twice", "starts", "ends", "axes"}, {"tail"});
  set_ints(add_node(model, "Transpose", "channels_first", {"x"}, {"xt"}), "perm", {0, 2, 1});
  add_float_initializer(model, "w", {1, 6, 3}, std::vector<float>(18, 1.0f));
  onnx::NodeProto* conv = add_node(model, "Conv", "conv", {"xt", "w"}, {"conv"});
  set_ints(conv, "pads", {1, 1});
  set_ints(conv, "strides", {2});
  add_output(model, "tail", {-1, 6});
  add_output(model, "conv", {1, 1, -1});
  return model;
}

TEST(OnnxImporter, CarriesBoundedDimensionsThroughShapeComputations) {
  ImportOptions options;
  options.dims["N"] = {1, 32};
  Result<ImportedModel> imported = import_model(shape_rules_model(), options);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_EQ(graph.ir_version(), 2);
  ASSERT_EQ(graph.symbols()->size(), 1u);
  EXPECT_EQ(graph.symbols()->Get(0)->name()->str(), "N");
  EXPECT_THAT(dim_texts(graph, graph.inputs()->Get(0)), ElementsAre("1", "N", "6"));
  // Reshape's -1 is (1 * N * 6) / N: the common factor cancels to a static 6. The
  // Slice from 1 to the end, clamped within N's range, needs no min or max.
  EXPECT_THAT(dim_texts(graph, graph.outputs()->Get(0)), ElementsAre("N + N - 1", "6"));
  EXPECT_THAT(value_shape(graph, graph.outputs()->Get(0)), ElementsAre(63, 6));
  EXPECT_THAT(dim_texts(graph, graph.outputs()->Get(1)), ElementsAre("1", "1", "(N - 1) / 2 + 1"));
  // The shape computation stays in the graph, to run on each shape.
  EXPECT_THAT(op_types(graph), ::testing::Contains("Shape"));

  // At N = 3: rows are x's three rows, twice, less the first.
  std::vector<float> x(18);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  std::vector<HostTensor> outputs = run_portable(*imported, {float_tensor({1, 3, 6}, x)}, {{5, 6}, {1, 1, 2}});
  ASSERT_EQ(outputs.size(), 2u);
  std::vector<float> tail(x.begin() + 6, x.end());
  tail.insert(tail.end(), x.begin(), x.end());
  EXPECT_EQ(floats_of(outputs[0]), tail);
  // Windows over positions -1..1 and 1..3 (padded), summing all six channels.
  const float row_sum[3] = {15, 51, 87};
  EXPECT_THAT(floats_of(outputs[1]), ElementsAre(row_sum[0] + row_sum[1], row_sum[1] + row_sum[2]));
}

TEST(OnnxImporter, RefusesBoundsThatDoNotFitTheModel) {
  InputShapeProblem problem;
  ImportOptions options;
  options.input_shape_problem = &problem;
  options.dims["M"] = {1, 8};
  Result<ImportedModel> refused = import_model(shape_rules_model(), options);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("ImportOptions::dims: no input of the model has a dimension named 'M'"));
  EXPECT_EQ(problem.kind, InputShapeProblem::Kind::kDimRefused);
  options.dims = {{"N", {0, int64_t{1} << 41}}};
  Result<ImportedModel> unbounded = import_model(shape_rules_model(), options);
  ASSERT_FALSE(unbounded.is_ok());
  EXPECT_THAT(unbounded.status().message(), HasSubstr("are not 0 <= MIN <= MAX <= 2^40"));
}

// ---- Refusals ---------------------------------------------------------------------

onnx::ModelProto relu_model(int64_t opset) {
  onnx::ModelProto model = make_model(opset);
  add_input(model, "x", {2});
  add_node(model, "Relu", "relu", {"x"}, {"y"});
  add_output(model, "y", {2});
  return model;
}

TEST(OnnxImporter, RefusesOpsetsAboveTheRange) {
  Result<ImportedModel> imported = import_model(relu_model(22));
  ASSERT_FALSE(imported.is_ok());
  EXPECT_EQ(imported.code(), Error::kNotSupported);
  EXPECT_THAT(imported.status().message(), HasSubstr("opset 22"));
  EXPECT_TRUE(import_model(relu_model(7)).is_ok());
  EXPECT_TRUE(import_model(relu_model(17)).is_ok());
  for (int64_t opset : {18, 19, 20, 21}) EXPECT_TRUE(import_model(relu_model(opset)).is_ok()) << opset;
}

TEST(OnnxImporter, UpgradesAnOpset1ReshapeWhoseShapeIsAnAttribute) {
  onnx::ModelProto model = make_model(1);
  model.set_ir_version(3);
  add_input(model, "x", {2, 3});
  onnx::NodeProto* reshape = add_node(model, "Reshape", "reshape", {"x"}, {"y"});
  onnx::AttributeProto* shape = reshape->add_attribute();
  shape->set_name("shape");
  shape->set_type(onnx::AttributeProto::INTS);
  shape->add_ints(3);
  shape->add_ints(2);
  add_output(model, "y", {3, 2});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(value_shape(graph, graph.outputs()->Get(0)), ElementsAre(3, 2));
}

TEST(OnnxImporter, UpgradesOpsetsBelow7) {
  // Opset 6's Add broadcasts only with broadcast = 1; the converter rewrites it to opset 7's.
  onnx::ModelProto model = make_model(6);
  add_input(model, "a", {2, 3});
  add_input(model, "b", {3});
  set_int(add_node(model, "Add", "add", {"a", "b"}, {"y"}), "broadcast", 1);
  add_output(model, "y", {2, 3});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_EQ(imported->opset, 7);
  const ir::Graph& graph = *ir::GetGraph(imported->graph.data());
  EXPECT_EQ(graph.opset(), 7);
  ASSERT_EQ(graph.nodes()->size(), 1u);
  EXPECT_EQ(graph.nodes()->Get(0)->op_type()->str(), "Add");
}

TEST(OnnxImporter, NamesTheFileAndOpsetWhenTheUpgradeFails) {
  // Acos arrived at opset 7: an opset 6 model cannot name it, and the checker, which sees
  // the model before the converter, says so.
  onnx::ModelProto model = make_model(6);
  add_input(model, "x", {2});
  add_node(model, "Acos", "acos", {"x"}, {"y"});
  add_output(model, "y", {2});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_FALSE(imported.is_ok());
  EXPECT_EQ(imported.code(), Error::kInvalidArgument);
  EXPECT_THAT(imported.status().message(), HasSubstr("No Op registered for Acos with domain_version of 6"));
  EXPECT_THAT(imported.status().message(),
              StartsWith("test.onnx: opset 6 of the default ONNX domain cannot be upgraded to opset 7"));
}

// ONNX's Gemm 6 to 7 adapter indexes the first two dimensions of inputs A and B without
// looking: a scalar A made it read through a null pointer (the ONNX importer fuzzer found
// such models). The importer checks the stated ranks first.
TEST(OnnxImporter, RefusesAnOldGemmWhoseInputIsNot2D) {
  onnx::ModelProto model = make_model(6);
  add_input(model, "a", {});
  add_input(model, "b", {4, 3});
  add_input(model, "c", {3});
  set_int(add_node(model, "Gemm", "gemm", {"a", "b", "c"}, {"y"}), "broadcast", 1);
  add_output(model, "y", {2, 3});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_FALSE(imported.is_ok());
  EXPECT_EQ(imported.code(), Error::kNotSupported);
  EXPECT_THAT(imported.status().message(),
              StartsWith("test.onnx: opset 6 of the default ONNX domain cannot be upgraded to opset 7"));
  EXPECT_THAT(imported.status().message(),
              HasSubstr("node 'gemm' (Gemm): the converter needs input A ('a') to have a stated 2-D shape, and it "
                        "has rank 0; or export the model at opset 7 or later"));
  // The importer is still whole: the next old model upgrades.
  EXPECT_TRUE(import_model(relu_model(6)).is_ok());
}

// A Gemm on an intermediate value needs that value's shape stated: ONNX's shape inference
// cannot be trusted to state it on an unchecked old model (it crashed on fuzzed ones).
TEST(OnnxImporter, UpgradesAnOldGemmOnAStatedIntermediateShapeOnly) {
  onnx::ModelProto model = make_model(6);
  add_input(model, "x", {2, 2, 2});
  add_float_initializer(model, "w", {4, 3}, std::vector<float>(12, 0.5f));
  add_float_initializer(model, "bias", {3}, {1, 2, 3});
  add_node(model, "Flatten", "flatten", {"x"}, {"flat"});
  set_int(add_node(model, "Gemm", "gemm", {"flat", "w", "bias"}, {"y"}), "broadcast", 1);
  add_output(model, "y", {2, 3});
  Result<ImportedModel> unstated = import_model(model);
  ASSERT_FALSE(unstated.is_ok());
  EXPECT_THAT(unstated.status().message(), HasSubstr("input A ('flat') to have a stated 2-D shape, and it has none "
                                                     "(give it a value_info)"));
  std::vector<int64_t> flat_dims = {2, 4};
  describe(model.mutable_graph()->add_value_info(), "flat", onnx::TensorProto::FLOAT, &flat_dims);
  Result<ImportedModel> stated = import_model(model);
  ASSERT_TRUE(stated.is_ok()) << stated.status().to_string();
  EXPECT_EQ(stated->opset, 7);
}

TEST(OnnxImporter, ImportsDoubleTensors) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2}, onnx::TensorProto::DOUBLE);
  onnx::TensorProto* d = model.mutable_graph()->add_initializer();
  d->set_name("d");
  d->set_data_type(onnx::TensorProto::DOUBLE);
  d->add_dims(2);
  d->add_double_data(1.0);
  d->add_double_data(2.0);
  add_node(model, "Add", "add", {"x", "d"}, {"y"});
  add_output(model, "y", {2}, onnx::TensorProto::DOUBLE);
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = *ir::GetGraph(imported->graph.data());
  bool found = false;
  for (const ir::Value* value : *graph.values()) {
    if (value->name()->str() != "d") continue;
    found = true;
    EXPECT_EQ(value->dtype(), ir::DType::Double);
    ASSERT_EQ(value->data()->size(), 16u);
    double second = 0;
    std::memcpy(&second, value->data()->data() + 8, sizeof(second));
    EXPECT_EQ(second, 2.0);
  }
  EXPECT_TRUE(found);
}

// ---- float16 and bfloat16 models ---------------------------------------------------

/// The float16 bits of a float that float16 holds exactly (a normal number or zero).
uint16_t half_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7FFFFFFFu) == 0) return static_cast<uint16_t>(bits >> 16);
  const uint32_t exponent = ((bits >> 23) & 0xFFu) - 112;
  return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | (exponent << 10) | ((bits >> 13) & 0x3FFu));
}

/// A rank-1 float16 or bfloat16 initializer, its bits in int32_data.
void add_half_initializer(onnx::ModelProto& model, const std::string& name, int32_t dtype,
                          const std::vector<uint16_t>& bits) {
  onnx::TensorProto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  t->add_dims(static_cast<int64_t>(bits.size()));
  for (uint16_t b : bits) t->add_int32_data(b);
}

HostTensor half_tensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  HostTensor t;
  t.dtype = DType::kFloat16;
  t.shape = std::move(shape);
  for (float v : values) {
    const uint16_t bits = half_of(v);
    t.bytes.push_back(static_cast<uint8_t>(bits & 0xFF));
    t.bytes.push_back(static_cast<uint8_t>(bits >> 8));
  }
  return t;
}

/// x (float16, 1x1x3x3) -> Conv with float16 weights (raw data) -> Relu -> Mul by a
/// float16 Constant (int32_data) -> Cast to float16 -> y (float16).
onnx::ModelProto half_conv_model() {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {1, 1, 3, 3}, onnx::TensorProto::FLOAT16);
  onnx::TensorProto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT16);
  for (int64_t d : {1, 1, 2, 2}) w->add_dims(d);
  std::string raw;
  for (float v : {1.0f, 0.5f, -2.0f, 0.25f}) {
    const uint16_t bits = half_of(v);
    raw.push_back(static_cast<char>(bits & 0xFF));
    raw.push_back(static_cast<char>(bits >> 8));
  }
  w->set_raw_data(raw);
  add_node(model, "Conv", "conv", {"x", "w"}, {"c"});
  add_node(model, "Relu", "relu", {"c"}, {"r"});
  onnx::NodeProto* two = add_node(model, "Constant", "two", {}, {"k"});
  onnx::AttributeProto* value = two->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT16);
  value->mutable_t()->add_int32_data(half_of(2.0f));
  add_node(model, "Mul", "mul", {"r", "k"}, {"m"});
  set_int(add_node(model, "Cast", "cast", {"m"}, {"y"}), "to", onnx::TensorProto::FLOAT16);
  add_output(model, "y", {1, 1, 2, 2}, onnx::TensorProto::FLOAT16);
  return model;
}

TEST(OnnxImporter, AFloat16ModelComputesInFloat32AndKeepsItsInterface) {
  Result<ImportedModel> imported = import_model(half_conv_model());
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_TRUE(imported->half_in_float32);
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_EQ(value_at(graph, graph.inputs()->Get(0)).dtype(), ir::DType::Float16);
  EXPECT_EQ(value_at(graph, graph.outputs()->Get(0)).dtype(), ir::DType::Float16);
  const ir::Node* conv = find_node(graph, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(value_at(graph, conv->inputs()->Get(0)).dtype(), ir::DType::Float32);
  EXPECT_EQ(value_at(graph, conv->inputs()->Get(1)).dtype(), ir::DType::Float32);
  EXPECT_EQ(constant_values<float>(graph, conv->inputs()->Get(1)), (std::vector<float>{1.0f, 0.5f, -2.0f, 0.25f}));

  // y = 2 * relu(conv(x, w)), every value exact in float16. conv(x, w) for x = 1..9 is
  // -4.75, -5, -5.5, -5.75, which Relu clamps; for -x it is their negation.
  std::vector<HostTensor> out = run_portable(*imported, {half_tensor({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dtype, DType::kFloat16);
  std::vector<uint16_t> bits(4);
  std::memcpy(bits.data(), out[0].bytes.data(), 8);
  EXPECT_EQ(bits, (std::vector<uint16_t>{0, 0, 0, 0}));
  std::vector<HostTensor> negated =
      run_portable(*imported, {half_tensor({1, 1, 3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9})});
  std::memcpy(bits.data(), negated[0].bytes.data(), 8);
  EXPECT_EQ(bits, (std::vector<uint16_t>{half_of(9.5f), half_of(10.0f), half_of(11.0f), half_of(11.5f)}));
}

TEST(OnnxImporter, AFloat16ModelAsGivenKeepsItsDtypes) {
  ImportOptions options;
  options.half_precision = ImportOptions::HalfPrecision::kAsGiven;
  Result<ImportedModel> imported = import_model(half_conv_model(), options);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_FALSE(imported->half_in_float32);
  const ir::Graph& graph = graph_of(*imported);
  const ir::Node* conv = find_node(graph, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(value_at(graph, conv->inputs()->Get(1)).dtype(), ir::DType::Float16);
}

TEST(OnnxImporter, ABfloat16InitializerIsWidened) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2});
  add_half_initializer(model, "b", onnx::TensorProto::BFLOAT16, {0x3FC0, 0xC040});  // 1.5, -3
  set_int(add_node(model, "Cast", "widen", {"b"}, {"bf"}), "to", onnx::TensorProto::FLOAT);
  add_node(model, "Add", "add", {"x", "bf"}, {"y"});
  add_output(model, "y", {2});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_TRUE(imported->half_in_float32);
  std::vector<HostTensor> out = run_portable(*imported, {float_tensor({2}, {1.0f, 1.0f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(floats_of(out[0]), (std::vector<float>{2.5f, -2.0f}));
}

TEST(OnnxImporter, AFloat16InitializerListedAsAnInputStaysAConstant) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2}, onnx::TensorProto::FLOAT16);
  add_input(model, "b", {2}, onnx::TensorProto::FLOAT16);  // an IR 3 model lists its initializers
  add_half_initializer(model, "b", onnx::TensorProto::FLOAT16, {half_of(0.5f), half_of(-4.0f)});
  add_node(model, "Add", "add", {"x", "b"}, {"y"});
  add_output(model, "y", {2}, onnx::TensorProto::FLOAT16);
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  ASSERT_EQ(graph.inputs()->size(), 1u);
  std::vector<HostTensor> out = run_portable(*imported, {half_tensor({2}, {1.0f, 2.0f})});
  ASSERT_EQ(out.size(), 1u);
  std::vector<uint16_t> bits(2);
  std::memcpy(bits.data(), out[0].bytes.data(), 4);
  EXPECT_EQ(bits, (std::vector<uint16_t>{half_of(1.5f), half_of(-2.0f)}));
}

TEST(OnnxImporter, RefusesComplexAndStringTensors) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2});
  onnx::TensorProto* c = model.mutable_graph()->add_initializer();
  c->set_name("c");
  c->set_data_type(onnx::TensorProto::COMPLEX64);
  c->add_dims(1);
  c->add_float_data(1.0f);
  c->add_float_data(0.0f);
  add_node(model, "Identity", "keep", {"c"}, {"k"});
  add_node(model, "Relu", "relu", {"x"}, {"y"});
  add_output(model, "y", {2});
  add_output(model, "k", {1}, onnx::TensorProto::COMPLEX64);
  Result<ImportedModel> imported = import_model(model);
  ASSERT_FALSE(imported.is_ok());
  EXPECT_EQ(imported.code(), Error::kNotSupported);
  EXPECT_THAT(imported.status().message(), HasSubstr("initializer 'c'"));
  EXPECT_THAT(imported.status().message(), HasSubstr("COMPLEX64"));

  // A node producing a string: named with the node.
  onnx::ModelProto cast = make_model(13);
  add_input(cast, "x", {2});
  set_int(add_node(cast, "Cast", "to_string", {"x"}, {"y"}), "to", onnx::TensorProto::STRING);
  add_output(cast, "y", {2}, onnx::TensorProto::STRING);
  Result<ImportedModel> cast_imported = import_model(cast);
  ASSERT_FALSE(cast_imported.is_ok());
  EXPECT_EQ(cast_imported.code(), Error::kNotSupported);
  EXPECT_THAT(cast_imported.status().message(), StartsWith("test.onnx: node 'to_string' (Cast, opset 13): "));
  EXPECT_THAT(cast_imported.status().message(), HasSubstr("STRING"));

  // A complex graph input.
  onnx::ModelProto input = make_model(13);
  add_input(input, "x", {2}, onnx::TensorProto::COMPLEX128);
  add_node(input, "Identity", "id", {"x"}, {"y"});
  add_output(input, "y", {2}, onnx::TensorProto::COMPLEX128);
  Result<ImportedModel> input_imported = import_model(input);
  EXPECT_EQ(input_imported.code(), Error::kNotSupported);
  EXPECT_THAT(input_imported.status().message(), HasSubstr("input 'x' has type COMPLEX128"));
}

TEST(OnnxImporter, AListOfStringsTravelsJoinedByCommas) {
  // An RNN's `activations` is the one list of strings the portable kernels read.
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2, 1, 3});
  add_float_initializer(model, "W", {1, 4, 3}, std::vector<float>(12, 0.1f));
  add_float_initializer(model, "R", {1, 4, 4}, std::vector<float>(16, 0.1f));
  onnx::NodeProto* rnn = add_node(model, "RNN", "rnn", {"x", "W", "R"}, {"y"});
  set_int(rnn, "hidden_size", 4);
  onnx::AttributeProto* activations = rnn->add_attribute();
  activations->set_name("activations");
  activations->set_type(onnx::AttributeProto::STRINGS);
  activations->add_strings("LeakyRelu");
  add_output(model, "y", {2, 1, 1, 4});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Node* node = find_node(graph_of(*imported), "RNN");
  ASSERT_NE(node, nullptr);
  const ir::Attribute* joined = find_attribute(*node, "activations");
  ASSERT_NE(joined, nullptr);
  EXPECT_EQ(joined->kind(), ir::AttributeKind::String);
  EXPECT_EQ(joined->s()->str(), "LeakyRelu");

  activations->add_strings("Tanh");
  activations->add_strings("Sig,moid");  // a comma inside an item cannot be carried
  Result<ImportedModel> refused = import_model(model);
  EXPECT_EQ(refused.code(), Error::kNotSupported);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("attribute 'activations' is a list of strings (one holds a comma)"));
}

TEST(OnnxImporter, TensorTypesWithoutAShapeHaveAnUnknownRank) {
  // ONNX 1.12's checker wants a shape on every declared type; ONNX (and ONNX Runtime)
  // read a missing one as a rank not known. An input's shape is then asked for.
  onnx::ModelProto model = make_model(13);
  describe(model.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, nullptr);
  describe(model.mutable_graph()->add_output(), "y", onnx::TensorProto::FLOAT, nullptr);
  add_node(model, "Relu", "relu", {"x"}, {"y"});
  Result<ImportedModel> refused = import_model(model);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("input 'x' has no shape"));

  ImportOptions options;
  options.input_shapes["x"] = {2, 3};
  Result<ImportedModel> imported = import_model(model, options);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_THAT(value_shape(graph_of(*imported), graph_of(*imported).outputs()->Get(0)), ElementsAre(2, 3));
}

TEST(OnnxImporter, EinsumGetsStaticDimensions) {
  // ONNX 1.12 infers only Einsum's rank; the importer works the dimensions out.
  onnx::ModelProto model = make_model(13);
  add_input(model, "a", {2, 3, 4, 5});
  add_input(model, "b", {2, 6, 4, 5});
  onnx::NodeProto* scores = add_node(model, "Einsum", "scores", {"a", "b"}, {"s"});
  onnx::AttributeProto* equation = scores->add_attribute();
  equation->set_name("equation");
  equation->set_type(onnx::AttributeProto::STRING);
  equation->set_s("bihd, bjhd -> bhij");
  onnx::NodeProto* implicit = add_node(model, "Einsum", "implicit", {"s"}, {"y"});
  onnx::AttributeProto* implicit_equation = implicit->add_attribute();
  implicit_equation->set_name("equation");
  implicit_equation->set_type(onnx::AttributeProto::STRING);
  implicit_equation->set_s("...ji");  // "...ij": a transpose of the last two
  add_output(model, "y", {-1, -1, -1, -1});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  const ir::Node* first = find_node(graph, "Einsum");
  ASSERT_NE(first, nullptr);
  EXPECT_THAT(value_shape(graph, first->outputs()->Get(0)), ElementsAre(2, 4, 3, 6));
  EXPECT_THAT(value_shape(graph, graph.outputs()->Get(0)), ElementsAre(2, 4, 6, 3));
}

TEST(OnnxImporter, EinsumWithCapitalLettersAndAnImplicitOutput) {
  // ONNX 1.12's own Einsum inference writes past an array for "BIJ,BJK" (the process
  // ended); the importer infers Einsum itself: B and J are summed, the output is "IK".
  onnx::ModelProto model = make_model(13);
  add_input(model, "a", {2, 3, 4});
  add_input(model, "b", {2, 4, 5});
  onnx::NodeProto* node = add_node(model, "Einsum", "capitals", {"a", "b"}, {"y"});
  onnx::AttributeProto* equation = node->add_attribute();
  equation->set_name("equation");
  equation->set_type(onnx::AttributeProto::STRING);
  equation->set_s("BIJ,BJK");
  add_output(model, "y", {-1, -1});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_THAT(value_shape(graph_of(*imported), graph_of(*imported).outputs()->Get(0)), ElementsAre(3, 5));

  equation->set_s("BIJ,BJKL");  // four letters for a rank-3 input
  Result<ImportedModel> refused = import_model(model);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("the equation 'BIJ,BJKL' does not fit its 2 inputs' ranks"));
}

/// y = If(c) then Relu(x) + t (t a branch initializer) else Neg(x): x [2], c a bool.
onnx::ModelProto if_model(bool constant_condition, bool condition) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2});
  if (constant_condition) {
    onnx::TensorProto* c = model.mutable_graph()->add_initializer();
    c->set_name("c");
    c->set_data_type(onnx::TensorProto::BOOL);
    c->add_int32_data(condition ? 1 : 0);
  } else {
    add_input(model, "c", {}, onnx::TensorProto::BOOL);
  }
  onnx::NodeProto* node = add_node(model, "If", "choose", {"c"}, {"y"});
  onnx::AttributeProto* then_branch = node->add_attribute();
  then_branch->set_name("then_branch");
  then_branch->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* then_graph = then_branch->mutable_g();
  then_graph->set_name("then");
  onnx::TensorProto* t = then_graph->add_initializer();
  t->set_name("t");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(2);
  t->add_float_data(10);
  t->add_float_data(20);
  onnx::NodeProto* relu = then_graph->add_node();
  relu->set_op_type("Relu");
  relu->add_input("x");
  relu->add_output("r");
  onnx::NodeProto* add = then_graph->add_node();
  add->set_op_type("Add");
  add->add_input("r");
  add->add_input("t");
  add->add_output("out");
  const std::vector<int64_t> dims = {2};
  describe(then_graph->add_output(), "out", onnx::TensorProto::FLOAT, &dims);
  onnx::AttributeProto* else_branch = node->add_attribute();
  else_branch->set_name("else_branch");
  else_branch->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* else_graph = else_branch->mutable_g();
  else_graph->set_name("else");
  onnx::NodeProto* neg = else_graph->add_node();
  neg->set_op_type("Neg");
  neg->add_input("x");
  neg->add_output("out");
  describe(else_graph->add_output(), "out", onnx::TensorProto::FLOAT, &dims);
  add_output(model, "y", {2});
  return model;
}

TEST(OnnxImporter, AnIfWithAConstantConditionBecomesItsBranch) {
  Result<ImportedModel> then_taken = import_model(if_model(true, true));
  ASSERT_TRUE(then_taken.is_ok()) << then_taken.status().to_string();
  EXPECT_THAT(op_types(graph_of(*then_taken)), ElementsAre("Relu", "Add"));
  Result<ImportedModel> else_taken = import_model(if_model(true, false));
  ASSERT_TRUE(else_taken.is_ok()) << else_taken.status().to_string();
  EXPECT_THAT(op_types(graph_of(*else_taken)), ElementsAre("Neg"));
}

TEST(OnnxImporter, AnIfWhoseConditionFoldsBecomesItsBranch) {
  // c = Size(x) > 1, known once x's shape is: the detection post-processing pattern.
  onnx::ModelProto model = if_model(false, false);
  model.mutable_graph()->mutable_input()->RemoveLast();  // c is computed instead
  add_int64_initializer(model, "one", {}, {1});
  onnx::NodeProto size = *add_node(model, "Size", "size", {"x"}, {"n"});
  onnx::NodeProto greater = *add_node(model, "Greater", "greater", {"n", "one"}, {"c"});
  // Put the two before the If.
  onnx::GraphProto* graph = model.mutable_graph();
  graph->mutable_node()->RemoveLast();
  graph->mutable_node()->RemoveLast();
  onnx::NodeProto if_node = graph->node(0);
  graph->clear_node();
  *graph->add_node() = size;
  *graph->add_node() = greater;
  *graph->add_node() = if_node;
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_THAT(op_types(graph_of(*imported)), ElementsAre("Relu", "Add"));
}

HostTensor bool_tensor(bool value) { return HostTensor{DType::kBool, {}, {static_cast<uint8_t>(value ? 1 : 0)}}; }

HostTensor int64_tensor(int64_t value) {
  HostTensor t{DType::kInt64, {}, std::vector<uint8_t>(sizeof(int64_t))};
  std::memcpy(t.bytes.data(), &value, sizeof(value));
  return t;
}

TEST(OnnxImporter, AnIfWithARuntimeConditionKeepsBothBranches) {
  Result<ImportedModel> imported = import_model(if_model(false, false));
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  ASSERT_THAT(op_types(graph), ElementsAre("If"));
  const ir::Node& node = *find_node(graph, "If");
  ASSERT_EQ(node.inputs()->size(), 2u);  // the condition, then x, which the branches read
  EXPECT_EQ(value_at(graph, node.inputs()->Get(1)).name()->str(), "x");
  EXPECT_EQ(find_attribute(node, "captured")->i(), 1);
  const ir::Attribute* then_branch = find_attribute(node, "then_branch");
  ASSERT_NE(then_branch, nullptr);
  ASSERT_EQ(then_branch->kind(), ir::AttributeKind::Graph);
  const ir::Graph& branch = *ir::GetGraph(then_branch->graph()->data());
  EXPECT_THAT(op_types(branch), ElementsAre("Relu", "Add"));

  EXPECT_THAT(floats_of(run_portable(*imported, {float_tensor({2}, {-1, 2}), bool_tensor(true)})[0]),
              ElementsAre(10, 22));
  EXPECT_THAT(floats_of(run_portable(*imported, {float_tensor({2}, {-1, 2}), bool_tensor(false)})[0]),
              ElementsAre(1, -2));
}

TEST(OnnxImporter, RefusesAnIfWhoseBranchesDisagreeOnShape) {
  onnx::ModelProto model = if_model(false, false);
  onnx::GraphProto* else_graph = model.mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g();
  onnx::NodeProto* concat = else_graph->add_node();
  concat->set_op_type("Concat");
  concat->add_input("x");
  concat->add_input("x");
  concat->add_output("twice");
  set_int(concat, "axis", 0);
  else_graph->mutable_output(0)->set_name("twice");
  else_graph->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(
      4);
  model.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("N");
  Result<ImportedModel> imported = import_model(model);
  EXPECT_EQ(imported.code(), Error::kNotSupported);
  EXPECT_THAT(imported.status().message(), StartsWith("test.onnx: node 'choose' (If, opset 13): "));
  EXPECT_THAT(imported.status().message(), HasSubstr("its branches give output 'y' as FLOAT [2] and FLOAT [4]"));
  EXPECT_THAT(imported.status().message(),
              HasSubstr("its condition 'c', bind them to their values with --input-value"));
}

/// v, s = Loop(n, "", v0): each iteration v += w (w read from the outer graph), and s
/// collects v * 2. `n` is an input or (constant_trips) the constant 3.
onnx::ModelProto loop_model(bool constant_trips, bool declare_scan_length) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "v0", {2});
  add_input(model, "w", {2});
  if (constant_trips) {
    add_int64_initializer(model, "n", {}, {3});
  } else {
    add_input(model, "n", {}, onnx::TensorProto::INT64);
  }
  onnx::NodeProto* node = add_node(model, "Loop", "accumulate", {"n", "", "v0"}, {"v", "s"});
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name("body");
  attribute->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = attribute->mutable_g();
  body->set_name("body");
  const std::vector<int64_t> scalar = {}, pair = {2};
  describe(body->add_input(), "i", onnx::TensorProto::INT64, &scalar);
  describe(body->add_input(), "cond_in", onnx::TensorProto::BOOL, &scalar);
  describe(body->add_input(), "v_in", onnx::TensorProto::FLOAT, &pair);
  auto add_body_node = [body](const std::string& op, std::vector<std::string> inputs, const std::string& output) {
    onnx::NodeProto* inner = body->add_node();
    inner->set_op_type(op);
    for (const std::string& input : inputs) inner->add_input(input);
    inner->add_output(output);
    return inner;
  };
  add_body_node("Identity", {"cond_in"}, "cond_out");
  add_body_node("Add", {"v_in", "w"}, "v_out");
  add_body_node("Add", {"v_out", "v_out"}, "s_out");
  describe(body->add_output(), "cond_out", onnx::TensorProto::BOOL, &scalar);
  describe(body->add_output(), "v_out", onnx::TensorProto::FLOAT, &pair);
  describe(body->add_output(), "s_out", onnx::TensorProto::FLOAT, &pair);
  add_output(model, "v", {2});
  add_output(model, "s", {declare_scan_length ? 3 : -1, 2});
  return model;
}

TEST(OnnxImporter, ALoopRunsItsBodyWithCarriedAndScannedValues) {
  Result<ImportedModel> imported = import_model(loop_model(true, false));
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  ASSERT_THAT(op_types(graph), ElementsAre("Loop"));
  // The scan output's length is the constant trip count: the condition never changes.
  EXPECT_THAT(value_shape(graph, graph.outputs()->Get(1)), ElementsAre(3, 2));
  std::vector<HostTensor> outputs = run_portable(*imported, {float_tensor({2}, {1, 2}), float_tensor({2}, {1, 2})});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_THAT(floats_of(outputs[0]), ElementsAre(4, 8));
  EXPECT_THAT(floats_of(outputs[1]), ElementsAre(4, 8, 6, 12, 8, 16));
}

TEST(OnnxImporter, ALoopWithARuntimeTripCountNeedsTheScanLengthDeclared) {
  Result<ImportedModel> undeclared = import_model(loop_model(false, false));
  EXPECT_EQ(undeclared.code(), Error::kNotSupported);
  EXPECT_THAT(undeclared.status().message(), StartsWith("test.onnx: node 'accumulate' (Loop, opset 13): "));
  EXPECT_THAT(undeclared.status().message(), HasSubstr("scan output 's' is as long as the loop runs"));

  Result<ImportedModel> declared = import_model(loop_model(false, true));
  ASSERT_TRUE(declared.is_ok()) << declared.status().to_string();
  std::vector<HostTensor> outputs =
      run_portable(*declared, {float_tensor({2}, {1, 2}), float_tensor({2}, {1, 2}), int64_tensor(3)});
  EXPECT_THAT(floats_of(outputs[1]), ElementsAre(4, 8, 6, 12, 8, 16));

  // Two iterations where the program was compiled for three: refused when it runs.
  InitOptions options;
  options.blob = declared->graph.data();
  options.blob_size = declared->graph.size();
  Result<DelegateHandle> handle = builtin_portable_backend().init(options);
  ASSERT_TRUE(handle.is_ok()) << handle.status().to_string();
  HostTensor v0 = float_tensor({2}, {1, 2}), w = float_tensor({2}, {1, 2}), n = int64_tensor(2);
  HostTensor v = float_tensor({2}, {0, 0}), s = float_tensor({3, 2}, {0, 0, 0, 0, 0, 0});
  DLTensor in[] = {as_dltensor(v0), as_dltensor(w), as_dltensor(n)}, out[] = {as_dltensor(v), as_dltensor(s)};
  const DLTensor* in_ptrs[] = {&in[0], &in[1], &in[2]};
  const DLTensor* out_ptrs[] = {&out[0], &out[1]};
  Status status = handle->execute(Span<const DLTensor* const>(in_ptrs, 3), Span<const DLTensor* const>(out_ptrs, 2));
  EXPECT_FALSE(status.is_ok());
  EXPECT_THAT(status.message(), HasSubstr("Loop 'accumulate': ran 2 iterations, but its scan outputs have length 3"));
}

/// y, z = Scan(initial, x): y sums the rows of x, z holds the running sums.
onnx::ModelProto scan_model(int64_t opset) {
  onnx::ModelProto model = make_model(opset);
  add_input(model, "initial", {2});
  add_input(model, "x", {3, 2});
  onnx::NodeProto* node = add_node(model, "Scan", "running_sum", {"initial", "x"}, {"y", "z"});
  set_int(node, "num_scan_inputs", 1);
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name("body");
  attribute->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = attribute->mutable_g();
  body->set_name("body");
  const std::vector<int64_t> pair = {2};
  describe(body->add_input(), "sum_in", onnx::TensorProto::FLOAT, &pair);
  describe(body->add_input(), "row", onnx::TensorProto::FLOAT, &pair);
  onnx::NodeProto* add = body->add_node();
  add->set_op_type("Add");
  add->add_input("sum_in");
  add->add_input("row");
  add->add_output("sum_out");
  onnx::NodeProto* copy = body->add_node();
  copy->set_op_type("Identity");
  copy->add_input("sum_out");
  copy->add_output("scan_out");
  describe(body->add_output(), "sum_out", onnx::TensorProto::FLOAT, &pair);
  describe(body->add_output(), "scan_out", onnx::TensorProto::FLOAT, &pair);
  add_output(model, "y", {2});
  add_output(model, "z", {3, 2});
  return model;
}

TEST(OnnxImporter, AScanRunsItsBodyAlongTheFirstAxis) {
  Result<ImportedModel> imported = import_model(scan_model(11));
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  std::vector<HostTensor> outputs =
      run_portable(*imported, {float_tensor({2}, {0, 0}), float_tensor({3, 2}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_THAT(floats_of(outputs[0]), ElementsAre(9, 12));
  EXPECT_THAT(floats_of(outputs[1]), ElementsAre(1, 2, 4, 6, 9, 12));
}

TEST(OnnxImporter, RefusesSubgraphsItCannotRun) {
  Result<ImportedModel> batched = import_model(scan_model(8));
  EXPECT_EQ(batched.code(), Error::kNotSupported);
  EXPECT_THAT(batched.status().message(), HasSubstr("Scan before opset 9"));

  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2});
  onnx::NodeProto* node = add_node(model, "Relu", "relu", {"x"}, {"y"});
  onnx::AttributeProto* graph = node->add_attribute();
  graph->set_name("body");
  graph->set_type(onnx::AttributeProto::GRAPH);
  graph->mutable_g()->set_name("body");
  add_output(model, "y", {2});
  Result<ImportedModel> imported = import_model(model);
  EXPECT_EQ(imported.code(), Error::kNotSupported);
  EXPECT_THAT(imported.status().message(), StartsWith("test.onnx: node 'relu' (Relu, opset 13): "));
  EXPECT_THAT(imported.status().message(),
              HasSubstr("attribute 'body' is a graph (subgraphs are supported in If, Loop and Scan only)"));
}

TEST(OnnxImporter, RefusesExternalData) {
  onnx::ModelProto external = make_model(13);
  add_input(external, "x", {2});
  onnx::TensorProto* w = external.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = w->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  add_node(external, "Add", "add", {"x", "w"}, {"y"});
  add_output(external, "y", {2});
  Result<ImportedModel> external_imported = import_model(external);
  EXPECT_EQ(external_imported.code(), Error::kNotSupported);
  EXPECT_THAT(external_imported.status().message(), HasSubstr("initializer 'w'"));
  EXPECT_THAT(external_imported.status().message(), HasSubstr("external"));
}

TEST(OnnxImporter, RefusesGarbageAndInvalidModels) {
  const std::vector<uint8_t> garbage = {0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02};
  Result<ImportedModel> imported = import_onnx_bytes(Span<const uint8_t>(garbage.data(), garbage.size()), "junk");
  ASSERT_FALSE(imported.is_ok());
  EXPECT_EQ(imported.code(), Error::kInvalidArgument);
  EXPECT_THAT(imported.status().message(), StartsWith("junk: "));

  EXPECT_EQ(import_onnx_bytes(Span<const uint8_t>(), "empty").code(), Error::kInvalidArgument);

  // Parses, but the checker refuses it: an input nobody defines.
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {2});
  add_node(model, "Add", "add", {"x", "ghost"}, {"y"});
  add_output(model, "y", {2});
  Result<ImportedModel> invalid = import_model(model);
  EXPECT_EQ(invalid.code(), Error::kInvalidArgument);
  EXPECT_THAT(invalid.status().message(), StartsWith("test.onnx: "));

  // Passes the checker, but shape inference refuses it: shapes that do not broadcast.
  onnx::ModelProto mismatch = make_model(13);
  add_input(mismatch, "a", {2, 3});
  add_input(mismatch, "b", {4});
  add_node(mismatch, "Add", "add", {"a", "b"}, {"y"});
  add_output(mismatch, "y", {-1, -1});
  Result<ImportedModel> inferred = import_model(mismatch);
  EXPECT_EQ(inferred.code(), Error::kInvalidArgument);
  EXPECT_THAT(inferred.status().message(), StartsWith("test.onnx: node 'add' (Add, opset 13): "));
}

TEST(OnnxImporter, MissingFile) {
  const std::string path = "/nonexistent/dir/model.onnx";
  Result<ImportedModel> imported = import_onnx_file(path);
  ASSERT_FALSE(imported.is_ok());
  EXPECT_EQ(imported.code(), Error::kAccessFailed);
  EXPECT_THAT(imported.status().message(), HasSubstr(path));
}

TEST(OnnxImporter, ImportsFromAFile) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "plugrt_onnx_importer_test.onnx";
  {
    std::ofstream file(path, std::ios::binary);
    file << serialize(relu_model(13));
  }
  Result<ImportedModel> imported = import_onnx_file(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_THAT(op_types(graph_of(*imported)), ElementsAre("Relu"));
}

// ---- libonnx-testdata -------------------------------------------------------------

/// Where Debian's libonnx-testdata is (PLUGRT_ONNX_TESTDATA overrides); "" when absent.
std::string testdata_dir() {
  const char* env = std::getenv("PLUGRT_ONNX_TESTDATA");
  const std::string dir = env != nullptr ? env : "/usr/share/libonnx-testdata/data";
  std::error_code ignored;
  return std::filesystem::is_directory(dir + "/node", ignored) ? dir : std::string();
}

HostTensor read_tensor(const std::string& path) {
  HostTensor t;
  std::ifstream file(path, std::ios::binary);
  onnx::TensorProto proto;
  EXPECT_TRUE(proto.ParseFromIstream(&file)) << path;
  t.dtype = static_cast<DType>(proto.data_type());
  EXPECT_NE(dtype_size(t.dtype), 0u) << path;
  t.shape.assign(proto.dims().begin(), proto.dims().end());
  if (proto.has_raw_data()) {
    t.bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
  } else if (t.dtype == DType::kFloat32) {
    t.bytes.resize(static_cast<size_t>(proto.float_data_size()) * 4);
    if (!t.bytes.empty()) std::memcpy(t.bytes.data(), proto.float_data().data(), t.bytes.size());
  } else if (t.dtype == DType::kInt64) {
    t.bytes.resize(static_cast<size_t>(proto.int64_data_size()) * 8);
    if (!t.bytes.empty()) std::memcpy(t.bytes.data(), proto.int64_data().data(), t.bytes.size());
  } else {
    ADD_FAILURE() << path << ": a typed field this test does not read";
  }
  return t;
}

class OnnxTestData : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxTestData, ImportsAndRunsOnPortable) {
  const std::string root = testdata_dir();
  if (root.empty()) GTEST_SKIP() << "libonnx-testdata is not installed";
  const std::string dir = root + "/" + GetParam();
  Result<ImportedModel> imported = import_onnx_file(dir + "/model.onnx");
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  ASSERT_NE(graph.nodes(), nullptr);
  EXPECT_GT(graph.nodes()->size(), 0u);
  EXPECT_EQ(graph.opset(), imported->opset);

  std::vector<HostTensor> inputs;
  for (size_t k = 0; k < graph.inputs()->size(); ++k) {
    inputs.push_back(read_tensor(dir + "/test_data_set_0/input_" + std::to_string(k) + ".pb"));
    // The graph's inputs are the model's non-initializer inputs, in order, with their shapes.
    EXPECT_EQ(value_shape(graph, graph.inputs()->Get(static_cast<flatbuffers::uoffset_t>(k))), inputs.back().shape);
  }
  std::vector<HostTensor> outputs = run_portable(*imported, inputs);
  ASSERT_EQ(outputs.size(), graph.outputs()->size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const HostTensor expected = read_tensor(dir + "/test_data_set_0/output_" + std::to_string(k) + ".pb");
    EXPECT_EQ(outputs[k].shape, expected.shape);
    ASSERT_EQ(outputs[k].dtype, DType::kFloat32);
    const std::vector<float> got = floats_of(outputs[k]), want = floats_of(expected);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::fabs(want[i])) << "output " << k << " element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Files, OnnxTestData,
                         ::testing::Values("node/test_relu", "node/test_conv_with_strides_padding",
                                           "node/test_gemm_default_no_bias", "node/test_maxpool_2d_pads",
                                           "node/test_softmax_axis_1", "node/test_leakyrelu_default",
                                           "node/test_batchnorm_example", "node/test_flatten_axis1",
                                           "node/test_logsoftmax_axis_1_expanded", "node/test_mvn_expanded",
                                           // Shape, Size, Slice, ConstantOfShape, Concat: folded
                                           "node/test_layer_normalization_4d_axis1_expanded",
                                           "node/test_layer_normalization_default_axis_expanded",
                                           "simple/test_single_relu_model"),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                           std::string name = param.param;
                           for (char& c : name) {
                             if (c == '/' || c == '-') c = '_';
                           }
                           return name;
                         });

TEST(OnnxImporter, EveryInputThatNeedsAShapeIsNamedInOneError) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "a", {-1, 3});
  add_input(model, "b", {2, -1});
  add_node(model, "Add", "sum", {"a", "b"}, {"y"});
  add_output(model, "y", {2, 3});
  InputShapeProblem problem;
  ImportOptions options;
  options.input_shape_problem = &problem;
  Result<ImportedModel> refused = import_model(model, options);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("input 'a' has a dynamic dimension 0"), HasSubstr("input 'b' has a dynamic dimension 1"),
                    HasSubstr("give their shapes in ImportOptions::input_shapes")));
  ASSERT_EQ(problem.needed.size(), 2u);
  EXPECT_EQ(problem.needed[0].input, "a");
  EXPECT_EQ(problem.needed[1].input, "b");
  EXPECT_EQ(problem.input, "a");
}

TEST(OnnxImporter, NewerOpsetsAreWrittenInTheirOpset17FormsOrRefusedSayingWhy) {
  onnx::ModelProto model = make_model(18);
  add_input(model, "x", {2, 3});
  add_int64_initializer(model, "axes", {1}, {1});
  add_node(model, "ReduceMean", "mean", {"x", "axes"}, {"m"});
  add_node(model, "Mish", "mish", {"m"}, {"y"});
  add_output(model, "y", {2, 1});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_EQ(imported->opset, 17);
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("ReduceMean", "Softplus", "Tanh", "Mul"));
  EXPECT_THAT(value_shape(graph, graph.outputs()->Get(0)), ElementsAre(2, 1));

  add_node(model, "GroupNormalization", "groups", {"x", "x", "x"}, {"g"});
  Result<ImportedModel> refused = import_model(model);
  EXPECT_EQ(refused.code(), Error::kNotSupported);
  EXPECT_THAT(
      refused.status().message(),
      HasSubstr("node 'groups' (GroupNormalization, opset 18): op 'GroupNormalization' has no form in opset 17"));

  model.mutable_opset_import(0)->set_version(22);
  EXPECT_THAT(import_model(model).status().message(),
              HasSubstr("opset 22 of the default ONNX domain is not supported"));
}

TEST(OnnxImporter, AnInputBoundToAValueFoldsTheIfItDecides) {
  const onnx::ModelProto model = if_model(/*constant_condition=*/false, false);
  ImportOptions options;
  options.input_values["c"] = {1};  // a bool input, bound to true
  Result<ImportedModel> imported = import_model(model, options);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph& graph = graph_of(*imported);
  EXPECT_THAT(op_types(graph), ElementsAre("Relu", "Add"));  // the then branch, inlined
  ASSERT_EQ(graph.inputs()->size(), 1u);                     // c is no longer an input

  options.input_values["c"] = {1, 0};
  Result<ImportedModel> too_many = import_model(model, options);
  EXPECT_EQ(too_many.code(), Error::kInvalidArgument);
  EXPECT_THAT(too_many.status().message(), HasSubstr("input 'c' (bound with a value): its shape [] holds 1 values"));
  options.input_values = {{"rate", {16000}}};
  Result<ImportedModel> unknown = import_model(model, options);
  EXPECT_EQ(unknown.code(), Error::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("'rate' is not an input of the model"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("its inputs: x, c"));
}

// ---- Sequences known at compile time ----------------------------------------------------

std::vector<float> iota_from(float first, size_t count) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = first + static_cast<float>(i);
  return values;
}

TEST(OnnxImporter, SequencesKnownAtCompileTimeBecomeTheirTensors) {
  onnx::ModelProto model = make_model(13);
  for (const char* name : {"a", "b", "c"}) add_input(model, name, {2, 3});
  add_int64_initializer(model, "one", {}, {1});
  add_int64_initializer(model, "last", {}, {-1});
  add_node(model, "SequenceConstruct", "construct", {"a", "b"}, {"s1"});
  add_node(model, "SequenceInsert", "insert", {"s1", "c", "one"}, {"s2"});  // a, c, b
  add_node(model, "SequenceErase", "erase", {"s2"}, {"s3"});                // a, c
  add_node(model, "SequenceAt", "at", {"s3", "last"}, {"y"});               // c
  add_node(model, "SequenceLength", "length", {"s2"}, {"n"});
  set_int(add_node(model, "ConcatFromSequence", "concat", {"s2"}, {"z"}), "axis", 0);
  onnx::NodeProto* stack = add_node(model, "ConcatFromSequence", "stack", {"s3"}, {"w"});
  set_int(stack, "axis", 1);
  set_int(stack, "new_axis", 1);
  add_output(model, "y", {2, 3});
  add_output(model, "n", {}, onnx::TensorProto::INT64);
  add_output(model, "z", {6, 3});
  add_output(model, "w", {2, 2, 3});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  std::vector<HostTensor> outputs =
      run_portable(*imported, {float_tensor({2, 3}, iota_from(0, 6)), float_tensor({2, 3}, iota_from(10, 6)),
                               float_tensor({2, 3}, iota_from(20, 6))});
  ASSERT_EQ(outputs.size(), 4u);
  EXPECT_EQ(floats_of(outputs[0]), iota_from(20, 6));
  int64_t n = 0;
  ASSERT_EQ(outputs[1].bytes.size(), sizeof(n));
  std::memcpy(&n, outputs[1].bytes.data(), sizeof(n));
  EXPECT_EQ(n, 3);
  std::vector<float> z = iota_from(0, 6);
  for (float first : {20.0f, 10.0f}) {
    const std::vector<float> more = iota_from(first, 6);
    z.insert(z.end(), more.begin(), more.end());
  }
  EXPECT_EQ(floats_of(outputs[2]), z);
  // w[i][k] = s3[k][i]: rows of a, then of c, interleaved.
  EXPECT_THAT(floats_of(outputs[3]), ElementsAre(0, 1, 2, 20, 21, 22, 3, 4, 5, 23, 24, 25));
}

TEST(OnnxImporter, SplitToSequenceBecomesSlices) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "x", {4, 3});
  add_int64_initializer(model, "two", {}, {2});
  add_int64_initializer(model, "sizes", {2}, {1, 3});
  onnx::NodeProto* rows = add_node(model, "SplitToSequence", "rows", {"x"}, {"r"});
  set_int(rows, "keepdims", 0);
  add_node(model, "SequenceAt", "third_row", {"r", "two"}, {"row"});  // [3]
  add_node(model, "SplitToSequence", "sized", {"x", "sizes"}, {"t"});
  add_node(model, "SequenceAt", "bottom", {"t", "last"}, {"bottom3"});
  add_int64_initializer(model, "last", {}, {-1});
  set_int(add_node(model, "SplitToSequence", "columns", {"x", "two"}, {"u"}), "axis", 1);  // [4, 2], [4, 1]
  add_node(model, "SequenceLength", "count", {"u"}, {"m"});
  set_int(add_node(model, "ConcatFromSequence", "back", {"u"}, {"x_again"}), "axis", 1);
  add_output(model, "row", {3});
  add_output(model, "bottom3", {3, 3});
  add_output(model, "m", {}, onnx::TensorProto::INT64);
  add_output(model, "x_again", {4, 3});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  std::vector<HostTensor> outputs = run_portable(*imported, {float_tensor({4, 3}, iota_from(0, 12))});
  ASSERT_EQ(outputs.size(), 4u);
  EXPECT_THAT(floats_of(outputs[0]), ElementsAre(6, 7, 8));
  EXPECT_EQ(floats_of(outputs[1]), iota_from(3, 9));
  int64_t m = 0;
  std::memcpy(&m, outputs[2].bytes.data(), sizeof(m));
  EXPECT_EQ(m, 2);
  EXPECT_EQ(floats_of(outputs[3]), iota_from(0, 12));
}

TEST(OnnxImporter, ASequencePositionGivenAtRunTimeIsRefusedSayingWhatToDo) {
  onnx::ModelProto model = make_model(13);
  add_input(model, "a", {2});
  add_input(model, "p", {}, onnx::TensorProto::INT64);
  add_node(model, "SequenceConstruct", "construct", {"a", "a"}, {"s"});
  add_node(model, "SequenceAt", "at", {"s", "p"}, {"y"});
  add_output(model, "y", {2});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_FALSE(imported.is_ok());
  EXPECT_THAT(imported.status().message(), HasSubstr("its position 'p' is not a constant integer"));
  EXPECT_THAT(imported.status().message(), HasSubstr("--input-value"));
  ImportOptions bound;
  bound.input_values["p"] = {1};
  Result<ImportedModel> with_value = import_model(model, bound);
  ASSERT_TRUE(with_value.is_ok()) << with_value.status().to_string();
}

TEST(OnnxImporter, AnIfOnAnOptionalKnownAtCompileTimeBecomesItsBranch) {
  // c = OptionalHasElement(Optional(x)): TorchScript's `is not None`, true here.
  onnx::ModelProto model = if_model(false, false);
  model.mutable_opset_import(0)->set_version(15);        // Optional's first
  model.mutable_graph()->mutable_input()->RemoveLast();  // c is computed instead
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::NodeProto if_node = graph->node(0);
  graph->clear_node();
  add_node(model, "Optional", "wrap", {"x"}, {"o"});
  add_node(model, "OptionalHasElement", "has", {"o"}, {"c"});
  *graph->add_node() = if_node;
  add_node(model, "OptionalGetElement", "get", {"o"}, {"x_again"});
  add_output(model, "x_again", {2});
  Result<ImportedModel> imported = import_model(model, {});
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  EXPECT_THAT(op_types(graph_of(*imported)), ElementsAre("Relu", "Add", "Identity"));
  std::vector<HostTensor> outputs = run_portable(*imported, {float_tensor({2}, {-1, 2})});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_THAT(floats_of(outputs[0]), ElementsAre(10, 22));  // Relu(x) + [10, 20]
  EXPECT_THAT(floats_of(outputs[1]), ElementsAre(-1, 2));
}

TEST(OnnxImporter, TheElementOfAnEmptyOptionalIsRefused) {
  onnx::ModelProto model = make_model(15);
  add_input(model, "x", {2});
  onnx::NodeProto* empty = add_node(model, "Optional", "none", {}, {"o"});
  onnx::AttributeProto* type = empty->add_attribute();
  type->set_name("type");
  type->set_type(onnx::AttributeProto::TYPE_PROTO);
  type->mutable_tp()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  add_node(model, "OptionalGetElement", "get", {"o"}, {"v"});
  add_node(model, "Add", "add", {"x", "v"}, {"y"});
  add_output(model, "y", {2});
  Result<ImportedModel> imported = import_model(model);
  ASSERT_FALSE(imported.is_ok());
  EXPECT_THAT(imported.status().message(), HasSubstr("its optional 'o' is empty"));
}

}  // namespace
}  // namespace plugrt::compiler
