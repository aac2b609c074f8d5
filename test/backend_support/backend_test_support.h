// SPDX-License-Identifier: Apache-2.0
// Shared by the tests of each backend in backends/: a registry with the built-in
// backends and the backend's real plugin file, compiling graphs for a backend list,
// running programs.
#ifndef PLUGRT_TEST_BACKEND_SUPPORT_BACKEND_TEST_SUPPORT_H_
#define PLUGRT_TEST_BACKEND_SUPPORT_BACKEND_TEST_SUPPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler.h"
#include "plugrt/method.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "plugrt/registry.h"

namespace plugrt::backend_test {

/// A registry with the built-in backends and one plugin file (loaded on first use
/// through the plugin loader, as an application would).
class PluginEnvironment {
 public:
  explicit PluginEnvironment(const std::string& plugin_file);
  Registry& registry() { return registry_; }

  /// Compiles a graph IR model for `backends`; fails the test on error.
  compiler::CompiledModel compile(const std::vector<uint8_t>& graph, const std::vector<std::string>& backends);
  /// Compiles the bundled model models/<name>.onnx for `backends` (with the portable
  /// fallbacks unless `fallback` is false); fails the test on error.
  compiler::CompiledModel compile_model(const std::string& name, const std::vector<std::string>& backends,
                                        bool fallback = true);
  /// Loads "forward" of a program.
  Result<Method> load(const std::vector<uint8_t>& program, const MethodOptions& options = {});

 private:
  Registry registry_;
  std::unique_ptr<plugins::PluginLoader> loader_;
};

/// Fills every input with reproducible values in [-2, 2), runs once, and returns every
/// output's elements (float32).
std::vector<std::vector<float>> run_with_seed(Method& method, uint32_t seed);

/// The largest |a - b| / max(1, |b|) over two equally long lists (infinity when the
/// lengths differ).
double relative_difference(const std::vector<float>& actual, const std::vector<float>& expected);

/// Runs the bundled model's input (models/<name>.input.npy) through `method` and returns
/// the relative difference from PyTorch's output (models/<name>.output.npy).
double difference_from_pytorch(Method& method, const std::string& name);

/// The bytes of a file (empty when it cannot be read).
std::vector<uint8_t> read_file_bytes(const std::string& path);

/// What init says of a blob's bytes, copied to 8-byte aligned memory as blobs lie in a
/// program; a handle it makes is destroyed before the copy is.
Status init_status(const RegisteredBackend& backend, const std::vector<uint8_t>& bytes);

/// x [1, 4, 6, 6] -> Conv 3x3 (8 channels, pads 1) -> Relu: a graph every backend takes.
std::vector<uint8_t> conv_relu_graph();

/// Runs conv_relu_graph() on `backend` with a budget of 2 threads a few times, every
/// other call ending the backend's turn (PLUGRT_EXECUTE_PARK_WORKERS), so the next call
/// must wake the parked workers; every result must equal the first.
void expect_parked_workers_wake_for_the_next_call(PluginEnvironment& env, const std::string& backend);

/// Compiles conv_relu_graph() for `backend`, sets the version in its blob's header (found
/// by the blob's 8-byte `magic`) to 99, and checks that the program still loads: the
/// part falls back to portable, saying why, and gives the same result.
void expect_blob_of_another_version_falls_back(PluginEnvironment& env, const std::string& backend,
                                               const std::string& magic);

}  // namespace plugrt::backend_test

#endif  // PLUGRT_TEST_BACKEND_SUPPORT_BACKEND_TEST_SUPPORT_H_
