// The contract kit proven: it fails on deliberately broken plugins with a message naming
// the problem, and passes on good ones (the portable backend, the example, a good plugin
// written with the wrapper).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

using ::testing::HasSubstr;

struct RunResult {
  int exit_code = -1;
  std::string output;
};

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
  return result;
}

std::string test_plugin(const char* name) { return std::string(SDK_TEST_PLUGIN_DIR) + "/libplugrt_" + name + ".so"; }

TEST(ContractKit, PassesOnAGoodPluginWrittenWithTheWrapper) {
  RunResult r = run_kit(test_plugin("sdk_good"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[  PASSED  ]"));
  EXPECT_THAT(r.output, HasSubstr("Plugin/BackendContract.FullCycleOnItsOwnBlob/relu"));
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

TEST(ContractKit, RefusesAFileThatIsNotAPlugin) {
  RunResult r = run_kit(CONTRACT_RUNNER);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not a plugrt plugin"));
}

}  // namespace
