// SPDX-License-Identifier: Apache-2.0
// sdk::PerShapeDelegate: each specialization is lowered and initialised with the
// compile specs and runtime options the handle's own init was given.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "plugrt/common/dim_expr.h"
#include "plugrt/sdk/per_shape.h"
#include "plugrt/sdk/testing/matchers.h"
#include "plugrt/sdk/testing/mock_host.h"

namespace plugrt::sdk {
namespace {

using ::plugrt::sdk::testing::IsOk;
using ::testing::ElementsAre;

constexpr BlobFormat kVarying{"PRTTESTV", "test varying-shape", 2, 1};

/// Relu of float32[2, n], n in 1..8.
std::vector<uint8_t> relu_graph() {
  flatbuffers::FlatBufferBuilder builder;
  const std::vector<int64_t> bounds{2, 8};
  const std::vector<int64_t> two{common::dim_word(common::DimOp::kConstant, 2)};
  const std::vector<int64_t> n{common::dim_word(common::DimOp::kSymbol, 0)};
  const std::vector<flatbuffers::Offset<ir::Dim>> x_dims{ir::CreateDimDirect(builder, &two),
                                                         ir::CreateDimDirect(builder, &n)};
  const std::vector<flatbuffers::Offset<ir::Dim>> y_dims{ir::CreateDimDirect(builder, &two),
                                                         ir::CreateDimDirect(builder, &n)};
  const std::vector<flatbuffers::Offset<ir::Value>> values{
      ir::CreateValueDirect(builder, "x", ir::DType::Float32, &bounds, nullptr, &x_dims),
      ir::CreateValueDirect(builder, "y", ir::DType::Float32, &bounds, nullptr, &y_dims)};
  const std::vector<int32_t> in{0}, out{1};
  const std::vector<flatbuffers::Offset<ir::Node>> nodes{ir::CreateNodeDirect(builder, "Relu", "relu", &in, &out)};
  const std::vector<flatbuffers::Offset<ir::Symbol>> symbols{ir::CreateSymbolDirect(builder, "n", 1, 8)};
  ir::FinishGraphBuffer(builder, ir::CreateGraphDirect(builder, 2, 17, &values, &nodes, &in, &out, &symbols));
  return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

class Nothing : public Delegate {
 public:
  Status execute(const Arguments&) override { return Status::ok(); }
};

/// Says in `seen` which options each preprocess and init got.
class RecordingBackend : public Backend {
 public:
  static constexpr char kName[] = "recording";
  std::vector<std::string> seen;

  Expected<std::unique_ptr<Delegate>> init(const InitContext& context) override {
    seen.push_back("init " + context.compile_specs.get_string("level") + " " +
                   context.runtime_options.get_string("mode"));
    return std::unique_ptr<Delegate>(new Nothing);
  }
  Expected<std::vector<uint8_t>> preprocess(const PreprocessRequest& request) override {
    seen.push_back("preprocess " + request.compile_specs.get_string("level"));
    return std::vector<uint8_t>{1};
  }
};

TEST(PerShapeDelegate, LowersEveryShapeWithTheOptionsItsInitWasGiven) {
  ::testing::NiceMock<testing::MockHostServices> mock_host;
  const Host host(mock_host.plugrt_table());
  RecordingBackend backend;
  const std::vector<uint8_t> graph = relu_graph();
  const PreprocessRequest request{host, graph.data(), graph.size(), Options()};
  Expected<std::vector<uint8_t>> blob = PerShapeDelegate::write_blob(kVarying, request);
  ASSERT_THAT(blob, IsOk());

  std::unique_ptr<Delegate> handle;
  {
    // The host's options live only during init: these are overwritten right after.
    std::string level = "3", mode = "fast";
    const plugrt_option spec{{"level", 5}, level.data(), level.size()};
    const plugrt_option option{{"mode", 4}, mode.data(), mode.size()};
    const InitContext context{
        host, blob->data(),    blob->size(), Options(&spec, 1, "compile spec"), Options(&option, 1, "runtime option"),
        1,    NamedConstants()};
    Expected<std::unique_ptr<Delegate>> made = PerShapeDelegate::create(backend, kVarying, context);
    ASSERT_THAT(made, IsOk());
    handle = std::move(made).value();
    level.assign("x");
    mode.assign("y");
  }

  float in[10] = {}, out[10] = {};
  int64_t shape[2] = {2, 5};
  DLTensor x{in, {kDLCPU, 0}, 2, kFloat32, shape, nullptr, 0};
  DLTensor y{out, {kDLCPU, 0}, 2, kFloat32, shape, nullptr, 0};
  const DLTensor* ins[] = {&x};
  const DLTensor* outs[] = {&y};
  const plugrt_execute_args args{sizeof(args), ins, 1, outs, 1, 0, nullptr, 0, 0, nullptr, 0};
  EXPECT_THAT(handle->execute(Arguments(&args)), IsOk());
  // At the bounds when created, then at n = 5 for the call.
  EXPECT_THAT(backend.seen, ElementsAre("preprocess 3", "preprocess 3", "init 3 fast"));
}

}  // namespace
}  // namespace plugrt::sdk
