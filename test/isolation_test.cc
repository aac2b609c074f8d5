// SPDX-License-Identifier: Apache-2.0
// Isolation: backends run in plugrt-backend-host processes. The "crashy" test plugin
// crashes, hangs or overruns its output on request; the host must survive each, give the
// right result through the portable fallback within the same call, and leak no process
// and no shared memory.
#include <dirent.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/isolation/isolated_plugin.h"
#include "plugrt/method.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "program_fixtures.h"
#include "test_plugin_files.h"

extern char** environ;

namespace plugrt::testing {
namespace {

using plugins::PluginLoader;
using plugins::PluginReport;
using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

CompileSpec spec(const std::string& key, const std::string& value) {
  return CompileSpec{key, std::vector<uint8_t>(value.begin(), value.end())};
}

/// Open memfds of this process (shared memory regions and blobs not yet released).
int open_memfds() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  while (const dirent* entry = dir != nullptr ? readdir(dir) : nullptr) {
    char target[256];
    const std::string link = std::string("/proc/self/fd/") + entry->d_name;
    const ssize_t size = readlink(link.c_str(), target, sizeof(target) - 1);
    if (size > 0 && std::string(target, static_cast<size_t>(size)).rfind("/memfd:", 0) == 0) ++count;
  }
  if (dir != nullptr) closedir(dir);
  return count;
}

/// Children of this process, reaped or not (any thread's).
std::string child_processes() {
  std::string children;
  DIR* dir = opendir("/proc/self/task");
  while (const dirent* entry = dir != nullptr ? readdir(dir) : nullptr) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream file(std::string("/proc/self/task/") + entry->d_name + "/children");
    std::string line;
    std::getline(file, line);
    children += line;
  }
  if (dir != nullptr) closedir(dir);
  return children;
}

// Whether process `pid` has ended (gone, or a zombie no one reaped yet), waiting up to 5 s
// for the signal to land. One that has not is killed here, so that a failing test leaves
// nothing behind (it would hold the test's output open).
bool process_ended(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  return false;
}

// The pid a crashy call that forked wrote to `file`; 0 when there is none.
pid_t forked_pid(const std::string& file) {
  std::ifstream in(file);
  int pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}

class Isolation : public ::testing::Test {
 protected:
  void SetUp() override {
    crashy_path_ = plugins_.add_plugin("crashy");
    plugins_.add_plugin("good");
    ASSERT_TRUE(register_builtin_backends(registry_).is_ok());
    memfds_before_ = open_memfds();
    // A crash must be told apart from a hang whatever the machine's load: a crashing
    // process under AddressSanitizer spends a while reporting before it exits. The
    // tests of the time limit set a short one themselves.
    make_loader(20000, 5000);
  }
  void TearDown() override {
    loader_.reset();
    // Every Method of the test is gone by now: so must be every process and region.
    EXPECT_EQ(isolation::live_backend_hosts(), 0u);
    EXPECT_EQ(child_processes(), "");
    EXPECT_EQ(open_memfds(), memfds_before_);
  }
  void make_loader(int execute_timeout_ms, int init_timeout_ms) {
    plugins::SearchPathOptions options = only({plugins_.path()});
    options.isolated_backends = {"crashy"};
    options.isolation.backend_host = PLUGRT_BACKEND_HOST_FILE;
    options.isolation.execute_timeout_ms = execute_timeout_ms;
    options.isolation.init_timeout_ms = init_timeout_ms;
    loader_.reset();
    loader_ = std::make_unique<PluginLoader>(registry_, options);
    loader_->discover();
  }
  Result<Method> load(std::vector<CompileSpec> specs = {}, bool with_fallback = true,
                      Span<const plugrt_option> runtime_options = {}) {
    OffsetProgramOptions options;
    options.backend = "crashy";
    options.compile_specs = std::move(specs);
    options.with_fallback = with_fallback;
    Result<Program> program = Program::from_bytes(offset_program(options), "crashy.prt");
    if (!program.is_ok()) return program.status();
    MethodOptions method_options;
    method_options.runtime_options = runtime_options;
    return Method::load(*program, "forward", registry_, method_options);
  }
  static Status run(Method& method, float base) {
    std::vector<float> x;
    for (int i = 0; i < 6; ++i) x.push_back(base + static_cast<float>(i));
    PLUGRT_RETURN_IF_ERROR(set_floats(method, 0, x));
    return method.execute();
  }
  static std::vector<float> plus(float base, float offset) {
    std::vector<float> y;
    for (int i = 0; i < 6; ++i) y.push_back(base + static_cast<float>(i) + offset);
    return y;
  }
  PluginReport crashy_report() const {
    for (const PluginReport& report : loader_->report()) {
      if (report.path == crashy_path_) return report;
    }
    ADD_FAILURE() << "no report for " << crashy_path_;
    return {};
  }

  TempDirectory plugins_;
  std::string crashy_path_;
  Registry registry_;
  std::unique_ptr<PluginLoader> loader_;
  int memfds_before_ = 0;
};

TEST_F(Isolation, AnIsolatedBackendRunsInAnotherProcessWithTheSameResults) {
  Result<Method> method = load();
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  const DelegatePlacement& placement = method->report().delegates.at(0);
  EXPECT_EQ(placement.backend, "crashy");
  EXPECT_TRUE(placement.isolated);
  EXPECT_FALSE(placement.fell_back);
  EXPECT_THAT(method->report().to_string(), HasSubstr("isolated"));
  EXPECT_EQ(isolation::live_backend_hosts(), 1u);  // one process per handle
  for (int call = 0; call < 5; ++call) {
    ASSERT_TRUE(run(*method, static_cast<float>(call)).is_ok());
    EXPECT_EQ(output_floats(*method, 0), plus(static_cast<float>(call), 1.5f));
  }
  const PluginReport report = crashy_report();
  EXPECT_TRUE(report.isolated);
  EXPECT_EQ(report.state, PluginReport::State::kLoaded);
  EXPECT_TRUE(report.crashes.empty());
  // The plugin's code never entered this process.
  EXPECT_FALSE(is_mapped(crashy_path_));
}

TEST_F(Isolation, AHandleMadeOnAThreadThatEndedKeepsItsProcess) {
  std::unique_ptr<Result<Method>> method;
  std::thread([&] { method = std::make_unique<Result<Method>>(load()); }).join();
  ASSERT_TRUE(method->is_ok()) << method->status().to_string();
  for (int call = 0; call < 3; ++call) {
    ASSERT_TRUE(run(**method, static_cast<float>(call)).is_ok());
    EXPECT_EQ(output_floats(**method, 0), plus(static_cast<float>(call), 1.5f));
  }
  EXPECT_FALSE((*method)->report().delegates.at(0).fell_back);
}

TEST_F(Isolation, ACrashInInitFallsBackLikeAnUnavailableBackend) {
  Result<Method> method = load({spec("init_crash", "1")});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  const DelegatePlacement& placement = method->report().delegates.at(0);
  EXPECT_TRUE(placement.fell_back);
  EXPECT_EQ(placement.backend, "portable");
  EXPECT_THAT(placement.reason,
              AllOf(HasSubstr("backend 'crashy'"), HasSubstr("init failed"), HasSubstr("isolated process")));
  ASSERT_TRUE(run(*method, 2).is_ok());
  EXPECT_EQ(output_floats(*method, 0), plus(2, 1.5f));
  const PluginReport report = crashy_report();
  ASSERT_EQ(report.init_failures.size(), 1u);
  EXPECT_EQ(report.init_failures[0].second.last.code(), Error::kDelegateCrashed);
  ASSERT_EQ(report.crashes.size(), 1u);
  EXPECT_EQ(report.crashes[0].second.count, 1u);
}

TEST_F(Isolation, TheReasonNamesTheSignal) {
  Result<Method> method = load({spec("init_crash", "2")});  // abort(): SIGABRT
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_THAT(method->report().delegates.at(0).reason, HasSubstr("killed by signal 6 (SIGABRT"));
}

TEST_F(Isolation, ACrashInExecuteIsRunOnTheFallbackWithinTheSameCall) {
  Result<Method> method = load({spec("crash_on_call", "3")});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  for (int call = 1; call <= 6; ++call) {
    const float base = static_cast<float>(call * 10);
    Status status = run(*method, base);
    ASSERT_TRUE(status.is_ok()) << "call " << call << ": " << status.to_string();
    EXPECT_EQ(output_floats(*method, 0), plus(base, 1.5f)) << "call " << call;
    const DelegatePlacement& placement = method->report().delegates.at(0);
    EXPECT_EQ(placement.backend, call < 3 ? "crashy" : "portable") << "call " << call;
    EXPECT_EQ(placement.fell_back, call >= 3);
  }
  EXPECT_THAT(method->report().delegates.at(0).reason,
              AllOf(HasSubstr("backend 'crashy'"), HasSubstr("execute failed"), HasSubstr("isolated process"),
                    // Under AddressSanitizer its SIGSEGV handler reports and exits instead.
                    AnyOf(HasSubstr("was killed by signal 11 (SIGSEGV"), HasSubstr("exited with code"))));
  EXPECT_EQ(isolation::live_backend_hosts(), 0u);  // reaped at once
  ASSERT_EQ(crashy_report().crashes.size(), 1u);
}

TEST_F(Isolation, AHangInExecuteIsKilledAtTheTimeLimitAndFallsBack) {
  make_loader(200, 5000);
  Result<Method> method = load({spec("hang_on_call", "2")});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  ASSERT_TRUE(run(*method, 1).is_ok());
  ASSERT_TRUE(run(*method, 2).is_ok());  // hangs on crashy, finishes on the fallback
  EXPECT_EQ(output_floats(*method, 0), plus(2, 1.5f));
  EXPECT_THAT(
      method->report().delegates.at(0).reason,
      AllOf(HasSubstr("did not answer within the 200 ms time limit (--execute-timeout-ms)"), HasSubstr("killed")));
}

// A descendant that holds the socket open does not hide its parent's crash: the exit is
// seen at once (not at the 20 s time limit), and the descendant ends with its group.
TEST_F(Isolation, ACrashIsSeenByTheProcessExitEvenWhileADescendantHoldsTheSocket) {
  const std::string pid_file = plugins_.path() + "/forked.pid";
  Result<Method> method = load({spec("fork_crash_on_call", "2"), spec("fork_pid_file", pid_file)});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  ASSERT_TRUE(run(*method, 1).is_ok());
  ASSERT_TRUE(run(*method, 2).is_ok());  // crashes on crashy, finishes on the fallback
  EXPECT_EQ(output_floats(*method, 0), plus(2, 1.5f));
  EXPECT_THAT(method->report().delegates.at(0).reason,
              AllOf(Not(HasSubstr("time limit")),
                    AnyOf(HasSubstr("was killed by signal 11 (SIGSEGV"), HasSubstr("exited with code"))));
  const pid_t forked = forked_pid(pid_file);
  ASSERT_GT(forked, 0);
  EXPECT_TRUE(process_ended(forked)) << "the backend host's child " << forked << " outlived it";
}

// A hang past the time limit ends the backend host's whole process group.
TEST_F(Isolation, AHangIsKilledWithEveryProcessItStarted) {
  make_loader(200, 5000);
  const std::string pid_file = plugins_.path() + "/forked.pid";
  Result<Method> method = load({spec("fork_hang_on_call", "1"), spec("fork_pid_file", pid_file)});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  ASSERT_TRUE(run(*method, 1).is_ok());
  EXPECT_THAT(method->report().delegates.at(0).reason, HasSubstr("did not answer within the 200 ms time limit"));
  const pid_t forked = forked_pid(pid_file);
  ASSERT_GT(forked, 0);
  EXPECT_TRUE(process_ended(forked)) << "the backend host's child " << forked << " outlived it";
}

// When the host process dies (here `plugrt run`, killed), its backend host ends its whole
// group: the plugin's descendants do not outlive the application.
TEST_F(Isolation, TheHostsDeathEndsEveryProcessTheBackendHostStarted) {
  const std::string pid_file = plugins_.path() + "/forked.pid";
  const std::string program_file = plugins_.path() + "/crashy.prt";
  OffsetProgramOptions options;
  options.backend = "crashy";
  options.compile_specs = {spec("fork_hang_on_call", "1"), spec("fork_pid_file", pid_file)};
  const std::vector<uint8_t> program = offset_program(options);
  std::ofstream(program_file, std::ios::binary)
      .write(reinterpret_cast<const char*>(program.data()), static_cast<std::streamsize>(program.size()));
  std::vector<std::string> args = {PLUGRT_COMMAND_FILE, "run",    program_file,  "--plugin-dir", plugins_.path(),
                                   "--isolate",         "crashy", "--placement", "as-compiled"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t command = -1;
  ASSERT_EQ(posix_spawn(&command, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  pid_t forked = 0;
  for (int i = 0; i < 1000 && forked == 0; ++i) {  // up to 10 s for the call to start
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    forked = forked_pid(pid_file);
  }
  kill(command, SIGKILL);
  int status = 0;
  waitpid(command, &status, 0);
  ASSERT_GT(forked, 0) << "the isolated call did not start";
  EXPECT_TRUE(process_ended(forked)) << "the backend host's child " << forked << " outlived the host";
}

TEST_F(Isolation, AHangInInitIsKilledAtTheInitTimeLimitAndFallsBack) {
  make_loader(200, 300);
  Result<Method> method = load({spec("init_hang", "1")});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_TRUE(method->report().delegates.at(0).fell_back);
  EXPECT_THAT(method->report().delegates.at(0).reason, HasSubstr("300 ms"));
  ASSERT_TRUE(run(*method, 3).is_ok());
  EXPECT_EQ(output_floats(*method, 0), plus(3, 1.5f));
}

TEST_F(Isolation, WritingPastTheOutputIsCaughtAndFallsBack) {
  Result<Method> method = load({spec("overrun_bytes", "16")});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  ASSERT_TRUE(run(*method, 4).is_ok());
  EXPECT_EQ(output_floats(*method, 0), plus(4, 1.5f));
  EXPECT_TRUE(method->report().delegates.at(0).fell_back);
  EXPECT_THAT(method->report().delegates.at(0).reason, HasSubstr("wrote past the end of output 0"));
}

TEST_F(Isolation, WithoutAFallbackTheCallFailsAndTheHostKeepsRunning) {
  Result<Method> method = load({spec("crash_on_call", "1")}, /*with_fallback=*/false);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  Status first = run(*method, 0);
  EXPECT_EQ(first.code(), Error::kDelegateCrashed);
  EXPECT_THAT(first.message(), AllOf(HasSubstr("delegate 'crashy:0'"), HasSubstr("isolated process")));
  Status second = run(*method, 0);  // not restarted: fails at once, saying so
  EXPECT_EQ(second.code(), Error::kDelegateCrashed);
  EXPECT_THAT(second.message(), HasSubstr("not restarted"));
  // Another handle of the same backend gets a process of its own.
  Result<Method> healthy = load({}, false);
  ASSERT_TRUE(healthy.is_ok()) << healthy.status().to_string();
  ASSERT_TRUE(run(*healthy, 5).is_ok());
  EXPECT_EQ(output_floats(*healthy, 0), plus(5, 1.5f));
}

TEST_F(Isolation, ACrashLeavesOtherMethodsOnTheirBackend) {
  const std::string key = "crash_on_call", value = "1";
  const plugrt_option crash{{key.data(), key.size()}, value.data(), value.size()};
  Result<Method> crashing = load({}, true, Span<const plugrt_option>(&crash, 1));
  Result<Method> other = load();
  ASSERT_TRUE(crashing.is_ok() && other.is_ok());
  ASSERT_TRUE(run(*crashing, 1).is_ok());
  EXPECT_EQ(output_floats(*crashing, 0), plus(1, 1.5f));
  EXPECT_TRUE(crashing->report().delegates.at(0).fell_back);
  ASSERT_TRUE(run(*other, 1).is_ok());
  EXPECT_EQ(output_floats(*other, 0), plus(1, 1.5f));
  EXPECT_EQ(other->report().delegates.at(0).backend, "crashy");
  EXPECT_FALSE(other->report().delegates.at(0).fell_back);
}

TEST_F(Isolation, AMissingBackendHostRefusesThePluginWithItsPath) {
  plugins::SearchPathOptions options = only({plugins_.path()});
  options.isolated_backends = {"all"};
  options.isolation.backend_host = plugins_.path() + "/no-such-backend-host";
  loader_ = std::make_unique<PluginLoader>(registry_, options);
  loader_->discover();
  Result<Method> method = load();
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();  // fell back
  EXPECT_THAT(method->report().delegates.at(0).reason,
              AllOf(HasSubstr(crashy_path_), HasSubstr("no-such-backend-host' is not an executable file")));
}

TEST_F(Isolation, AHostileBackendHostGetsAnErrorNotACrash) {
  // A "backend host" that answers with garbage, then with a frame announcing a huge payload.
  const std::string fake = plugins_.write(
      "fake-backend-host", "#!/bin/sh\nprintf 'JUNK-not-a-frame-at-all-xxxxxxxxxxxxxxxxxxx' >&3\nexec sleep 5\n");
  ASSERT_EQ(chmod(fake.c_str(), 0755), 0);
  plugins::SearchPathOptions options = only({plugins_.path()});
  options.isolated_backends = {"crashy"};
  options.isolation.backend_host = fake;
  loader_ = std::make_unique<PluginLoader>(registry_, options);
  loader_->discover();
  Result<Method> method = load();
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_TRUE(method->report().delegates.at(0).fell_back);
  EXPECT_THAT(method->report().delegates.at(0).reason,
              HasSubstr("malformed response (a frame has a bad magic number)"));
  ASSERT_TRUE(run(*method, 6).is_ok());
  EXPECT_EQ(output_floats(*method, 0), plus(6, 1.5f));
}

}  // namespace
}  // namespace plugrt::testing
