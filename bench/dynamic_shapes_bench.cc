// SPDX-License-Identifier: Apache-2.0
// What dimensions that vary cost on the portable backend (core/portable/dynamic_graph.h):
// a 2-layer MLP over x[n, 256], n in 1..64, called at a shape it has met (against the
// same graph compiled static at that shape), and called at a new shape each time (each
// call then compiles, the documented exception to "execute allocates nothing").
//   build/bench/plugrt_dynamic_shapes_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <vector>

#include "plugrt/backend.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/registry.h"

namespace plugrt {
namespace {

constexpr int64_t kWidth = 256;
constexpr int64_t kMaxRows = 64;

/// x[rows, 256] -> MatMul -> Relu -> MatMul -> y[rows, 256]; rows varies in 1..64 when
/// `fixed_rows` is 0, else is that.
std::vector<uint8_t> mlp_graph(int64_t fixed_rows) {
  std::mt19937 random(1);
  std::uniform_real_distribution<float> uniform(-0.1f, 0.1f);
  std::vector<float> w1(kWidth * kWidth), w2(kWidth * kWidth);
  for (float& v : w1) v = uniform(random);
  for (float& v : w2) v = uniform(random);
  GraphBuilder graph(13);
  const common::DimExpr width = common::DimExpr::constant(kWidth);
  const common::DimExpr rows = fixed_rows > 0 ? common::DimExpr::constant(fixed_rows)
                                              : common::DimExpr::symbol(graph.add_symbol("rows", 1, kMaxRows));
  auto value = [&](const char* name) { return graph.add_dynamic_value(name, DType::kFloat32, {rows, width}); };
  const ValueId x = value("x"), h = value("h"), r = value("r"), y = value("y");
  graph.add_node("MatMul", "fc1", {x, graph.add_constant_f32("w1", {kWidth, kWidth}, w1)}, {h});
  graph.add_node("Relu", "relu", {h}, {r});
  graph.add_node("MatMul", "fc2", {r, graph.add_constant_f32("w2", {kWidth, kWidth}, w2)}, {y});
  graph.add_input(x);
  graph.add_output(y);
  return graph.finish();
}

struct Session {
  Registry registry;
  std::vector<uint8_t> blob;
  std::optional<DelegateHandle> handle;
  std::vector<float> in = std::vector<float>(kMaxRows * kWidth, 0.5f), out = std::vector<float>(kMaxRows * kWidth);
  int64_t in_shape[2] = {0, kWidth}, out_shape[2] = {0, kWidth};

  explicit Session(int64_t fixed_rows) : blob(mlp_graph(fixed_rows)) {
    if (!register_builtin_backends(registry).is_ok()) std::abort();
    Result<RegisteredBackend> portable = registry.find_backend("portable");
    InitOptions init;
    init.blob = blob.data();
    init.blob_size = blob.size();
    init.num_threads = 1;
    Result<DelegateHandle> made = portable->init(init);
    if (!made.is_ok()) std::abort();
    handle.emplace(std::move(made).value());
  }
  void run(benchmark::State& state, int64_t rows) {
    in_shape[0] = out_shape[0] = rows;
    DLTensor in_view{in.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, in_shape, nullptr, 0};
    DLTensor out_view{out.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, out_shape, nullptr, 0};
    const DLTensor* inputs[] = {&in_view};
    const DLTensor* outputs[] = {&out_view};
    if (Status status = handle->execute(inputs, outputs); !status.is_ok())
      state.SkipWithError(status.message().c_str());
  }
};

void BM_StaticGraph(benchmark::State& state) {
  Session session(state.range(0));
  for (auto _ : state) session.run(state, state.range(0));
}
BENCHMARK(BM_StaticGraph)->Arg(1)->Arg(16)->Arg(64);

void BM_VaryingGraphAtAShapeItHasMet(benchmark::State& state) {
  Session session(0);
  session.run(state, state.range(0));  // meets it
  for (auto _ : state) session.run(state, state.range(0));
}
BENCHMARK(BM_VaryingGraphAtAShapeItHasMet)->Arg(1)->Arg(16)->Arg(64);

void BM_VaryingGraphAtANewShapeEachCall(benchmark::State& state) {
  // Nine lengths in turn: one more than the specializations kept, so each call compiles.
  Session session(0);
  int64_t rows = 0;
  for (auto _ : state) {
    session.run(state, 1 + rows);
    rows = (rows + 1) % 9;
  }
}
BENCHMARK(BM_VaryingGraphAtANewShapeEachCall);

}  // namespace
}  // namespace plugrt

BENCHMARK_MAIN();
