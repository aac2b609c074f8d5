// SPDX-License-Identifier: Apache-2.0
// The per-backend checks of results: the op samples against the portable backend,
// constants by name, graphs with symbols.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "backend_contract.h"
#include "op_samples.h"
#include "plugrt/graph_builder.h"
#include "thread_watch.h"

namespace plugrt::sdk::testing::kit {

TEST_P(BackendContract, ResultsMatchThePortableBackendOnEveryOpItTakes) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  if (backend_->struct_size < PLUGRT_BACKEND_SIZE_1_0 || backend_->aot == nullptr) {
    GTEST_SKIP() << "the backend has no ahead-of-time table (partition/preprocess) to take the op samples";
  }
  std::vector<std::string> lines;
  size_t taken = 0;
  uint32_t seed = 7;
  for (const OpSample& op : op_samples()) {
    if (!takes_its_node(op.graph)) {
      lines.push_back(op.description + ": not taken");
      continue;
    }
    ++taken;
    std::vector<uint8_t> blob;
    plugrt_blob_flags blob_flags = 0;
    const plugrt_status preprocessed = preprocess(op.graph, 0, &blob, &blob_flags);
    if (preprocessed != PLUGRT_STATUS_OK) {
      ADD_FAILURE() << op.description << ": partition took it but preprocess failed with " << name_of(preprocessed)
                    << ": " << host_.last_error();
      continue;
    }
    plugrt_delegate_handle handle = nullptr;
    const plugrt_status initialized = init(blob, &handle);
    if (initialized != PLUGRT_STATUS_OK) {
      ADD_FAILURE() << op.description << ": init refused the blob its own preprocess made, with "
                    << name_of(initialized) << ": " << host_.last_error();
      continue;
    }
    Call call;
    std::vector<OwnedTensor*> inputs;
    for (const std::vector<int64_t>& shape : op.input_shapes) {
      call.inputs.push_back(std::make_unique<OwnedTensor>(kF32, shape));
      const std::vector<float> values = seeded_values(static_cast<size_t>(call.inputs.back()->count()), ++seed);
      std::copy(values.begin(), values.end(), call.inputs.back()->f32());
      inputs.push_back(call.inputs.back().get());
    }
    call.outputs.push_back(std::make_unique<OwnedTensor>(kF32, op.output_shape));
    poison(*call.outputs[0]);
    const plugrt_status executed = runtime_->execute(handle, call.finish());
    runtime_->destroy(handle);
    if (executed != PLUGRT_STATUS_OK) {
      ADD_FAILURE() << op.description << ": execute failed with " << name_of(executed) << ": " << host_.last_error();
      continue;
    }
    Result<std::vector<float>> want = portable_result(op, inputs);
    if (!want.is_ok()) {
      lines.push_back(op.description + ": taken; not compared (the portable backend: " + want.status().to_string() +
                      ")");
      continue;
    }
    float largest = 0;
    for (size_t k = 0; k < want->size(); ++k) {
      const float got = call.outputs[0]->f32()[k];
      const float difference = std::fabs(got - (*want)[k]);
      const float allowed = kAbsoluteTolerance + kRelativeTolerance * std::fabs((*want)[k]);
      if (!(difference <= allowed)) {
        ADD_FAILURE() << op.description << ": output element " << k << " is " << got << ", the portable backend gives "
                      << (*want)[k] << " (difference " << difference << ", allowed " << allowed << ")"
                      << poisoned_hint(got)
                      << ".\nFix: the backend computes this op wrong; compare it with the ONNX operator's definition";
        largest = std::numeric_limits<float>::infinity();
        break;
      }
      largest = std::max(largest, difference);
    }
    if (std::isfinite(largest)) {
      lines.push_back(op.description + ": taken, agrees with the portable backend (largest difference " +
                      std::to_string(largest) + ")");
    } else {
      lines.push_back(op.description + ": taken, DIFFERS from the portable backend");
    }
  }
  for (const std::string& line : lines) std::cout << "[ OPS      ] backend '" << GetParam() << "': " << line << "\n";
  std::cout << std::flush;
  if (taken == 0) GTEST_SKIP() << "the backend's partition takes none of the kit's op samples";
}

// ABI 1.4: offered a graph's constants by name, a backend may name them in its blob. Then
// init must read them from what the host lends, compute the same result, and refuse the
// blob as incompatible (never crash or run without them) when nothing is lent.
TEST_P(BackendContract, ABlobThatNamesConstantsReadsThemFromTheHost) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  if (backend_->struct_size < PLUGRT_BACKEND_SIZE_1_0 || backend_->aot == nullptr) {
    GTEST_SKIP() << "the backend has no ahead-of-time table to offer constants to";
  }
  if (!host_abi().offers_constants_by_name()) {
    GTEST_SKIP() << "a host of ABI " << host_abi().text() << " offers no constants by name (--host-abi)";
  }
  // y = x + c, c a constant of the same shape.
  const std::vector<int64_t> shape = {2, 3};
  std::vector<float> constant;
  for (int i = 0; i < 6; ++i) constant.push_back(0.25f * static_cast<float>(i) - 0.5f);
  GraphBuilder g;
  ValueId x = g.add_value("x", DType::kFloat32, shape);
  ValueId c = g.add_constant_f32("c", shape, constant);
  ValueId y = g.add_value("y", DType::kFloat32, shape);
  g.add_node("Add", "Add_0", {x, c}, {y});
  g.add_input(x);
  g.add_output(y);
  const std::vector<uint8_t> graph = g.finish();
  if (!takes_its_node(graph)) GTEST_SKIP() << "partition does not take an Add of a float32[2,3] input and constant";
  std::vector<uint8_t> blob;
  plugrt_blob_flags blob_flags = 0;
  const plugrt_status preprocessed = preprocess(graph, PLUGRT_PREPROCESS_CONSTANTS_BY_NAME, &blob, &blob_flags);
  ASSERT_EQ(preprocessed, PLUGRT_STATUS_OK)
      << "preprocess failed with " << name_of(preprocessed) << ": " << host_.last_error();
  if ((blob_flags & PLUGRT_BLOB_NAMES_CONSTANTS) == 0) {
    GTEST_SKIP() << "the blob holds its constants (the backend did not take the offer)";
  }

  Sample sample;  // its inputs and outputs: one float32[2,3] each
  sample.input_shapes = {shape};
  sample.output_shapes = {shape};
  const plugrt_named_constant lent[] = {{{"c", 1}, constant.data(), constant.size() * sizeof(float)}};
  plugrt_init_args init{};
  init.struct_size = PLUGRT_INIT_ARGS_SIZE;
  init.blob = blob.data();
  init.blob_size = blob.size();
  init.constants = lent;
  init.num_constants = 1;
  give_init_options(&init);
  plugrt_delegate_handle handle = nullptr;
  const plugrt_status status = runtime_->init(runtime_->context, host_.plugrt_table(), &init, &handle);
  ASSERT_EQ(status, PLUGRT_STATUS_OK) << "init refused a blob that names constants, with them lent: " << name_of(status)
                                      << ": " << host_.last_error();
  Call call = make_call(sample);
  ASSERT_EQ(runtime_->execute(handle, call.finish()), PLUGRT_STATUS_OK) << host_.last_error();
  for (int64_t k = 0; k < 6; ++k) {
    EXPECT_FLOAT_EQ(call.outputs[0]->f32()[k], call.inputs[0]->f32()[k] + constant[static_cast<size_t>(k)])
        << "element " << k << ": the result does not use the lent constant 'c'";
  }
  runtime_->destroy(handle);

  init.constants = nullptr;
  init.num_constants = 0;
  handle = nullptr;
  const plugrt_status without = runtime_->init(runtime_->context, host_.plugrt_table(), &init, &handle);
  if (without == PLUGRT_STATUS_OK) runtime_->destroy(handle);
  EXPECT_EQ(without, PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY)
      << "init of a blob that names constants, with none lent (a host older than ABI 1.4), returned "
      << name_of(without) << ".\nFix: refuse it with Status::incompatible_blob, so that the host runs the fallback";
}

// ABI 1.5: a backend that says it reads graphs whose dimensions vary
// (PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS) must run one at every shape within its bounds,
// and refuse a call past them with a status, never write past the bound's memory.
TEST_P(BackendContract, AGraphWithSymbolsRunsAtEachCallsShapes) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  if ((backend_->capabilities & PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS) == 0 || backend_->aot == nullptr) {
    GTEST_SKIP() << "the backend takes static graphs only (no PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS)";
  }
  if (!host_abi().gives_graphs_with_symbols()) {
    GTEST_SKIP() << "a host of ABI " << host_abi().text() << " gives no graphs with symbols (--host-abi)";
  }
  // y = Relu(x), x and y float32[2, n] with n in 1..8.
  constexpr int64_t kMax = 8;
  GraphBuilder g;
  const common::DimExpr n = common::DimExpr::symbol(g.add_symbol("n", 1, kMax));
  ValueId x = g.add_dynamic_value("x", DType::kFloat32, {common::DimExpr::constant(2), n});
  ValueId y = g.add_dynamic_value("y", DType::kFloat32, {common::DimExpr::constant(2), n});
  g.add_node("Relu", "Relu_0", {x}, {y});
  g.add_input(x);
  g.add_output(y);
  const std::vector<uint8_t> graph = g.finish();
  if (!takes_its_node(graph)) GTEST_SKIP() << "partition does not take a Relu of float32[2, n], n in 1..8";
  std::vector<uint8_t> blob;
  plugrt_blob_flags blob_flags = 0;
  const plugrt_status preprocessed = preprocess(graph, 0, &blob, &blob_flags);
  ASSERT_EQ(preprocessed, PLUGRT_STATUS_OK)
      << "preprocess failed with " << name_of(preprocessed) << ": " << host_.last_error();
  plugrt_delegate_handle handle = nullptr;
  const plugrt_status status = init(blob, &handle);
  ASSERT_EQ(status, PLUGRT_STATUS_OK) << "init failed with " << name_of(status) << ": " << host_.last_error();
  for (int64_t length : {int64_t{1}, int64_t{5}, kMax, int64_t{5}}) {
    Sample sample;
    sample.input_shapes = {{2, length}};
    sample.output_shapes = {{2, length}};
    Call call = make_call(sample);
    ASSERT_EQ(runtime_->execute(handle, call.finish()), PLUGRT_STATUS_OK)
        << "execute at n = " << length << ": " << host_.last_error();
    for (int64_t k = 0; k < 2 * length; ++k) {
      EXPECT_EQ(call.outputs[0]->f32()[k], std::max(0.0f, call.inputs[0]->f32()[k]))
          << "n = " << length << ", element " << k;
    }
  }
  Sample past;
  past.input_shapes = {{2, kMax + 1}};
  past.output_shapes = {{2, kMax + 1}};
  Call call = make_call(past);
  EXPECT_NE(runtime_->execute(handle, call.finish()), PLUGRT_STATUS_OK)
      << "execute accepted n = " << kMax + 1 << ", past the bound 8 its graph gives";
  runtime_->destroy(handle);
}

// Called by run_contract_tests, so that a static link keeps this file's checks.
void keep_result_checks() {}

}  // namespace plugrt::sdk::testing::kit
