// SPDX-License-Identifier: Apache-2.0
// Executing a method allocates nothing: every operator new in this binary is counted,
// and the count must not move across execute() calls, on a plugin backend and on the
// portable fallback alike. (A separate binary, because it replaces operator new.)
#include <atomic>
#include <cstdlib>
#include <new>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/method.h"
#include "plugrt/plugins/plugin_loader.h"
#include "program_fixtures.h"
#include "test_plugin_files.h"

namespace {
std::atomic<long> g_allocations{0};
}

void* operator new(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new(size_t size, std::align_val_t alignment) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const size_t a = static_cast<size_t>(alignment);
  if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size, std::align_val_t alignment) { return operator new(size, alignment); }
// The nothrow forms too: a binary must replace every form or none, or memory from one
// runtime's operator new reaches the other's delete (AddressSanitizer reports that).
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  try {
    return operator new(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void* operator new(size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return operator new(size, alignment);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t size, std::align_val_t alignment, const std::nothrow_t& tag) noexcept {
  return operator new(size, alignment, tag);
}
// The replaced new allocates with malloc; where GCC inlines a delete below into a caller's
// `new T` (at -O1), it takes the pair for a mismatch.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace plugrt::testing {
namespace {

long allocations_during(Method& method, int runs) {
  const long before = g_allocations.load();
  for (int i = 0; i < runs; ++i) {
    if (!method.execute().is_ok()) return -1;
  }
  return g_allocations.load() - before;
}

TEST(ExecutorAllocation, TheCounterSeesAllocations) {
  const long before = g_allocations.load();
  // A direct call: unlike a new-expression, the compiler may not elide it.
  void* probe = ::operator new(16);
  ::operator delete(probe);
  EXPECT_EQ(g_allocations.load() - before, 1);
}

TEST(ExecutorAllocation, ExecutingOnAPluginAndOnTheFallbackAllocatesNothing) {
  Registry registry;
  ASSERT_TRUE(register_builtin_backends(registry).is_ok());
  plugins::SearchPathOptions search;
  search.use_environment = search.use_install_directory = search.use_executable_directory = false;
  plugins::PluginLoader loader(registry, search);
  ASSERT_TRUE(loader.load(plugin_file("good")).is_ok());

  for (const char* backend : {"offset", "missing"}) {  // "missing" runs on the portable fallback
    OffsetProgramOptions options;
    options.backend = backend;
    options.num_delegates = 8;
    Result<Program> program = Program::from_bytes(offset_program(options));
    ASSERT_TRUE(program.is_ok());
    Result<Method> method = Method::load(*program, "forward", registry);
    ASSERT_TRUE(method.is_ok()) << method.status().to_string();
    EXPECT_EQ(method->report().delegates[0].fell_back, std::string(backend) == "missing");
    ASSERT_TRUE(method->execute().is_ok());  // warm-up
    EXPECT_EQ(allocations_during(*method, 100), 0) << "on backend " << backend;
  }
}

// A graph whose dimensions vary, on the portable backend: a call at shapes it has met
// allocates nothing; the first call at new shapes compiles the graph for them, which
// allocates (the documented exception, core/portable/README.md).
TEST(ExecutorAllocation, AGraphWithSymbolsAllocatesOnlyAtShapesItHasNotMet) {
  Registry registry;
  ASSERT_TRUE(register_builtin_backends(registry).is_ok());
  Result<RegisteredBackend> portable = registry.find_backend("portable");
  ASSERT_TRUE(portable.is_ok());
  const std::vector<uint8_t> blob = relu_flatten_graph(32);
  InitOptions init;
  init.blob = blob.data();
  init.blob_size = blob.size();
  Result<DelegateHandle> handle = portable->init(init);
  ASSERT_TRUE(handle.is_ok()) << handle.status().to_string();

  static float in[32 * 4], out[32 * 4];  // static: no allocation here for the counter to see
  int64_t in_shape[2] = {0, 4};
  int64_t out_shape[1] = {0};
  DLTensor in_view{in, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, in_shape, nullptr, 0};
  DLTensor out_view{out, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, out_shape, nullptr, 0};
  const DLTensor* inputs[] = {&in_view};
  const DLTensor* outputs[] = {&out_view};
  auto allocations_at = [&](int64_t length, int runs) {
    in_shape[0] = length;
    out_shape[0] = 4 * length;
    const long before = g_allocations.load();
    for (int i = 0; i < runs; ++i) {
      if (!handle->execute(inputs, outputs).is_ok()) return -1L;
    }
    return g_allocations.load() - before;
  };
  EXPECT_GT(allocations_at(7, 1), 0);  // new: compiled now
  EXPECT_GT(allocations_at(20, 1), 0);
  EXPECT_EQ(allocations_at(7, 50), 0);
  EXPECT_EQ(allocations_at(20, 50), 0);
  EXPECT_EQ(allocations_at(32, 50), 0);  // the bounds: compiled at init
}

// A method whose dimensions vary: calls at a shape already met allocate nothing (binding
// the symbols and setting each value's shape included).
TEST(ExecutorAllocation, AMethodWhoseDimensionsVaryAllocatesNothingAtAShapeItHasMet) {
  Registry registry;
  ASSERT_TRUE(register_builtin_backends(registry).is_ok());
  Result<Program> program = Program::from_bytes(relu_flatten_program(32));
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  Result<Method> method = Method::load(*program, "forward", registry);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  static float rows[5 * 4];
  int64_t shape[2] = {5, 4};
  const DLTensor view{rows, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  ASSERT_TRUE(method->set_input(0, view).is_ok());
  ASSERT_TRUE(method->execute().is_ok());  // meets n = 5
  EXPECT_EQ(allocations_during(*method, 100), 0);
  EXPECT_EQ(method->output(0).shape[0], 20);
}

// A Reshape whose target is given at run time, on the portable backend: calls with
// values it has met allocate nothing; new values prepare the node again, which
// allocates (the documented exception, core/portable/README.md).
TEST(ExecutorAllocation, AParameterGivenAtRunTimeAllocatesOnlyForValuesNotMet) {
  Registry registry;
  ASSERT_TRUE(register_builtin_backends(registry).is_ok());
  Result<RegisteredBackend> portable = registry.find_backend("portable");
  ASSERT_TRUE(portable.is_ok());
  GraphBuilder graph;
  const ValueId x = graph.add_value("x", DType::kFloat32, {3, 4});
  const ValueId target = graph.add_value("target", DType::kInt64, {2});
  const ValueId y = graph.add_value("y", DType::kFloat32, {6, 2});
  graph.add_node("Reshape", "reshape", {x, target}, {y});
  graph.add_input(x);
  graph.add_input(target);
  graph.add_output(y);
  const std::vector<uint8_t> blob = graph.finish();
  InitOptions init;
  init.blob = blob.data();
  init.blob_size = blob.size();
  Result<DelegateHandle> handle = portable->init(init);
  ASSERT_TRUE(handle.is_ok()) << handle.status().to_string();

  static float in[12], out[12];
  static int64_t values[2];
  int64_t in_shape[2] = {3, 4}, target_shape[1] = {2}, out_shape[2] = {6, 2};
  DLTensor in_view{in, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, in_shape, nullptr, 0};
  DLTensor target_view{values, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, target_shape, nullptr, 0};
  DLTensor out_view{out, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, out_shape, nullptr, 0};
  const DLTensor* inputs[] = {&in_view, &target_view};
  const DLTensor* outputs[] = {&out_view};
  auto allocations_at = [&](int64_t rows, int64_t columns, int runs) {
    values[0] = rows;
    values[1] = columns;
    const long before = g_allocations.load();
    for (int i = 0; i < runs; ++i) {
      if (!handle->execute(inputs, outputs).is_ok()) return -1L;
    }
    return g_allocations.load() - before;
  };
  EXPECT_GT(allocations_at(6, 2, 1), 0);  // new values: prepared now
  EXPECT_GT(allocations_at(-1, 2, 1), 0);
  EXPECT_EQ(allocations_at(6, 2, 50), 0);
  EXPECT_EQ(allocations_at(-1, 2, 50), 0);
}

}  // namespace
}  // namespace plugrt::testing
