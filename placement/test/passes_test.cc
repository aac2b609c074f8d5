// SPDX-License-Identifier: Apache-2.0
// Graph passes on small graphs: what each removes or merges, and that the portable
// backend computes the same outputs before and after.
#include "plugrt/placement/passes.h"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

std::vector<int64_t> shape_of(const ir::Value& value) {
  return value.shape() != nullptr ? std::vector<int64_t>(value.shape()->begin(), value.shape()->end())
                                  : std::vector<int64_t>();
}

size_t elements(const std::vector<int64_t>& shape) {
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  return count;
}

/// Runs a float graph on the portable backend with inputs 0.37 * i - 3 (i: element index)
/// and returns its outputs.
std::vector<std::vector<float>> run_portable(const std::vector<uint8_t>& bytes) {
  const ir::Graph& graph = *ir::GetGraph(bytes.data());
  InitOptions options;
  options.blob = bytes.data();
  options.blob_size = bytes.size();
  Result<DelegateHandle> handle = builtin_portable_backend().init(options);
  EXPECT_TRUE(handle.is_ok()) << handle.status().to_string();
  if (!handle.is_ok()) return {};
  std::vector<std::vector<float>> inputs, outputs;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<DLTensor> tensors;
  auto add = [&](std::vector<std::vector<float>>& storage, int32_t v, bool fill) {
    shapes.push_back(shape_of(*graph.values()->Get(static_cast<flatbuffers::uoffset_t>(v))));
    storage.emplace_back(elements(shapes.back()));
    for (size_t i = 0; fill && i < storage.back().size(); ++i) storage.back()[i] = 0.37f * static_cast<float>(i) - 3;
  };
  inputs.reserve(graph.inputs()->size());
  outputs.reserve(graph.outputs()->size());
  shapes.reserve(graph.inputs()->size() + graph.outputs()->size());
  for (int32_t v : *graph.inputs()) add(inputs, v, true);
  for (int32_t v : *graph.outputs()) add(outputs, v, false);
  std::vector<const DLTensor*> in_views, out_views;
  tensors.reserve(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    float* data = i < inputs.size() ? inputs[i].data() : outputs[i - inputs.size()].data();
    tensors.push_back(DLTensor{
        data, {kDLCPU, 0}, static_cast<int32_t>(shapes[i].size()), {kDLFloat, 32, 1}, shapes[i].data(), nullptr, 0});
  }
  for (size_t i = 0; i < tensors.size(); ++i) (i < inputs.size() ? in_views : out_views).push_back(&tensors[i]);
  Status status = handle->execute(in_views, out_views);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return outputs;
}

std::vector<std::string> op_types(const std::vector<uint8_t>& bytes) {
  std::vector<std::string> ops;
  for (const ir::Node* node : *ir::GetGraph(bytes.data())->nodes()) ops.push_back(node->op_type()->str());
  return ops;
}

/// Runs the passes, checks the results match on portable, returns them.
PassResult passes_keeping_results(const std::vector<uint8_t>& before) {
  Result<PassResult> after = run_graph_passes(before);
  EXPECT_TRUE(after.is_ok()) << after.status().to_string();
  if (!after.is_ok()) return {};
  const std::vector<std::vector<float>> expected = run_portable(before), actual = run_portable(after->graph);
  EXPECT_EQ(actual.size(), expected.size());
  for (size_t o = 0; o < std::min(actual.size(), expected.size()); ++o) {
    EXPECT_EQ(actual[o].size(), expected[o].size());
    for (size_t i = 0; i < std::min(actual[o].size(), expected[o].size()); ++i)
      EXPECT_NEAR(actual[o][i], expected[o][i], 1e-5) << o << ":" << i;
  }
  return std::move(after).value();
}

TEST(GraphPasses, RemoveIdentityAndSameShapeReshapes) {
  GraphBuilder g;
  ValueId x = g.add_value("x", DType::kFloat32, {2, 3});
  ValueId a = g.add_value("a", DType::kFloat32, {2, 3});
  ValueId b = g.add_value("b", DType::kFloat32, {2, 3});
  ValueId c = g.add_value("c", DType::kFloat32, {2, 3});
  ValueId d = g.add_value("d", DType::kFloat32, {2, 3});
  ValueId y = g.add_value("y", DType::kFloat32, {2, 3});
  ValueId shape = g.add_constant_i64("shape", {2}, {2, 3});
  g.add_node("Identity", "id", {x}, {a});
  g.add_node("Relu", "relu", {a}, {b});
  g.add_node("Cast", "same_type", {b}, {c}, {Attribute::Int("to", 1)});
  g.add_node("Reshape", "same", {c, shape}, {d});
  g.add_node("Transpose", "keep", {d}, {y}, {Attribute::Ints("perm", {0, 1})});
  g.add_input(x);
  g.add_output(y);
  const PassResult result = passes_keeping_results(g.finish());
  // The Transpose writes a graph output: Relu writes it instead.
  EXPECT_THAT(op_types(result.graph), ElementsAre("Relu"));
  EXPECT_THAT(result.changes, ElementsAre(Pair("no_op", 4u)));
  const ir::Graph& graph = *ir::GetGraph(result.graph.data());
  EXPECT_EQ(graph.values()->Get(static_cast<flatbuffers::uoffset_t>(graph.outputs()->Get(0)))->name()->str(), "y");
}

/// x -> Relu -> [Dropout, with its mask output unread] -> Sigmoid -> y.
std::vector<uint8_t> relu_sigmoid(bool with_dropout) {
  GraphBuilder g;
  ValueId x = g.add_value("x", DType::kFloat32, {6});
  ValueId a = g.add_value("a", DType::kFloat32, {6});
  ValueId b = g.add_value("b", DType::kFloat32, {6});
  ValueId mask = g.add_value("mask", DType::kBool, {6});
  ValueId y = g.add_value("y", DType::kFloat32, {6});
  g.add_node("Relu", "relu", {x}, {a});
  if (with_dropout) g.add_node("Dropout", "drop", {a}, {b, mask});
  g.add_node("Sigmoid", "sigmoid", {with_dropout ? b : a}, {y});
  g.add_input(x);
  g.add_output(y);
  return g.finish();
}

TEST(GraphPasses, RemoveDropoutAtInference) {
  // The portable backend has no Dropout: compare with the graph written without it.
  Result<PassResult> result = run_graph_passes(relu_sigmoid(true));
  ASSERT_TRUE(result.is_ok());
  EXPECT_THAT(op_types(result->graph), ElementsAre("Relu", "Sigmoid"));
  EXPECT_THAT(result->changes, ElementsAre(Pair("no_op", 1u)));
  EXPECT_EQ(run_portable(result->graph), run_portable(relu_sigmoid(false)));
}

TEST(GraphPasses, KeepAnIdentityFromAnInputToAnOutput) {
  GraphBuilder g;
  ValueId x = g.add_value("x", DType::kFloat32, {4});
  ValueId y = g.add_value("y", DType::kFloat32, {4});
  g.add_node("Identity", "pass_through", {x}, {y});
  g.add_input(x);
  g.add_output(y);
  const PassResult result = passes_keeping_results(g.finish());
  EXPECT_THAT(op_types(result.graph), ElementsAre("Identity"));
  EXPECT_TRUE(result.changes.empty());
}

TEST(GraphPasses, RemoveDeadNodes) {
  GraphBuilder g;
  ValueId x = g.add_value("x", DType::kFloat32, {4});
  ValueId unused = g.add_value("unused", DType::kFloat32, {4});
  ValueId unused2 = g.add_value("unused2", DType::kFloat32, {4});
  ValueId y = g.add_value("y", DType::kFloat32, {4});
  g.add_node("Sigmoid", "dead", {x}, {unused});
  g.add_node("Neg", "dead_too", {unused}, {unused2});
  g.add_node("Relu", "live", {x}, {y});
  g.add_input(x);
  g.add_output(y);
  const PassResult result = passes_keeping_results(g.finish());
  EXPECT_THAT(op_types(result.graph), ElementsAre("Relu"));
  EXPECT_THAT(result.changes, ElementsAre(Pair("dead_node", 2u)));
  EXPECT_EQ(ir::GetGraph(result.graph.data())->values()->size(), 2u);  // the dead values are gone
}

TEST(GraphPasses, RemoveDropoutOfRatioZeroInTrainingMode) {
  // F.dropout(x, p=0.0) exports with training_mode true: it still passes x through.
  auto graph = [](float ratio) {
    GraphBuilder g;
    ValueId x = g.add_value("x", DType::kFloat32, {6});
    ValueId a = g.add_value("a", DType::kFloat32, {6});
    ValueId b = g.add_value("b", DType::kFloat32, {6});
    ValueId mask = g.add_value("mask", DType::kBool, {6});
    ValueId y = g.add_value("y", DType::kFloat32, {6});
    ValueId r = g.add_constant_f32("ratio", {}, {ratio});
    ValueId training = g.add_constant("training", DType::kBool, {}, {1});
    g.add_node("Relu", "relu", {x}, {a});
    g.add_node("Dropout", "drop", {a, r, training}, {b, mask});
    g.add_node("Sigmoid", "sigmoid", {b}, {y});
    g.add_input(x);
    g.add_output(y);
    return g.finish();
  };
  Result<PassResult> zero = run_graph_passes(graph(0.0f));
  ASSERT_TRUE(zero.is_ok());
  EXPECT_THAT(op_types(zero->graph), ElementsAre("Relu", "Sigmoid"));
  EXPECT_EQ(run_portable(zero->graph), run_portable(relu_sigmoid(false)));
  // A real ratio in training mode drops values: it stays.
  Result<PassResult> half = run_graph_passes(graph(0.5f));
  ASSERT_TRUE(half.is_ok());
  EXPECT_THAT(op_types(half->graph), ElementsAre("Relu", "Dropout", "Sigmoid"));
}

TEST(GraphPasses, GatherByAConstantScalarIndexBecomesSliceAndReshape) {
  // q, k = qkv[0], qkv[-1] on axis 0, and a column picked on the last axis; a Gather of
  // several indices stays.
  GraphBuilder g;
  ValueId x = g.add_value("x", DType::kFloat32, {3, 2, 4});
  ValueId first = g.add_value("first", DType::kFloat32, {2, 4});
  ValueId last = g.add_value("last", DType::kFloat32, {2, 4});
  ValueId column = g.add_value("column", DType::kFloat32, {3, 2});
  ValueId pair = g.add_value("pair", DType::kFloat32, {2, 2, 4});
  ValueId sum = g.add_value("sum", DType::kFloat32, {2, 4});
  g.add_node("Gather", "q", {x, g.add_constant_i64("zero", {}, {0})}, {first});
  g.add_node("Gather", "k", {x, g.add_constant_i64("minus_one", {}, {-1})}, {last});
  g.add_node("Gather", "col", {x, g.add_constant_i64("two", {}, {2})}, {column}, {Attribute::Int("axis", -1)});
  g.add_node("Gather", "two_rows", {x, g.add_constant_i64("rows", {2}, {0, 2})}, {pair});
  g.add_node("Add", "add", {first, last}, {sum});
  g.add_input(x);
  g.add_output(sum);
  g.add_output(column);
  g.add_output(pair);
  const PassResult result = passes_keeping_results(g.finish());
  EXPECT_THAT(op_types(result.graph),
              ElementsAre("Slice", "Reshape", "Slice", "Reshape", "Slice", "Reshape", "Gather", "Add"));
  EXPECT_THAT(result.changes, ElementsAre(Pair("gather_to_slice", 3u)));
}

/// x [2, 3, 4] -> layer normalization over the last axis written out as opsets before 17
/// export it, then * gamma + beta when `affine`; with `deviation_out` the Sqrt's result is
/// a graph output too.
std::vector<uint8_t> decomposed_layer_norm(int opset, bool affine, bool deviation_out = false) {
  GraphBuilder g(opset);
  const std::vector<int64_t> full = {2, 3, 4}, reduced = {2, 3, 1};
  ValueId x = g.add_value("x", DType::kFloat32, full);
  ValueId mean = g.add_value("mean", DType::kFloat32, reduced);
  ValueId centered = g.add_value("centered", DType::kFloat32, full);
  ValueId squared = g.add_value("squared", DType::kFloat32, full);
  ValueId variance = g.add_value("variance", DType::kFloat32, reduced);
  ValueId padded = g.add_value("padded", DType::kFloat32, reduced);
  ValueId deviation = g.add_value("deviation", DType::kFloat32, reduced);
  ValueId normalized = g.add_value("normalized", DType::kFloat32, full);
  std::vector<Attribute> axes = {Attribute::Ints("axes", {-1})};
  g.add_node("ReduceMean", "mean", {x}, {mean}, axes);
  g.add_node("Sub", "sub", {x, mean}, {centered});
  g.add_node("Pow", "pow", {centered, g.add_constant_f32("two", {}, {2.0f})}, {squared});
  g.add_node("ReduceMean", "variance", {squared}, {variance}, axes);
  g.add_node("Add", "epsilon", {variance, g.add_constant_f32("eps", {}, {1e-5f})}, {padded});
  g.add_node("Sqrt", "sqrt", {padded}, {deviation});
  g.add_node("Div", "div", {centered, deviation}, {normalized});
  ValueId y = normalized;
  if (affine) {
    ValueId scaled = g.add_value("scaled", DType::kFloat32, full);
    y = g.add_value("y", DType::kFloat32, full);
    g.add_node("Mul", "gamma", {normalized, g.add_constant_f32("g", {4}, {0.5f, 1.0f, 1.5f, 2.0f})}, {scaled});
    g.add_node("Add", "beta", {g.add_constant_f32("b", {1, 4}, {0.1f, 0.2f, 0.3f, 0.4f}), scaled}, {y});
  }
  g.add_input(x);
  g.add_output(y);
  if (deviation_out) g.add_output(deviation);
  return g.finish();
}

TEST(GraphPasses, WriteADecomposedLayerNormalizationAsOneOpFromOpset17) {
  for (bool affine : {false, true}) {
    const PassResult result = passes_keeping_results(decomposed_layer_norm(17, affine));
    EXPECT_THAT(op_types(result.graph), ElementsAre("LayerNormalization")) << affine;
    EXPECT_THAT(result.changes, ElementsAre(Pair("canonical_op", 1u)));
  }
  // Opset 16 has no LayerNormalization: the pattern stays.
  const PassResult old = passes_keeping_results(decomposed_layer_norm(16, true));
  EXPECT_EQ(op_types(old.graph).size(), 9u);
}

TEST(GraphPasses, LeaveALayerNormalizationPatternWhoseInnerValueIsReadElsewhere) {
  // The deviation also leaves the graph: removing its Sqrt would lose it.
  const PassResult result = passes_keeping_results(decomposed_layer_norm(17, false, /*deviation_out=*/true));
  EXPECT_EQ(op_types(result.graph).size(), 7u);
  EXPECT_TRUE(result.changes.empty());
}

TEST(GraphPasses, WriteGeluFromOpset20AndHardSwishFromOpset14) {
  auto graph = [](int opset) {
    GraphBuilder g(opset);
    const std::vector<int64_t> s = {2, 5};
    ValueId x = g.add_value("x", DType::kFloat32, s);
    ValueId scaled = g.add_value("scaled", DType::kFloat32, s);
    ValueId erf = g.add_value("erf", DType::kFloat32, s);
    ValueId sum = g.add_value("sum", DType::kFloat32, s);
    ValueId product = g.add_value("product", DType::kFloat32, s);
    ValueId gelu = g.add_value("gelu", DType::kFloat32, s);
    ValueId gate = g.add_value("gate", DType::kFloat32, s);
    ValueId swish = g.add_value("swish", DType::kFloat32, s);
    g.add_node("Div", "div", {x, g.add_constant_f32("root2", {}, {std::sqrt(2.0f)})}, {scaled});
    g.add_node("Erf", "erf", {scaled}, {erf});
    g.add_node("Add", "one", {erf, g.add_constant_f32("one", {}, {1.0f})}, {sum});
    g.add_node("Mul", "times_x", {x, sum}, {product});
    g.add_node("Mul", "half", {product, g.add_constant_f32("half", {}, {0.5f})}, {gelu});
    g.add_node("HardSigmoid", "gate", {gelu}, {gate}, {Attribute::Float("alpha", 1.0f / 6.0f)});
    g.add_node("Mul", "swish", {gate, gelu}, {swish});
    g.add_input(x);
    g.add_output(swish);
    return g.finish();
  };
  EXPECT_THAT(op_types(passes_keeping_results(graph(20)).graph), ElementsAre("Gelu", "HardSwish"));
  EXPECT_THAT(op_types(passes_keeping_results(graph(14)).graph),
              ElementsAre("Div", "Erf", "Add", "Mul", "Mul", "HardSwish"));
  EXPECT_EQ(op_types(passes_keeping_results(graph(13)).graph).size(), 7u);
}

TEST(GraphPasses, CollapseTransposeChains) {
  GraphBuilder g;
  ValueId x = g.add_value("x", DType::kFloat32, {2, 3, 4});
  ValueId a = g.add_value("a", DType::kFloat32, {3, 4, 2});
  ValueId b = g.add_value("b", DType::kFloat32, {4, 2, 3});
  ValueId y = g.add_value("y", DType::kFloat32, {4, 2, 3});
  g.add_node("Transpose", "t1", {x}, {a}, {Attribute::Ints("perm", {1, 2, 0})});
  g.add_node("Transpose", "t2", {a}, {b}, {Attribute::Ints("perm", {1, 2, 0})});
  g.add_node("Relu", "relu", {b}, {y});
  g.add_input(x);
  g.add_output(y);
  const PassResult result = passes_keeping_results(g.finish());
  EXPECT_THAT(op_types(result.graph), ElementsAre("Transpose", "Relu"));
  EXPECT_THAT(result.changes, ElementsAre(Pair("transpose_chain", 1u)));

  // Two that undo each other go away entirely.
  GraphBuilder undo;
  x = undo.add_value("x", DType::kFloat32, {2, 3});
  a = undo.add_value("a", DType::kFloat32, {3, 2});
  b = undo.add_value("b", DType::kFloat32, {2, 3});
  y = undo.add_value("y", DType::kFloat32, {2, 3});
  undo.add_node("Transpose", "t1", {x}, {a});
  undo.add_node("Transpose", "t2", {a}, {b});
  undo.add_node("Relu", "relu", {b}, {y});
  undo.add_input(x);
  undo.add_output(y);
  const PassResult undone = passes_keeping_results(undo.finish());
  EXPECT_THAT(op_types(undone.graph), ElementsAre("Relu"));
}

TEST(GraphPasses, CollapseReshapeChains) {
  GraphBuilder g;
  ValueId x = g.add_value("x", DType::kFloat32, {2, 3, 4});
  ValueId s1 = g.add_constant_i64("s1", {2}, {6, 4});
  ValueId a = g.add_value("a", DType::kFloat32, {6, 4});
  ValueId b = g.add_value("b", DType::kFloat32, {1, 24});
  ValueId y = g.add_value("y", DType::kFloat32, {1, 24});
  g.add_node("Reshape", "r1", {x, s1}, {a});
  g.add_node("Flatten", "f", {a}, {b}, {Attribute::Int("axis", 0)});
  g.add_node("Relu", "relu", {b}, {y});
  g.add_input(x);
  g.add_output(y);
  const PassResult result = passes_keeping_results(g.finish());
  EXPECT_THAT(op_types(result.graph), ElementsAre("Reshape", "Relu"));
  EXPECT_THAT(result.changes, ElementsAre(Pair("reshape_chain", 1u)));
}

/// x [1, 2, 5, 5] -> Pad(pads, value) -> `consumer` with a 3x3 window -> y.
std::vector<uint8_t> pad_then(const std::string& consumer, std::vector<int64_t> pads, float value,
                              std::vector<Attribute> attributes, std::vector<int64_t> out_shape) {
  GraphBuilder g(13);
  ValueId x = g.add_value("x", DType::kFloat32, {1, 2, 5, 5});
  ValueId p = g.add_constant_i64("pads", {8}, pads);
  ValueId v = g.add_constant_f32("value", {}, {value});
  std::vector<int64_t> padded = {1 + pads[0] + pads[4], 2 + pads[1] + pads[5], 5 + pads[2] + pads[6],
                                 5 + pads[3] + pads[7]};
  ValueId a = g.add_value("padded", DType::kFloat32, padded);
  ValueId y = g.add_value("y", DType::kFloat32, std::move(out_shape));
  g.add_node("Pad", "pad", {x, p, v}, {a});
  std::vector<ValueId> inputs = {a};
  if (consumer == "Conv") {
    std::vector<float> weights(3 * 2 * 9);
    for (size_t i = 0; i < weights.size(); ++i) weights[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
    inputs.push_back(g.add_constant_f32("w", {3, 2, 3, 3}, weights));
  }
  attributes.push_back(Attribute::Ints("kernel_shape", {3, 3}));
  g.add_node(consumer, "consumer", inputs, {y}, std::move(attributes));
  g.add_input(x);
  g.add_output(y);
  return g.finish();
}

TEST(GraphPasses, FoldZeroPadIntoConvAndAveragePool) {
  PassResult result = passes_keeping_results(pad_then("Conv", {0, 0, 1, 2, 0, 0, 1, 0}, 0, {}, {1, 3, 5, 5}));
  EXPECT_THAT(op_types(result.graph), ElementsAre("Conv"));
  EXPECT_THAT(result.changes, ElementsAre(Pair("pad_fold", 1u)));

  result = passes_keeping_results(pad_then("AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, 0, {}, {1, 2, 5, 5}));
  EXPECT_THAT(op_types(result.graph), ElementsAre("AveragePool"));
}

TEST(GraphPasses, FoldMinusInfinityPadIntoMaxPoolOnly) {
  const float minus_infinity = -std::numeric_limits<float>::infinity();
  PassResult result =
      passes_keeping_results(pad_then("MaxPool", {0, 0, 1, 1, 0, 0, 1, 1}, minus_infinity, {}, {1, 2, 5, 5}));
  EXPECT_THAT(op_types(result.graph), ElementsAre("MaxPool"));
  // Padding by zeros changes a max over negative values: it stays.
  result = passes_keeping_results(pad_then("MaxPool", {0, 0, 1, 1, 0, 0, 1, 1}, 0, {}, {1, 2, 5, 5}));
  EXPECT_THAT(op_types(result.graph), ElementsAre("Pad", "MaxPool"));
}

TEST(GraphPasses, LeavePadsThatCannotFold) {
  // Channels padded, a non-zero value, an AveragePool that excludes its own padding.
  PassResult result = passes_keeping_results(pad_then("AveragePool", {0, 1, 1, 1, 0, 0, 1, 1}, 0, {}, {1, 3, 5, 5}));
  EXPECT_THAT(op_types(result.graph), ElementsAre("Pad", "AveragePool"));
  result = passes_keeping_results(pad_then("Conv", {0, 0, 1, 1, 0, 0, 1, 1}, 1.5f, {}, {1, 3, 5, 5}));
  EXPECT_THAT(op_types(result.graph), ElementsAre("Pad", "Conv"));
  result = passes_keeping_results(
      pad_then("AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, 0, {Attribute::Ints("pads", {1, 1, 1, 1})}, {1, 2, 7, 7}));
  EXPECT_THAT(op_types(result.graph), ElementsAre("Pad", "AveragePool"));
}

TEST(GraphPasses, LeaveNodesReadingAbsentValuesAlone) {
  // Malformed for a backend, but the passes must neither crash nor rewrite them.
  GraphBuilder g;
  ValueId x = g.add_value("x", DType::kFloat32, {1, 1, 2, 2});
  ValueId a = g.add_value("a", DType::kFloat32, {1, 1, 2, 2});
  ValueId y1 = g.add_value("y1", DType::kFloat32, {1, 1, 2, 2});
  ValueId y2 = g.add_value("y2", DType::kFloat32, {1, 1, 2, 2});
  ValueId y3 = g.add_value("y3", DType::kFloat32, {1, 1, 2, 2});
  ValueId pads = g.add_constant_i64("pads", {8}, {0, 0, 0, 0, 0, 0, 0, 0});
  g.add_node("Dropout", "drop", {x}, {a, kNoValue});
  g.add_node("Transpose", "t", {kNoValue}, {y1});
  g.add_node("Transpose", "t2", {y1}, {y2});
  g.add_node("Pad", "pad", {kNoValue, pads}, {y3});
  g.add_input(x);
  g.add_output(a);
  g.add_output(y2);
  g.add_output(y3);
  Result<PassResult> result = run_graph_passes(g.finish());
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  EXPECT_THAT(op_types(result->graph), ElementsAre("Dropout", "Transpose", "Transpose", "Pad"));
}

TEST(GraphPasses, RefuseABufferThatIsNotAGraph) {
  const std::vector<uint8_t> junk = {1, 2, 3, 4, 5, 6, 7, 8};
  Result<PassResult> result = run_graph_passes(junk);
  EXPECT_EQ(result.code(), Error::kInvalidArgument);
}

}  // namespace
}  // namespace plugrt::placement
