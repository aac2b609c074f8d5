// SPDX-License-Identifier: Apache-2.0
// run_contract_tests: the kit's flags, the settings checked, then every check through
// GoogleTest.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "kit_backend_options.h"
#include "kit_plugin.h"
#include "plugrt/sdk/testing/contract.h"

namespace plugrt::sdk::testing {

namespace kit {
std::vector<std::string> backend_names();
// Each file of checks defines one: calling them links every check in (the kit is a static
// library, and a file nothing calls would be left out with its checks).
void keep_plugin_checks();
void keep_blob_checks();
void keep_result_checks();
void keep_manner_checks();
}  // namespace kit

using kit::backend_names;
using kit::config;
using kit::host_abi;

int run_contract_tests(const ContractConfig& contract, int argc, char** argv) {
  kit::keep_plugin_checks();
  kit::keep_blob_checks();
  kit::keep_result_checks();
  kit::keep_manner_checks();
  config() = contract;
  const std::string options_error =
      set_kit_backend_options(contract.compile_specs, contract.runtime_options, backend_names());
  if (!options_error.empty()) {
    std::cerr << "plugrt-contract-test: " << options_error << "\n";
    return 2;
  }
  if (contract.host_abi_minor >= 0) {
    if (contract.isolated) {
      std::cerr << "plugrt-contract-test: --host-abi plays the host in this process; --isolate runs the backends "
                   "in the runtime's backend host, which speaks this ABI: give one of them\n";
      return 2;
    }
    std::cout << "[ HOST ABI ] " << host_abi().describe() << "\n";
  }
  ::testing::InitGoogleMock(&argc, argv);
  if (argc > 1) {  // GoogleTest left what it does not know, e.g. a misspelt --gtest_ flag
    std::cerr << "plugrt-contract-test: unknown argument '" << argv[1] << "' (see --help)\n";
    return 2;
  }
  return RUN_ALL_TESTS();
}

int run_contract_tests(int argc, char** argv) {
  ContractConfig contract;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
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
    if (value("--plugin", &contract.plugin_path) || value("--blob", &contract.blob_path)) continue;
    std::string option;
    if (value("--compile-spec", &option)) {
      contract.compile_specs.push_back(option);
      continue;
    }
    if (value("--runtime-option", &option)) {
      contract.runtime_options.push_back(option);
      continue;
    }
    if (arg == "--isolate") {
      contract.isolated = true;
      continue;
    }
    if (arg == "--require-available") {
      contract.require_available = true;
      continue;
    }
    std::string timeout;
    if (value("--check-timeout", &timeout)) {
      char* end = nullptr;
      const long seconds = std::strtol(timeout.c_str(), &end, 10);
      if (end == timeout.c_str() || *end != '\0' || seconds < 1 || seconds > 86400) {
        std::cerr << "plugrt-contract-test: --check-timeout '" << timeout << "' is not a number of seconds\n";
        return 2;
      }
      contract.check_timeout_seconds = static_cast<int>(seconds);
      continue;
    }
    std::string abi;
    if (value("--host-abi", &abi)) {
      HostAbi played;
      if (!parse_host_abi(abi, &played)) {
        std::cerr << "plugrt-contract-test: --host-abi '" << abi << "' is not 1.N with N from 0 to " << PLUGRT_ABI_MINOR
                  << "\n";
        return 2;
      }
      contract.host_abi_minor = static_cast<int>(played.minor);
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      std::cout << "usage: plugrt-contract-test --plugin PATH [--blob FILE] [--isolate] [--require-available]\n"
                   "                            [--check-timeout SECONDS] [--host-abi 1.N] [--compile-spec N.K=V]\n"
                   "                            [--runtime-option N.K=V] [--gtest_filter=...]\n"
                   "Checks that a plugrt plugin keeps the backend contract (see sdk/README.md), its results\n"
                   "included: each op kind its partition takes, against the built-in portable backend, with\n"
                   "outputs filled with NaN before every execute. Each per-backend check runs in a child\n"
                   "process: a crash fails that check, and one running past --check-timeout (default 120\n"
                   "seconds) fails as a hang. With --isolate, its backends run in a plugrt-backend-host\n"
                   "process, as the runtime's --isolate runs them; with --require-available, a backend that\n"
                   "says it is unavailable fails instead of skipping. --host-abi 1.N plays a host of that older\n"
                   "ABI minor: its struct sizes (the bytes past them hold a pattern) and what it offers.\n"
                   "--compile-spec NAME.KEY=VALUE and --runtime-option NAME.KEY=VALUE (repeatable) give backend\n"
                   "NAME that compile spec (partition, preprocess, init) or runtime option (init), as plugrt\n"
                   "compile --backend-option and plugrt run --backend-option do.\n";
      return 0;
    }
    if (arg.rfind("--gtest_", 0) != 0) {  // a typo in a vendor's CI must not pass
      std::cerr << "plugrt-contract-test: unknown argument '" << arg << "' (see --help)\n";
      return 2;
    }
    rest.push_back(argv[i]);
  }
  if (contract.plugin_path.empty()) {
    std::cerr << "plugrt-contract-test: --plugin PATH is required\n";
    return 2;
  }
  int rest_argc = static_cast<int>(rest.size());
  rest.push_back(nullptr);
  return run_contract_tests(contract, rest_argc, rest.data());
}

}  // namespace plugrt::sdk::testing
