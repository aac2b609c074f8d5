// SPDX-License-Identifier: Apache-2.0
// The contract kit proven: it fails on deliberately broken plugins with a message naming
// the problem, and passes on good ones (the portable backend, the example, a good plugin
// written with the wrapper).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include "kit_run.h"
#include "plugrt/plugrt_abi.h"

namespace {

using ::plugrt::kit_test::kKitSkipped;
using ::plugrt::kit_test::model;
using ::plugrt::kit_test::run_kit;
using ::plugrt::kit_test::RunResult;
using ::plugrt::kit_test::test_plugin;
using ::testing::AllOf;
using ::testing::HasSubstr;

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

TEST(ContractKit, FailsAnExecuteThatHangsAsAHang) {
  RunResult r = run_kit(test_plugin("sdk_hangs"), "--check-timeout 2 --gtest_filter=*FullCycleOnItsOwnBlob*");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[  FAILED  ] Plugin/BackendContract.FullCycleOnItsOwnBlob/relu"));
  EXPECT_THAT(r.output, HasSubstr("the check did not finish within 2 seconds and was killed: a call into the "
                                  "backend hangs"));
}

TEST(ContractKit, FailsABackendThatRunsMoreThreadsThanItsBudget) {
  // In process, and under --isolate, where the threads are counted in the backend host.
  for (const std::string mode : {"", " --isolate"}) {
    SCOPED_TRACE(mode);
    RunResult r = run_kit(test_plugin("sdk_extra_threads"), "--gtest_filter=*ThreadBudget*" + mode);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("[  FAILED  ] Plugin/BackendContract.ExecuteStaysWithinItsThreadBudget/relu"));
    for (const char* budget : {"1", "2"}) {
      EXPECT_THAT(r.output, ::testing::ContainsRegex(std::string("given a thread budget of ") + budget +
                                                     " \\(plugrt_init_args.num_threads\\), the backend ran [3-9] "
                                                     "threads at once"));
    }
  }
}

TEST(ContractKit, ABackendWithinItsThreadBudgetPassesTheThreadCheck) {
  for (const std::string mode : {"", " --isolate"}) {
    SCOPED_TRACE(mode);
    RunResult r = run_kit(test_plugin("sdk_good"), "--gtest_filter=*ThreadBudget*" + mode);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("[       OK ] Plugin/BackendContract.ExecuteStaysWithinItsThreadBudget/relu"));
  }
}

TEST(ContractKit, PlaysTheHostOfEveryMinorOfItsMajor) {
  for (int minor = 0; minor <= PLUGRT_ABI_MINOR; ++minor) {
    const std::string abi = std::to_string(PLUGRT_ABI_MAJOR) + "." + std::to_string(minor);
    RunResult r = run_kit(test_plugin("sdk_good"), "--host-abi " + abi);
    EXPECT_EQ(r.exit_code, 0) << "--host-abi " << abi << ":\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("[ HOST ABI ] playing a host of plugin ABI " + abi + ": init args of "));
    EXPECT_THAT(r.output, HasSubstr("[       OK ] Plugin/BackendContract.FullCycleOnItsOwnBlob/relu"));
  }
}

// The test plugins of test/plugins/ (the bare C ABI, no ahead-of-time table: init checks
// on a --blob of their one float32 offset) built for 1.0, for this minor and for the next.
TEST(ContractKit, PluginsOfOlderAndNewerMinorsLoadAndInitAsTheHostOfEveryMinor) {
  const float offset = 1.5f;
  const std::string blob = ::testing::TempDir() + "offset_blob.bin";
  std::ofstream(blob, std::ios::binary).write(reinterpret_cast<const char*>(&offset), sizeof(offset));
  const std::pair<const char*, const char*> plugins[] = {
      {"older_minor", "older"}, {"good", "offset"}, {"newer_minor", "newer"}};
  for (const auto& [file, backend] : plugins) {
    const std::string path = std::string(TEST_PLUGIN_DIR) + "/libplugrt_" + file + ".so";
    for (int minor = 0; minor <= PLUGRT_ABI_MINOR; ++minor) {
      const std::string abi = "1." + std::to_string(minor);
      RunResult r = run_kit(path, "--host-abi " + abi + " --blob " + blob);
      EXPECT_EQ(r.exit_code, 0) << file << " as the host of " << abi << ":\n" << r.output;
      EXPECT_THAT(r.output,
                  HasSubstr("[       OK ] Plugin/BackendContract.FullCycleOnItsOwnBlob/" + std::string(backend)));
    }
  }
  std::remove(blob.c_str());
}

TEST(ContractKit, APluginOfAnotherMajorIsRefusedAsTheHostOfEveryMinor) {
  const std::string path = std::string(TEST_PLUGIN_DIR) + "/libplugrt_abi_major_2.so";
  for (int minor = 0; minor <= PLUGRT_ABI_MINOR; ++minor) {
    RunResult r = run_kit(path, "--host-abi 1." + std::to_string(minor));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("[  FAILED  ] PluginContract.AbiVersionIsAcceptedByThisHost"));
    EXPECT_THAT(r.output, HasSubstr("built for plugin ABI 2."));
  }
}

TEST(ContractKit, FailsAPluginThatReadsPastTheArgsOfAnOlderHost) {
  RunResult current = run_kit(test_plugin("sdk_reads_past_size"), "--gtest_filter=*FullCycleOnItsOwnBlob*");
  EXPECT_EQ(current.exit_code, 0) << current.output;
  RunResult older =
      run_kit(test_plugin("sdk_reads_past_size"), "--host-abi 1.5 --gtest_filter=*FullCycleOnItsOwnBlob*");
  EXPECT_EQ(older.exit_code, 1) << older.output;
  EXPECT_THAT(older.output, HasSubstr("[  FAILED  ] Plugin/BackendContract.FullCycleOnItsOwnBlob/relu"));
  EXPECT_THAT(older.output, HasSubstr("this graph has no symbols"));
}

TEST(ContractKit, AHostBefore15GivesNoGraphsWithSymbols) {
  RunResult before = run_kit(PORTABLE_PLUGIN, "--host-abi 1.4 --gtest_filter=*GraphWithSymbols*");
  EXPECT_EQ(before.exit_code, 0) << before.output;
  EXPECT_THAT(before.output, HasSubstr("a host of ABI 1.4 gives no graphs with symbols (--host-abi)"));
  RunResult from = run_kit(PORTABLE_PLUGIN, "--host-abi 1.5 --gtest_filter=*GraphWithSymbols*");
  EXPECT_EQ(from.exit_code, 0) << from.output;
  EXPECT_THAT(from.output,
              HasSubstr("[       OK ] Plugin/BackendContract.AGraphWithSymbolsRunsAtEachCallsShapes/portable"));
}

TEST(ContractKit, AHostAbiItCannotPlayIsAUsageError) {
  for (const char* abi : {"2.0", "1.99", "1", "1.x", "1.-1"}) {
    RunResult r = run_kit(test_plugin("sdk_good"), std::string("--host-abi ") + abi);
    EXPECT_EQ(r.exit_code, 2) << abi << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("--host-abi '" + std::string(abi) + "' is not 1.N with N from 0 to"));
  }
  RunResult with_model = run_kit(PORTABLE_PLUGIN, "--host-abi 1.3 --model " + model("tiny_cnn.onnx") +
                                                      " --expect output=" + model("tiny_cnn.output.npy"));
  EXPECT_EQ(with_model.exit_code, 2) << with_model.output;
  EXPECT_THAT(with_model.output, HasSubstr("--host-abi plays an older host in the contract checks"));
  RunResult isolated = run_kit(test_plugin("sdk_good"), "--host-abi 1.3 --isolate");
  EXPECT_EQ(isolated.exit_code, 2) << isolated.output;
  EXPECT_THAT(isolated.output, HasSubstr("--host-abi plays the host in this process"));
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

TEST(ContractKitIsolated, FailsAnExecuteThatHangsAsAHang) {
  RunResult r = run_kit(test_plugin("sdk_hangs"), "--isolate --check-timeout 2 --gtest_filter=*FullCycleOnItsOwnBlob*");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[  FAILED  ] Plugin/BackendContract.FullCycleOnItsOwnBlob/relu"));
  EXPECT_THAT(r.output, HasSubstr("the check did not finish within 2 seconds and was killed: a call into the "
                                  "backend hangs"));
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

namespace plugrt::kit_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string echo_plugin() { return std::string(TEST_PLUGIN_DIR) + "/echo/libplugrt_echo.so"; }

TEST(ContractKitOptions, CompileSpecsReachPartitionAndPreprocess) {
  // Without its compile spec the echo backend takes nothing, so the checks that need a
  // sample skip; with it, its partition takes Relu.
  RunResult plain = run_kit(echo_plugin(), "--gtest_filter=*FullCycle*");
  EXPECT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_THAT(plain.output, Not(HasSubstr("uses Relu on float32[2,3]")));
  RunResult told = run_kit(echo_plugin(), "--compile-spec echo.take=Relu --gtest_filter=*FullCycle*");
  EXPECT_EQ(told.exit_code, 0) << told.output;
  EXPECT_THAT(told.output, HasSubstr("[ SAMPLES  ] backend 'echo': uses Relu on float32[2,3]"));
}

TEST(ContractKitOptions, RuntimeOptionsReachInit) {
  RunResult r = run_kit(echo_plugin(),
                        "--compile-spec echo.take=Relu --runtime-option 'echo.refuse=as asked' "
                        "--gtest_filter=*FullCycle*");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("echo refuses: as asked"));
}

TEST(ContractKitOptions, AMalformedOptionOrAnUnknownBackendIsAUsageError) {
  RunResult malformed = run_kit(echo_plugin(), "--compile-spec take=Relu");
  EXPECT_EQ(malformed.exit_code, 2) << malformed.output;
  EXPECT_THAT(malformed.output, HasSubstr("--compile-spec: backend option 'take=Relu' is not NAME.KEY=VALUE"));
  RunResult unknown = run_kit(echo_plugin(), "--runtime-option npu.mood=calm");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_THAT(unknown.output, HasSubstr("--runtime-option names backend 'npu', which this plugin does not provide"));
}

}  // namespace
}  // namespace plugrt::kit_test
