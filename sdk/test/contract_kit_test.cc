// SPDX-License-Identifier: Apache-2.0
// The contract kit proven: it fails on deliberately broken plugins with a message naming
// the problem, and passes on good ones (the portable backend, the example, a good plugin
// written with the wrapper).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

struct RunResult {
  int exit_code = -1;
  std::string output;
};

constexpr const char* kSkipped = "[  SKIPPED ]";
constexpr const char* kKitSkipped = "[ kit skipped ]";

RunResult run_kit(const std::string& plugin, const std::string& extra = "") {
  const std::string command = std::string(CONTRACT_RUNNER) + " --plugin " + plugin + " " + extra + " 2>&1";
  RunResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  // ctest reads "[  SKIPPED ]" in a test's output as that test skipping, so the kit's own
  // skip lines, printed by a failing expectation, would hide the failure.
  for (size_t at = 0; (at = result.output.find(kSkipped, at)) != std::string::npos;) {
    result.output.replace(at, std::strlen(kSkipped), kKitSkipped);
  }
  return result;
}

std::string test_plugin(const char* name) { return std::string(SDK_TEST_PLUGIN_DIR) + "/libplugrt_" + name + ".so"; }

std::string model(const char* file) { return std::string(MODELS_DIR) + "/" + file; }

TEST(ContractKit, PassesOnAGoodPluginWrittenWithTheWrapper) {
  RunResult r = run_kit(test_plugin("sdk_good"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[  PASSED  ]"));
  EXPECT_THAT(r.output, HasSubstr("Plugin/BackendContract.FullCycleOnItsOwnBlob/relu"));
  // It says which sample graph the checks used and what partition took of each tried.
  EXPECT_THAT(r.output, HasSubstr("[ SAMPLES  ] backend 'relu': uses Relu on float32[2,3]"));
  EXPECT_THAT(r.output, HasSubstr("Relu on float32[2,3]: partition took node 'Relu_0' (Relu)"));
}

TEST(ContractKit, AnUnavailableBackendSkipsUnlessAvailabilityIsRequired) {
  RunResult skipped = run_kit(test_plugin("sdk_unavailable"));
  EXPECT_EQ(skipped.exit_code, 0) << skipped.output;
  EXPECT_THAT(skipped.output, HasSubstr("is unavailable here: no test device is attached"));
  RunResult required = run_kit(test_plugin("sdk_unavailable"), "--require-available");
  EXPECT_EQ(required.exit_code, 1) << required.output;
  EXPECT_THAT(required.output, HasSubstr("is unavailable here (--require-available): no test device is attached"));
  // The model and conformance modes need the backend: unavailable is an error there.
  RunResult conformance = run_kit(test_plugin("sdk_unavailable"), "--conformance");
  EXPECT_EQ(conformance.exit_code, 1) << conformance.output;
  EXPECT_THAT(conformance.output, HasSubstr("backend 'relu' is unavailable here: no test device is attached"));
}

TEST(ContractKit, AnUnknownFlagIsAnErrorNotAPass) {
  RunResult r = run_kit(test_plugin("sdk_good"), "--no-such-flag");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("unknown argument '--no-such-flag'"));
  RunResult typo = run_kit(test_plugin("sdk_good"), "--gtest_fliter=*Metadata*");
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_THAT(typo.output, HasSubstr("unknown argument '--gtest_fliter=*Metadata*'"));
  RunResult conformance = run_kit(test_plugin("sdk_good"), "--conformance --no-such-flag");
  EXPECT_EQ(conformance.exit_code, 2) << conformance.output;
  EXPECT_THAT(conformance.output, HasSubstr("unknown argument '--no-such-flag'"));
  RunResult help = run_kit(test_plugin("sdk_good"), "--help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag :
       {"--plugin", "--blob", "--isolate", "--require-available", "--check-timeout", "--gtest_filter", "--backend",
        "--model", "--input", "--expect", "--conformance", "--onnx-test-data", "--threads", "--json", "--help"}) {
    EXPECT_THAT(help.output, HasSubstr(flag));
  }
}

TEST(ContractKit, SaysWhichSampleGraphsThePartitionRefused) {
  RunResult r = run_kit(ELEMENTWISE_PLUGIN, "--gtest_filter=*FullCycleOnItsOwnBlob*");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[ SAMPLES  ] backend 'elementwise': uses Relu on float32[2,3]"));
  EXPECT_THAT(r.output, HasSubstr("Neg on float32[2,3]: partition did not take node 'Neg_0' (Neg)"));
}

TEST(ContractKit, PassesOnThePortableBackendPlugin) {
  RunResult r = run_kit(PORTABLE_PLUGIN);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("BackendContract.FullCycleOnItsOwnBlob/portable"));
}

TEST(ContractKit, PassesOnTheExampleBackend) {
  RunResult r = run_kit(ELEMENTWISE_PLUGIN);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(ContractKit, FailsOnAPluginThatLeaksAHostAllocation) {
  RunResult r = run_kit(test_plugin("sdk_leaks"));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[  FAILED  ] Plugin/BackendContract.DestroyReleasesEveryHostAllocation/relu"));
  EXPECT_THAT(r.output, HasSubstr("were not released by destroy (sizes: 256 bytes)"));
  EXPECT_THAT(r.output, HasSubstr("Fix: destroy must host->deallocate everything"));
}

TEST(ContractKit, FailsOnAPluginThatCrashesOnARandomBlob) {
  RunResult r = run_kit(test_plugin("sdk_crashes"));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[  FAILED  ] Plugin/BackendContract.InitRefusesARandomBlob/relu"));
  EXPECT_THAT(r.output, HasSubstr("init on a random blob: crashed with signal"));
  EXPECT_THAT(r.output, HasSubstr("init must never crash on a bad blob"));
  // The kit itself survived to report the rest.
  EXPECT_THAT(r.output, HasSubstr("[       OK ] Plugin/BackendContract.FullCycleOnItsOwnBlob/relu"));
}

TEST(ContractKit, FailsOnAPluginThatPrintsToStdout) {
  RunResult r = run_kit(test_plugin("sdk_prints"));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[  FAILED  ] Plugin/BackendContract.WritesNothingToStdoutOrStderr/relu"));
  EXPECT_THAT(r.output, HasSubstr("relu: executing 6 elements"));
  EXPECT_THAT(r.output, HasSubstr("the plugin wrote to stdout or stderr"));
}

TEST(ContractKit, FailsOnAPluginThatExportsAnExtraSymbol) {
  RunResult r = run_kit(test_plugin("sdk_extra_symbol"));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[  FAILED  ] PluginContract.ExportsOnlyTheEntryAndTheMetadata"));
  EXPECT_THAT(r.output, HasSubstr("the plugin exports 'vendor_private_helper'"));
}

TEST(ContractKit, FailsOnAPluginWhoseExecuteThrows) {
  RunResult r = run_kit(test_plugin("sdk_throws"));
  EXPECT_NE(r.exit_code, 0) << r.output;
  // The wrapper turned the exception into Internal with its message; nothing crashed.
  EXPECT_THAT(r.output, HasSubstr("Internal (1): execute threw an exception: the test device fell over"));
}

TEST(ContractKit, FailsOnAPluginThatLeavesOutputElementsUnwritten) {
  RunResult r = run_kit(test_plugin("sdk_unwritten"), "--gtest_filter=*FullCycleOnItsOwnBlob*");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[  FAILED  ] Plugin/BackendContract.FullCycleOnItsOwnBlob/relu"));
  EXPECT_THAT(r.output, HasSubstr("is nan, expected 0.000000"));
  EXPECT_THAT(r.output, HasSubstr("this element was never written"));
}

TEST(ContractKit, ComparesEachOpItTakesWithThePortableBackend) {
  RunResult r = run_kit(test_plugin("sdk_gemm"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("[       OK ] Plugin/BackendContract.ResultsMatchThePortableBackendOnEveryOpItTakes"));
  EXPECT_THAT(r.output, HasSubstr("Gemm with bias: float32[3,5] x [5,4] + [4]: taken, agrees with the portable"));
  EXPECT_THAT(r.output, HasSubstr("MatMul: float32[3,8] x [8,5]: taken, agrees with the portable"));
  EXPECT_THAT(r.output, HasSubstr("Conv 3x3, pads 1, with bias: float32[1,2,5,5] -> [1,3,5,5]: not taken"));
}

TEST(ContractKit, FailsOnAGemmThatDropsItsBias) {
  RunResult r = run_kit(test_plugin("sdk_drop_bias"), "--gtest_filter=*ResultsMatchThePortableBackend*");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("[  FAILED  ] Plugin/BackendContract.ResultsMatchThePortableBackendOnEveryOpItTakes"));
  EXPECT_THAT(r.output, HasSubstr("Gemm with bias: float32[3,5] x [5,4] + [4]: output element 0 is "));
  EXPECT_THAT(r.output, HasSubstr("MatMul: float32[3,8] x [8,5]: taken, agrees with the portable"));
}

TEST(ContractKit, FailsOnAMatMulOffByAFifthOfAPercent) {
  RunResult r = run_kit(test_plugin("sdk_matmul_drift"), "--gtest_filter=*ResultsMatchThePortableBackend*");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("MatMul: float32[3,8] x [8,5]: output element "));
  EXPECT_THAT(r.output, HasSubstr("Gemm with bias: float32[3,5] x [5,4] + [4]: taken, agrees with the portable"));
}

TEST(ContractKit, ACrashFailsTheCheckItHappenedInAndTheOthersStillRun) {
  RunResult r = run_kit(test_plugin("sdk_crash_in_gemm"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("[  FAILED  ] Plugin/BackendContract.ResultsMatchThePortableBackendOnEveryOpItTakes"));
  // Under AddressSanitizer its SIGSEGV handler reports and aborts (signal 6).
  EXPECT_THAT(r.output, ::testing::ContainsRegex("the check crashed with signal (11|6)"));
  EXPECT_THAT(r.output, HasSubstr("[       OK ] Plugin/BackendContract.SeparateHandlesExecuteConcurrently/relu"));
  EXPECT_THAT(r.output, HasSubstr("1 FAILED TEST"));
}

TEST(ContractKit, ACheckTimeoutIsANumberOfSeconds) {
  RunResult r = run_kit(test_plugin("sdk_good"), "--check-timeout nope");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--check-timeout 'nope' is not a number of seconds"));
}

TEST(ContractKit, RunsOnlyTheFilteredChecks) {
  RunResult r = run_kit(test_plugin("sdk_leaks"), "--gtest_filter=PluginContract.Exports*:PluginContract.Metadata*");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[  PASSED  ] 2 tests."));
}

TEST(ContractKit, LeaksAreCaughtOverLoadUnloadCyclesToo) {
  RunResult r = run_kit(test_plugin("sdk_leaks"), "--gtest_filter=PluginContract.LoadInitDestroyUnload100Times");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cycle 0: 1 host allocations were still live after destroy and unload"));
}

// ---- --isolate: the backends as the runtime runs them isolated ------------------------

TEST(ContractKitIsolated, PassesOnThePortableBackendPlugin) {
  RunResult r = run_kit(PORTABLE_PLUGIN, "--isolate");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[       OK ] Plugin/BackendContract.FullCycleOnItsOwnBlob/portable"));
  // The backend host's allocator is not the kit's: that check says so and is skipped.
  EXPECT_THAT(r.output, HasSubstr(std::string(kKitSkipped) +
                                  " Plugin/BackendContract.DestroyReleasesEveryHostAllocation/portable"));
}

TEST(ContractKitIsolated, FailsOnAPluginThatCrashesOnARandomBlob) {
  RunResult r = run_kit(test_plugin("sdk_crashes"), "--isolate");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[  FAILED  ] Plugin/BackendContract.InitRefusesARandomBlob/relu"));
  EXPECT_THAT(r.output, HasSubstr("init on a random blob: crashed in its backend host process: its isolated process"));
  EXPECT_THAT(r.output, HasSubstr("init must never crash on a bad blob"));
  EXPECT_THAT(r.output, HasSubstr("[       OK ] Plugin/BackendContract.FullCycleOnItsOwnBlob/relu"));
}

TEST(ContractKitIsolated, ACrashInAnOpFailsTheCheckInsteadOfFallingBack) {
  RunResult r = run_kit(test_plugin("sdk_crash_in_gemm"),
                        "--isolate --gtest_filter=*ResultsMatchThePortableBackend*:*FullCycleOnItsOwnBlob*");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("[  FAILED  ] Plugin/BackendContract.ResultsMatchThePortableBackendOnEveryOpItTakes"));
  EXPECT_THAT(r.output, HasSubstr("Gemm with bias: float32[3,5] x [5,4] + [4]: execute failed with DelegateCrashed"));
  EXPECT_THAT(r.output, HasSubstr("[       OK ] Plugin/BackendContract.FullCycleOnItsOwnBlob/relu"));
}

TEST(ContractKitIsolated, ConformanceFailsWhenAnIsolatedOpCrashes) {
  RunResult r = run_kit(test_plugin("sdk_crash_in_gemm"), "--isolate --conformance --threads 2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // Under AddressSanitizer its SIGSEGV handler reports and exits instead.
  EXPECT_THAT(r.output, ::testing::ContainsRegex("FAIL test_gemm_default_no_bias: .*execute: delegate '[^']*' of "
                                                 "'relu' fell back to 'portable': .*(killed by signal 11|exited with "
                                                 "code)"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex("\n[0-9]+ passed, 1 failed, [0-9]+ skipped\n"));
}

TEST(ContractKitIsolated, RunsAModelThroughTheIsolatedPlugin) {
  RunResult r = run_kit(PORTABLE_PLUGIN, "--isolate --model " + model("tiny_cnn.onnx") +
                                             " --input input=" + model("tiny_cnn.input.npy") +
                                             " --expect output=" + model("tiny_cnn.output.npy"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("init: 1 handle(s), isolated in plugrt-backend-host processes"));
  EXPECT_THAT(r.output, HasSubstr("output 'output': matches"));
}

TEST(ContractKitIsolated, ConformanceFailsWhenAnIsolatedOpComputesWrong) {
  RunResult r = run_kit(test_plugin("sdk_wrong_result"), "--isolate --conformance --threads 2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("FAIL test_relu: output 'y': "));
}

// ---- --model: an author's model through the plugin alone -------------------------------

TEST(ContractKitModel, RunsAModelThroughThePluginAndComparesItsOutput) {
  RunResult r =
      run_kit(PORTABLE_PLUGIN, "--model " + model("tiny_cnn.onnx") + " --input input=" + model("tiny_cnn.input.npy") +
                                   " --expect output=" + model("tiny_cnn.output.npy"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("partition took 18 of 18 nodes"));
  EXPECT_THAT(r.output, HasSubstr("    took node '"));
  EXPECT_THAT(r.output, HasSubstr("output 'output': matches"));
}

TEST(ContractKitModel, FailsWhenTheOutputDiffers) {
  // Another model's expected output.
  RunResult r =
      run_kit(PORTABLE_PLUGIN, "--model " + model("tiny_cnn.onnx") + " --input input=" + model("tiny_cnn.input.npy") +
                                   " --expect output=" + model("mlp.output.npy"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("output 'output': DIFFERS: the plugin gives float32 [1, 10], expected"));
}

TEST(ContractKitModel, RefusesAModelThePluginDoesNotTakeWhole) {
  RunResult r = run_kit(ELEMENTWISE_PLUGIN, "--model " + model("tiny_cnn.onnx") +
                                                " --input input=" + model("tiny_cnn.input.npy") +
                                                " --expect output=" + model("tiny_cnn.output.npy"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, ::testing::ContainsRegex("not: node '[^']*' \\(Conv\\)"));
  EXPECT_THAT(r.output, HasSubstr("does not take every node"));
}

TEST(ContractKitModel, NamesAMissingInputAndAMissingExpectation) {
  RunResult no_input = run_kit(
      PORTABLE_PLUGIN, "--model " + model("tiny_cnn.onnx") + " --expect output=" + model("tiny_cnn.output.npy"));
  EXPECT_EQ(no_input.exit_code, 1) << no_input.output;
  EXPECT_THAT(no_input.output, HasSubstr("--input: the model's input 'input' has no NAME=FILE.npy"));
  RunResult no_expect = run_kit(PORTABLE_PLUGIN, "--model " + model("tiny_cnn.onnx"));
  EXPECT_EQ(no_expect.exit_code, 2) << no_expect.output;
  EXPECT_THAT(no_expect.output, HasSubstr("give at least one --expect"));
}

// ---- --conformance: the ONNX node tests through the plugin alone ----------------------

TEST(ContractKitConformance, PassesTheNodeTestsItsPartitionTakes) {
  RunResult r = run_kit(test_plugin("sdk_good"), "--conformance --threads 2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::ContainsRegex("\nRelu +[1-9][0-9]* +0 +[0-9]+  "));
  EXPECT_THAT(r.output,
              ::testing::ContainsRegex("\nConv +0 +0 +[1-9][0-9]*  partition took N of N nodes; not: Conv\n"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex("\n[1-9][0-9]* passed, 0 failed, [1-9][0-9]* skipped\n"));
}

TEST(ContractKitConformance, FailsWhenAnOpComputesWrong) {
  RunResult r = run_kit(test_plugin("sdk_wrong_result"), "--conformance --threads 2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("FAIL test_relu: output 'y': "));
  EXPECT_THAT(r.output, ::testing::ContainsRegex("\nRelu +0 +[1-9][0-9]* +[0-9]+  FAIL: output '\\*'"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex("\n0 passed, [1-9][0-9]* failed, [1-9][0-9]* skipped\n"));
}

TEST(ContractKit, RefusesAFileThatIsNotAPlugin) {
  RunResult r = run_kit(CONTRACT_RUNNER);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not a plugrt plugin"));
}

}  // namespace
