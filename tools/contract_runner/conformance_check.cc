// SPDX-License-Identifier: Apache-2.0
// plugrt-contract-test --plugin P --conformance: the ONNX node tests through the plugin
// alone. A test runs when the plugin's partition takes every node of its model (as
// imported); otherwise it is unsupported, with the nodes it refused as the reason. The
// runs, comparisons and the report are the conformance runner's (tools/conformance/).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>

#include "plugin_session.h"
#include "report.h"
#include "runner.h"
#include "runner_modes.h"
#include "test_data.h"

namespace plugrt::contract_runner {

namespace {

constexpr char kTool[] = "plugrt-contract-test --conformance";
constexpr char kDefaultDataDir[] = "/usr/share/libonnx-testdata/data";
constexpr char kDataDirVariable[] = "PLUGRT_ONNX_TEST_DATA";

std::string data_directory(const ConformanceOptions& options) {
  if (!options.data.empty()) return options.data;
  const char* variable = std::getenv(kDataDirVariable);
  return variable != nullptr && *variable != '\0' ? variable : kDefaultDataDir;
}

struct Planned {
  conformance::TestCase test;
  Result<conformance::ModelInfo> model;
};

/// Runs every planned test on `backend`; failures print as they are known.
conformance::Report run_backend(PluginSession& session, const std::string& backend, const std::vector<Planned>& planned,
                                size_t num_threads) {
  conformance::RunOptions run_options;
  run_options.backends = {backend};
  run_options.only_backend = backend;
  run_options.method_threads = 1;  // tests run in parallel instead
  run_options.method_registry = &session.run_registry();
  std::vector<conformance::TestResult> results(planned.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < planned.size(); i = next.fetch_add(1)) {
      if (planned[i].model.is_ok()) {
        results[i] = conformance::run_test(planned[i].test, *planned[i].model, session.registry(), run_options);
      } else {
        results[i].verdict = conformance::Verdict::kFail;
        results[i].reason = "model.onnx: " + planned[i].model.status().message();
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < num_threads; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& thread : threads) thread.join();

  conformance::Report report({backend});
  for (size_t i = 0; i < planned.size(); ++i) {
    if (results[i].verdict == conformance::Verdict::kFail) {
      std::cout << "FAIL " << planned[i].test.name << ": " << results[i].reason << "\n";
    }
    const std::vector<std::string> ops =
        planned[i].model.is_ok() ? planned[i].model->op_types : std::vector<std::string>();
    report.add(planned[i].test, ops, results[i]);
  }
  return report;
}

}  // namespace

int run_conformance(const ConformanceOptions& options) {
  const std::string root = data_directory(options);
  Result<std::vector<conformance::TestCase>> tests = conformance::discover_tests(root, "node");
  if (!tests.is_ok()) {
    std::cerr << kTool << ": " << tests.status().message()
              << " (install Debian's libonnx-testdata, or give the data directory with --onnx-test-data DIR)\n";
    return 2;
  }
  Result<std::unique_ptr<PluginSession>> session =
      PluginSession::open(options.plugin_path, options.backend, options.isolated);
  if (!session.is_ok()) {
    std::cerr << kTool << ": " << session.status().message() << "\n";
    return 1;
  }
  if (!options.json.empty() && (*session)->backends().size() != 1) {
    std::cerr << kTool << ": --json writes one backend's report; name it with --backend\n";
    return 2;
  }

  std::vector<Planned> planned;
  for (conformance::TestCase& test : *tests) {
    Result<conformance::ModelInfo> model = conformance::read_model_info(test.dir + "/model.onnx");
    planned.push_back(Planned{std::move(test), std::move(model)});
  }
  bool any_failed = false;
  for (const std::string& backend : (*session)->backends()) {
    std::cout << "backend '" << backend << "' of " << options.plugin_path << ": the " << planned.size()
              << " ONNX node tests under " << root << "/node, each run on this backend alone when its "
              << "partition takes every node\n";
    conformance::Report report = run_backend(**session, backend, planned, std::max<size_t>(options.threads, 1));
    report.print_ops(std::cout);
    std::cout << report.summary_line() << "\n";
    any_failed = any_failed || report.failed() > 0;
    if (!options.json.empty()) {
      std::ofstream out(options.json, std::ios::trunc);
      out << report.to_json();
      if (!out) {
        std::cerr << kTool << ": cannot write --json " << options.json << "\n";
        return 1;
      }
    }
  }
  return any_failed ? 1 : 0;
}

}  // namespace plugrt::contract_runner
