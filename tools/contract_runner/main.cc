// SPDX-License-Identifier: Apache-2.0
// plugrt-contract-test --plugin PATH [--blob FILE] [--gtest_filter=...]      the contract checks
// (each mode takes --isolate: the plugin's backends run in plugrt-backend-host processes)
// plugrt-contract-test --plugin PATH --model M.onnx --input N=F.npy --expect N=F.npy   one model
// plugrt-contract-test --plugin PATH --conformance [--onnx-test-data DIR]   the ONNX node tests
// The kit's runner, one binary: the contract checks are the kit's (sdk/contract,
// plugrt::contract); the model and conformance modes are tools, built here on the compiler
// and the conformance runner, so that the SDK includes nothing of tools/.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "plugrt/backend_options.h"
#include "plugrt/sdk/testing/contract.h"
#include "runner_modes.h"

namespace {

constexpr char kUsage[] =
    "usage:\n"
    "  plugrt-contract-test --plugin PATH [--blob FILE] [--isolate] [--require-available]\n"
    "                       [--check-timeout SECONDS] [--host-abi 1.N] [--compile-spec NAME.KEY=VALUE ...]\n"
    "                       [--runtime-option NAME.KEY=VALUE ...] [--gtest_filter=...]\n"
    "      the contract checks (see sdk/README.md): loading, metadata, exported symbols, blobs\n"
    "      refused, host allocations, silence, concurrency, and results: the kit's samples of each\n"
    "      op kind the backend's partition takes (Gemm, MatMul, Conv, pooling, Softmax,\n"
    "      element-wise), compared with the built-in portable backend within 1e-5 + 1e-4 * |want|;\n"
    "      outputs are filled with NaN before every execute, so an element never written fails.\n"
    "      Each per-backend check runs in a child process of its own: a crash fails that check\n"
    "      and the others still run; one that runs past --check-timeout (default 120) fails as a\n"
    "      hang. --require-available fails a backend that says it is unavailable instead of\n"
    "      skipping its checks. --host-abi 1.N plays a host of an older ABI minor (1.0 up to\n"
    "      this one): the args have that minor's sizes, the bytes past them a pattern, and what\n"
    "      it lacks is not offered (constants by name before 1.4, graphs with symbols before\n"
    "      1.5); the plugin must load and run, or refuse cleanly, as on that host. Not with\n"
    "      --isolate. ExecuteStaysWithinItsThreadBudget counts the process's threads while a\n"
    "      handle given a budget of 1, then 2, executes\n"
    "  plugrt-contract-test --plugin PATH [--backend NAME] [--isolate] --model M.onnx\n"
    "                       --input NAME=FILE.npy ... --expect NAME=FILE.npy ... [--dim NAME=MIN..MAX ...]\n"
    "                       [--compile-spec NAME.KEY=VALUE ...] [--runtime-option NAME.KEY=VALUE ...]\n"
    "      your model through the plugin alone (partition, preprocess, init, execute), each\n"
    "      expected output compared (float: |got - want| <= 1e-5 + 1e-3 * |want|; others exact).\n"
    "      The inputs' shapes fix the model's dynamic dimensions, except those --dim keeps\n"
    "      symbolic (NAME=MIN..MAX as plugrt compile takes it, or NAME=VALUE for VALUE..VALUE):\n"
    "      the plugin then gets a graph with symbols and each call's sizes from the inputs.\n"
    "      Each partition's constants are offered to preprocess by name, as plugrt compile\n"
    "      offers them, and a blob that names them gets them from the program at init\n"
    "  plugrt-contract-test --plugin PATH [--backend NAME] [--isolate] --conformance\n"
    "                       [--onnx-test-data DIR] [--threads N] [--json FILE]\n"
    "      every ONNX node test whose nodes the plugin's partition takes, through the plugin\n"
    "      alone: a per-op table and 'N passed, N failed, N skipped'; exit 1 when one fails\n"
    "  plugrt-contract-test --help\n"
    "--isolate, in every mode: the plugin's backends run in plugrt-backend-host processes, as the\n"
    "runtime's --isolate runs them; a backend that crashes or hangs there fails the check, model\n"
    "or test it was running (the runtime's portable fallback does not answer for it). In the model\n"
    "and conformance modes a backend that is unavailable here is an error. Exit codes: 0 when\n"
    "every check passed, 1 when one failed, 2 for a usage error; an argument no mode knows is a\n"
    "usage error\n";

bool arg_is_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using plugrt::contract_runner::ConformanceOptions;
  using plugrt::contract_runner::ModelCheckOptions;
  ModelCheckOptions model;
  ConformanceOptions conformance;
  bool conformance_mode = false;
  std::string threads;
  std::string host_abi;
  std::vector<std::string> unknown;  // GoogleTest's flags, for the contract checks
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const std::string& flag, std::string* out) {
      if (arg == flag && i + 1 < argc) {
        *out = argv[++i];
        return true;
      }
      if (arg.rfind(flag + "=", 0) == 0) {
        *out = arg.substr(flag.size() + 1);
        return true;
      }
      return false;
    };
    auto values = [&](const std::string& flag, std::vector<std::string>* out) {
      std::string one;
      if (!value(flag, &one)) return false;
      out->push_back(one);
      return true;
    };
    if (arg == "--conformance") {
      conformance_mode = true;
      continue;
    }
    if (arg == "--isolate") {
      model.isolated = conformance.isolated = true;
      continue;
    }
    std::string ignored;
    if (value("--host-abi", &host_abi)) continue;                                  // the contract checks' own
    if (arg == "--require-available" || arg == "--help" || arg == "-h") continue;  // the contract checks' own
    if (value("--plugin", &model.plugin_path) || value("--backend", &model.backend) || value("--model", &model.model) ||
        values("--input", &model.inputs) || values("--expect", &model.expected) || values("--dim", &model.dims) ||
        value("--onnx-test-data", &conformance.data) || value("--json", &conformance.json) ||
        value("--threads", &threads) || value("--blob", &ignored) || values("--compile-spec", &model.compile_specs) ||
        values("--runtime-option", &model.runtime_options)) {
      continue;
    }
    unknown.push_back(arg);
  }
  if (model.model.empty() && !conformance_mode) {
    if (arg_is_help(argc, argv)) {
      std::cout << kUsage;
      return 0;
    }
    return plugrt::sdk::testing::run_contract_tests(argc, argv);
  }

  if (model.plugin_path.empty()) {
    std::cerr << "plugrt-contract-test: --plugin PATH is required\n" << kUsage;
    return 2;
  }
  if (!unknown.empty()) {
    std::cerr << "plugrt-contract-test: unknown argument '" << unknown[0] << "'\n" << kUsage;
    return 2;
  }
  if (!host_abi.empty()) {
    std::cerr << "plugrt-contract-test: --host-abi plays an older host in the contract checks; --model and "
                 "--conformance run the plugin on this runtime\n";
    return 2;
  }
  if (!model.model.empty() && conformance_mode) {
    std::cerr << "plugrt-contract-test: --model and --conformance are separate runs\n";
    return 2;
  }
  if (!model.model.empty()) {
    plugrt::BackendOptions parsed;
    for (const std::vector<std::string>* texts : {&model.compile_specs, &model.runtime_options}) {
      if (plugrt::Status added = parsed.add_all(*texts); !added.is_ok()) {
        std::cerr << "plugrt-contract-test: " << added.message() << "\n";
        return 2;
      }
    }
    return plugrt::contract_runner::run_model_check(model);
  }

  conformance.plugin_path = model.plugin_path;
  conformance.backend = model.backend;
  if (!threads.empty()) {
    char* end = nullptr;
    const long n = std::strtol(threads.c_str(), &end, 10);
    if (end == threads.c_str() || *end != '\0' || n < 1 || n > 256) {
      std::cerr << "plugrt-contract-test: --threads '" << threads << "' is not a number from 1 to 256\n";
      return 2;
    }
    conformance.threads = static_cast<size_t>(n);
  }
  return plugrt::contract_runner::run_conformance(conformance);
}
