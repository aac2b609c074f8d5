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

}  // namespace plugrt::backend_test

#endif  // PLUGRT_TEST_BACKEND_SUPPORT_BACKEND_TEST_SUPPORT_H_
