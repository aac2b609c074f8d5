// SPDX-License-Identifier: Apache-2.0
// plugrt_conformance: runs the ONNX backend test data (Debian's libonnx-testdata, or any
// copy of onnx/backend/test/data) through the whole pipeline: import, compile for the
// chosen backends, load, execute, compare. Prints "FAIL <test>: <reason>" for each
// failure, a table of the most frequent unsupported reasons, and a last line
// "<N> passed, <N> failed, <N> skipped" (skipped: unsupported). Exit code: 0 when no test
// failed, 1 otherwise, 2 on a usage error.
#include <regex.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>

#include "plugrt/builtin_backends.h"
#include "plugrt/registry.h"
#include "plugrt/runtime/runtime.h"
#include "portable_scope.h"
#include "report.h"
#include "runner.h"
#include "test_data.h"

namespace plugrt::conformance {
namespace {

constexpr char kDefaultDataDir[] = "/usr/share/libonnx-testdata/data";
constexpr char kDataDirVariable[] = "PLUGRT_ONNX_TEST_DATA";
constexpr size_t kReasonTableSize = 10;

struct Options {
  std::string data;
  std::vector<std::string> suites;
  std::vector<std::string> backends{kPortableBackendName};
  std::string filter;
  bool ops_from_portable = false;
  std::string json;
  std::vector<std::string> plugin_dirs;
  size_t threads = 1;
  bool quiet = false;
  bool no_freeze = false;
};

int usage_error(const std::string& message) {
  std::cerr << "plugrt_conformance: " << message << "\n";
  return 2;
}

std::string data_directory(const Options& options) {
  if (!options.data.empty()) return options.data;
  const char* variable = std::getenv(kDataDirVariable);
  if (variable != nullptr && *variable != '\0') return variable;
  return kDefaultDataDir;
}

// Every backend named must exist, compile ahead of time and run here: a test run that
// quietly fell back to portable would report on the wrong backend.
std::string check_backends(Registry& registry, const std::vector<std::string>& backends) {
  for (size_t i = 0; i < backends.size(); ++i) {
    const std::string& name = backends[i];
    if (std::find(backends.begin(), backends.begin() + static_cast<std::ptrdiff_t>(i), name) !=
        backends.begin() + static_cast<std::ptrdiff_t>(i)) {
      return "backend '" + name + "' is listed twice";
    }
    if (name == kPortableBackendName) continue;
    Result<RegisteredBackend> backend = registry.find_backend(name);
    if (!backend.is_ok()) return backend.status().message();
    if (!backend->has_aot()) return "backend '" + name + "' has no ahead-of-time entries, so it cannot compile";
    const Availability availability = backend->is_available();
    if (!availability.available) return "backend '" + name + "' is not available here: " + availability.reason;
  }
  return std::string();
}

// --filter: a POSIX extended regular expression, searched for in the test's name.
// (POSIX regex.h rather than <regex>, whose inlined code draws false maybe-uninitialized
// warnings from GCC 12 under the sanitizers, which this project builds with -Werror.)
class Filter {
 public:
  Filter() = default;
  Filter(const Filter&) = delete;
  Filter& operator=(const Filter&) = delete;
  ~Filter() {
    if (compiled_) regfree(&regex_);
  }
  /// Empty on success, else why the pattern is invalid.
  std::string compile(const std::string& pattern) {
    const int code = regcomp(&regex_, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
    if (code != 0) {
      char message[256];
      regerror(code, &regex_, message, sizeof(message));
      return message;
    }
    compiled_ = true;
    return std::string();
  }
  bool matches(const std::string& text) const { return regexec(&regex_, text.c_str(), 0, nullptr, 0) == 0; }

 private:
  regex_t regex_{};
  bool compiled_ = false;
};

struct Planned {
  TestCase test;
  Result<ModelInfo> model;
};

// Progress on a terminal: "[12/932] test_abs", rewritten in place on stderr.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled) {}
  void show(size_t done, size_t total, const std::string& name) {
    if (!enabled_) return;
    std::cerr << "\r[" << done << "/" << total << "] " << name << "\x1b[K" << std::flush;
  }
  void clear() {
    if (enabled_) std::cerr << "\r\x1b[K" << std::flush;
  }

 private:
  bool enabled_;
};

int run(const Options& options) {
  const std::string root = data_directory(options);
  std::error_code error;
  if (!std::filesystem::is_directory(root, error)) {
    return usage_error("no ONNX test data at " + root + " (pass --data DIR, set " + kDataDirVariable +
                       ", or install Debian's libonnx-testdata)");
  }

  std::vector<std::string> suites = options.suites;
  if (suites.empty()) {
    if (options.ops_from_portable) {
      suites = {"node"};
    } else {
      suites.assign(std::begin(kSuites), std::end(kSuites));
    }
  }
  for (const std::string& suite : suites) {
    if (std::find(std::begin(kSuites), std::end(kSuites), suite) == std::end(kSuites)) {
      return usage_error("unknown suite '" + suite + "' (node, simple, pytorch-converted, pytorch-operator)");
    }
    if (options.ops_from_portable && suite != "node") {
      return usage_error("--ops-from-portable runs the node suite only");
    }
  }

  std::optional<Filter> filter;
  if (!options.filter.empty()) {
    filter.emplace();
    if (std::string why = filter->compile(options.filter); !why.empty()) {
      return usage_error("--filter '" + options.filter + "' is not a valid regular expression: " + why);
    }
  }

  std::unique_ptr<std::ofstream> json_file;
  if (!options.json.empty()) {
    json_file = std::make_unique<std::ofstream>(options.json, std::ios::trunc);
    if (!*json_file) return usage_error("cannot write " + options.json);
  }

  // The runtime applications get, over the plugin directories given; the tests choose
  // their own backends, threads and placement (RunOptions below).
  Result<RuntimeOptions> runtime_options = RuntimeOptions::from_environment();
  if (!runtime_options.is_ok()) return usage_error(runtime_options.status().message());
  runtime_options->plugins.plugin_dirs = options.plugin_dirs;
  Result<std::unique_ptr<Runtime>> runtime = Runtime::create(*runtime_options);
  if (!runtime.is_ok()) {
    std::cerr << "plugrt_conformance: " << runtime.status().to_string() << "\n";
    return 1;
  }
  Registry& registry = (*runtime)->registry();
  if (std::string problem = check_backends(registry, options.backends); !problem.empty()) {
    return usage_error(problem);
  }

  std::optional<PortableOpSet> portable_ops;
  if (options.ops_from_portable) {
    Result<PortableOpSet> created = PortableOpSet::create();
    if (!created.is_ok()) {
      std::cerr << "plugrt_conformance: " << created.status().to_string() << "\n";
      return 1;
    }
    portable_ops.emplace(std::move(created).value());
  }

  // Which tests run: the suites' tests that pass the filter and, for the gate, are in
  // the portable backend's scope (portable_scope.h).
  std::vector<Planned> planned;
  for (const std::string& suite : suites) {
    Result<std::vector<TestCase>> tests = discover_tests(root, suite);
    if (!tests.is_ok()) return usage_error(tests.status().message());
    for (TestCase& test : *tests) {
      if (filter && !filter->matches(test.name)) continue;
      Result<ModelInfo> model = read_model_info(test.dir + "/model.onnx");
      if (portable_ops && model.is_ok() && !portable_ops->in_scope(model->op_types)) continue;
      planned.push_back(Planned{std::move(test), std::move(model)});
    }
  }

  if (portable_ops && planned.empty()) {
    // The gate would pass with nothing checked.
    std::cerr << "plugrt_conformance: no node test is in the portable backend's scope under " << root << "\n";
    return 1;
  }

  RunOptions run_options;
  run_options.backends = options.backends;
  run_options.method_threads = 1;  // tests run in parallel instead (--threads)
  run_options.freeze_parameters = !options.no_freeze;

  const size_t total = planned.size();
  std::vector<std::optional<TestResult>> results(total);
  Progress progress(!options.quiet && isatty(STDERR_FILENO) != 0);
  std::mutex mutex;
  size_t completed = 0, printed = 0;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < total; i = next.fetch_add(1)) {
      const Planned& plan = planned[i];
      TestResult result;
      if (plan.model.is_ok()) {
        result = run_test(plan.test, *plan.model, registry, run_options);
      } else {
        result.verdict = Verdict::kFail;
        result.reason = "model.onnx: " + plan.model.status().to_string();
        const std::string path = plan.test.dir + "/model.onnx: ";  // the message names the whole path
        const size_t at = result.reason.find(path);
        if (at != std::string::npos) result.reason.erase(at, path.size());
      }
      std::lock_guard<std::mutex> lock(mutex);
      results[i] = std::move(result);
      ++completed;
      // Failures print in test order, as soon as every earlier test is done.
      for (; printed < total && results[printed]; ++printed) {
        if (results[printed]->verdict != Verdict::kFail) continue;
        progress.clear();
        std::cout << "FAIL " << planned[printed].test.name << ": " << results[printed]->reason << "\n" << std::flush;
      }
      progress.show(completed, total, plan.test.name);
    }
  };
  const size_t num_threads = std::max<size_t>(1, std::min(options.threads, total));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < num_threads; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& thread : threads) thread.join();
  progress.clear();

  Report report(options.backends);
  for (size_t i = 0; i < total; ++i) {
    const std::vector<std::string> ops =
        planned[i].model.is_ok() ? planned[i].model->op_types : std::vector<std::string>();
    report.add(planned[i].test, ops, *results[i]);
  }
  if (json_file) {
    *json_file << report.to_json();
    json_file->close();
    if (!*json_file) {
      std::cerr << "plugrt_conformance: cannot write " << options.json << "\n";
      return 1;
    }
  }
  if (!options.quiet) {
    report.print_reasons(std::cout, kReasonTableSize);
    if (report.frozen_passes() > 0) {
      std::cout << report.frozen_passes()
                << " of the passes ran with parameter inputs frozen to the test's values (--no-freeze: not)\n";
    }
  }
  std::cout << report.summary_line() << "\n";
  return report.failed() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace plugrt::conformance

int main(int argc, char** argv) {
  using plugrt::conformance::Options;
  Options options;
  CLI::App app{
      "plugrt_conformance: runs the ONNX backend test data through import, compile, load, execute and compare"};
  app.add_option("--data", options.data,
                 "The ONNX test data directory (default: $PLUGRT_ONNX_TEST_DATA, else "
                 "/usr/share/libonnx-testdata/data)");
  app.add_option("--suites", options.suites,
                 "Comma-separated suites: node, simple, pytorch-converted, pytorch-operator (default: all; "
                 "node with --ops-from-portable)")
      ->delimiter(',');
  app.add_option("--backends", options.backends,
                 "Comma-separated backends, compiled for (placed by cost) and allowed at load (default: portable)")
      ->delimiter(',');
  app.add_option("--filter", options.filter,
                 "Only tests whose name matches this POSIX extended regular expression (searched, not anchored)");
  app.add_flag("--ops-from-portable", options.ops_from_portable,
               "The portable gate: only node tests whose ops all have portable kernels");
  app.add_option("--json", options.json, "Write a JSON report to this file");
  app.add_option("--plugin-dir", options.plugin_dirs, "Directory to search for plugins first (repeatable)");
  app.add_option("--threads", options.threads, "Tests run in parallel (default: 1)")
      ->check(CLI::Range(size_t{1}, size_t{1024}));
  app.add_flag("--no-freeze", options.no_freeze,
               "Never retry an unsupported test with its parameter inputs (Reshape's shape, Slice's starts) "
               "frozen into constants");
  app.add_flag("--quiet", options.quiet, "No progress and no reason table: failures and the count line only");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return plugrt::conformance::run(options);
  } catch (const std::exception& e) {
    std::cerr << "plugrt_conformance: unexpected exception: " << e.what() << "\n";
    return 1;
  }
}
