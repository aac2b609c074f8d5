// SPDX-License-Identifier: Apache-2.0
// What the plugrt command says of a delegate whose backend could not run it: a plugin file
// refused by the loader (built for ABI 2.0) is named with the loader's reason, not as a
// backend that is not installed, and an init that fails with any status falls back with
// the backend's own message; in `run --report`, `run --json` and `doctor --program`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "command_output.h"
#include "program_fixtures.h"
#include "test_plugin_files.h"

namespace plugrt::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

/// Runs the plugrt command with `arguments` (shell words), its caches under `dir`.
CommandOutput plugrt(const TempDirectory& dir, const std::string& arguments) {
  return run_shell("env -u PLUGRT_PLUGIN_PATH -u PLUGRT_PLACEMENT PLUGRT_CACHE_DIR='" + dir.path() + "/cache' '" +
                   PLUGRT_COMMAND_FILE + "' " + arguments + " 2>&1");
}

std::string write_program(TempDirectory& dir, const OffsetProgramOptions& options) {
  const std::vector<uint8_t> bytes = offset_program(options);
  return dir.write(options.backend + ".prt", std::string(bytes.begin(), bytes.end()));
}

class CommandReports : public ::testing::Test {
 protected:
  TempDirectory plugins_;
  TempDirectory work_;
};

TEST_F(CommandReports, ARefusedPluginIsNamedWithTheLoadersReasonInEveryReport) {
  plugins_.add_plugin("abi_major_2", "future");  // libplugrt_future.so, backend "future", ABI 2.0
  OffsetProgramOptions options;
  options.backend = "future";
  const std::string program = write_program(work_, options);
  const std::string where = program + " --plugin-dir " + plugins_.path();
  const auto refused = AllOf(HasSubstr("backend 'future' is not available"), HasSubstr("built for plugin ABI 2."),
                             Not(HasSubstr("not installed")));

  CommandOutput report = plugrt(work_, "run " + where + " --report --placement as-compiled");
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_THAT(report.output, AllOf(HasSubstr("ran on portable"), refused));
  CommandOutput json = plugrt(work_, "run " + where + " --json --placement as-compiled");
  EXPECT_EQ(json.exit_code, 0) << json.output;
  EXPECT_THAT(json.output, AllOf(HasSubstr("\"fell_back\": true"), refused));
  CommandOutput placed = plugrt(work_, "run " + where + " --report");  // placed again at load
  EXPECT_EQ(placed.exit_code, 0) << placed.output;
  EXPECT_THAT(placed.output, AllOf(HasSubstr("not considered: future"), refused));
  CommandOutput doctor = plugrt(work_, "doctor --plugin-dir " + plugins_.path() + " --program " + program);
  EXPECT_EQ(doctor.exit_code, 0) << doctor.output;
  EXPECT_THAT(doctor.output, refused);
}

// The other refusals the loader makes: the file's mode, a missing entry function, a digest
// the allow-list does not pin. Each reason reaches `run --report`.
TEST_F(CommandReports, EveryKindOfRefusalIsNamedInTheRunReport) {
  struct Case {
    std::string plugin, backend, flags, reason;
  };
  const std::vector<Case> cases = {
      {"good", "offset", "", "is writable by every user"},
      {"no_entry", "no_entry", "", "does not export its entry function"},
      {"good", "offset", " --plugin-allow-list " + work_.write("pins.txt", "# none\n"),
       "is not in the plugin allow-list"},
  };
  for (const Case& c : cases) {
    TempDirectory plugins;
    const std::string file = plugins.add_plugin(c.plugin, c.backend);
    if (c.reason == "is writable by every user") chmod(file.c_str(), 0666);
    OffsetProgramOptions options;
    options.backend = c.backend;
    const std::string where = write_program(work_, options) + " --plugin-dir " + plugins.path() + c.flags;
    CommandOutput report = plugrt(work_, "run " + where + " --report --placement as-compiled");
    EXPECT_EQ(report.exit_code, 0) << report.output;
    EXPECT_THAT(report.output,
                AllOf(HasSubstr("ran on portable"), HasSubstr("backend '" + c.backend + "' is not available"),
                      HasSubstr(c.reason), Not(HasSubstr("not installed"))))
        << c.plugin << ", " << c.reason;
  }
}

TEST_F(CommandReports, AnInitThatFailsWithAnInternalErrorFallsBackWithTheBackendsMessage) {
  plugins_.add_plugin("faulty");
  OffsetProgramOptions options;
  options.backend = "faulty";
  const std::string message = "firmware fault 7";
  options.compile_specs = {CompileSpec{"init_internal", std::vector<uint8_t>(message.begin(), message.end())}};
  const std::string where = write_program(work_, options) + " --plugin-dir " + plugins_.path();

  CommandOutput report = plugrt(work_, "run " + where + " --report --placement as-compiled");
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_THAT(report.output, AllOf(HasSubstr("ran on portable"), HasSubstr("firmware fault 7")));
  CommandOutput json = plugrt(work_, "run " + where + " --json --placement as-compiled");
  EXPECT_EQ(json.exit_code, 0) << json.output;
  EXPECT_THAT(json.output, AllOf(HasSubstr("\"fell_back\": true"), HasSubstr("firmware fault 7")));
}

}  // namespace
}  // namespace plugrt::testing
