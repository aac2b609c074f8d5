// SPDX-License-Identifier: Apache-2.0
// `plugrt bench PROGRAM.prt`: latency of "forward" (median and p90 over iterations after
// a warm-up) and the time spent in each delegate, from the executor's profiling events.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "command_runtime.h"
#include "commands.h"
#include "program_session.h"

namespace plugrt::tools {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct BenchOptions {
  std::string program;
  std::vector<std::string> inputs;
  size_t iterations = 50;
  size_t warmup = 5;
  size_t instances = 1;
  bool fixed_threads = false;
  LoadSettings load;
  PluginSearchOptions plugins;
  bool json = false;
};

/// Sums the time of each delegate call per label. Labels are fixed before timing
/// starts, so recording allocates nothing.
class DelegateTimer : public Profiler {
 public:
  explicit DelegateTimer(const LoadReport& report) {
    for (const DelegatePlacement& d : report.delegates) labels_.push_back(d.delegate);
    starts_.resize(labels_.size());
    totals_.assign(labels_.size(), 0.0);
  }
  uint64_t begin(std::string_view, std::string_view event) override {
    for (size_t i = 0; i < labels_.size(); ++i) {
      if (labels_[i] == event) {
        starts_[i] = Clock::now();
        return i + 1;
      }
    }
    return 0;
  }
  void end(uint64_t token) override {
    if (token == 0) return;
    totals_[token - 1] += std::chrono::duration<double, std::milli>(Clock::now() - starts_[token - 1]).count();
  }
  /// Milliseconds per delegate since the last reset.
  const std::vector<double>& totals() const { return totals_; }
  void reset() { std::fill(totals_.begin(), totals_.end(), 0.0); }

 private:
  std::vector<std::string> labels_;
  std::vector<Clock::time_point> starts_;
  std::vector<double> totals_;
};

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index = static_cast<size_t>(fraction * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

int fail(const std::string& message) {
  std::cerr << "plugrt bench: " << message << "\n";
  return 1;
}

/// Methods of the program that run in threads of their own for as long as it lives, so
/// that the timed method shares the process with them (--instances).
class BackgroundMethods {
 public:
  explicit BackgroundMethods(std::vector<Method> methods) : methods_(std::move(methods)) {
    for (Method& method : methods_) {
      threads_.emplace_back([this, &method] {
        while (!stop_.load(std::memory_order_relaxed)) {
          if (!method.execute().is_ok()) return;
        }
      });
    }
  }
  ~BackgroundMethods() {
    stop_.store(true);
    for (std::thread& thread : threads_) thread.join();
  }
  BackgroundMethods(const BackgroundMethods&) = delete;
  BackgroundMethods& operator=(const BackgroundMethods&) = delete;

 private:
  std::vector<Method> methods_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
};

/// Timed runs of `method`: each one's latency in ms, per-delegate times when `timer` is
/// given, and how many ran on one thread.
struct Timings {
  std::vector<double> latencies;
  std::vector<std::vector<double>> per_delegate;
  size_t one_thread_calls = 0;
};

Result<Timings> time_method(Method& method, const ExecuteOptions& limit, size_t iterations, DelegateTimer* timer,
                            bool progress) {
  Timings timings;
  timings.per_delegate.resize(method.report().delegates.size());
  for (size_t i = 0; i < iterations; ++i) {
    if (timer != nullptr) timer->reset();
    const Clock::time_point start = Clock::now();
    Status status = method.execute(limit);
    timings.latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    PLUGRT_RETURN_IF_ERROR(status);
    if (method.last_call_threads() == 1) ++timings.one_thread_calls;
    if (timer != nullptr) {
      for (size_t d = 0; d < timings.per_delegate.size(); ++d) timings.per_delegate[d].push_back(timer->totals()[d]);
    }
    if (progress) std::cerr << "\r" << (i + 1) << "/" << iterations << std::flush;
  }
  if (progress) std::cerr << "\r" << std::string(24, ' ') << "\r";
  return timings;
}

int run_bench(const BenchOptions& options) {
  if (options.iterations == 0) return fail("--iterations must be at least 1");
  if (options.instances == 0) return fail("--instances must be at least 1");
  Result<std::unique_ptr<Runtime>> made = make_runtime(options.plugins);
  if (!made.is_ok()) return fail(made.status().message());
  Runtime& runtime = **made;
  Result<Program> program = Program::load(options.program);
  if (!program.is_ok()) return fail(program.status().message());
  LoadSettings settings = options.load;
  settings.adapt_threads = !options.fixed_threads;
  const Clock::time_point load_start = Clock::now();
  Result<Method> method = runtime.load_method(*program, "forward", settings);
  if (!method.is_ok()) return fail(method.status().message());
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - load_start).count();
  if (Status status = fill_inputs(*method, options.inputs, 0); !status.is_ok()) return fail(status.message());
  std::vector<Method> others;
  for (size_t i = 1; i < options.instances; ++i) {
    Result<Method> other = runtime.load_method(*program, "forward", settings);
    if (!other.is_ok()) return fail(other.status().message());
    if (Status status = fill_inputs(*other, options.inputs, 0); !status.is_ok()) return fail(status.message());
    others.push_back(std::move(other).value());
  }

  ExecuteOptions limit;  // --execute-timeout-ms bounds every call, on any backend
  limit.timeout = std::chrono::milliseconds(options.plugins.execute_timeout_ms);
  // The warm-up also covers the method's first comparison of thread counts (at most
  // kMaxSettlingCalls more calls), so timed calls see the count it follows.
  constexpr size_t kMaxSettlingCalls = 32;
  size_t warmup = 0;
  while (warmup < options.warmup || (!method->threads_settled() && warmup < options.warmup + kMaxSettlingCalls)) {
    if (Status status = method->execute(limit); !status.is_ok()) return fail(status.message());
    ++warmup;
  }
  const LoadReport& report = method->report();
  // The profiler is the registry's, so it times delegates only when one method runs.
  DelegateTimer timer(report);
  if (others.empty()) runtime.registry().environment().set_profiler(&timer);
  Result<Timings> timed = [&] {
    BackgroundMethods background(std::move(others));
    return time_method(*method, limit, options.iterations, others.empty() ? &timer : nullptr,
                       !options.json && isatty(STDERR_FILENO));
  }();
  runtime.registry().environment().set_profiler(nullptr);
  if (!timed.is_ok()) return fail(timed.status().message());
  const std::vector<double>& latencies = timed->latencies;
  const std::vector<std::vector<double>>& per_delegate = timed->per_delegate;

  json delegates = json::array();
  for (size_t d = 0; d < report.delegates.size(); ++d) {
    delegates.push_back({{"delegate", report.delegates[d].delegate},
                         {"backend", report.delegates[d].backend},
                         {"fell_back", report.delegates[d].fell_back},
                         {"blob_origin", report.delegates[d].blob_origin},
                         {"median_ms", per_delegate[d].empty() ? 0.0 : percentile(per_delegate[d], 0.5)}});
  }
  json result = {{"program", options.program},
                 {"median_ms", percentile(latencies, 0.5)},
                 {"p90_ms", percentile(latencies, 0.9)},
                 {"min_ms", percentile(latencies, 0.0)},
                 {"iterations", options.iterations},
                 {"warmup", warmup},
                 {"threads", report.num_threads},
                 {"one_thread_calls", timed->one_thread_calls},
                 {"instances", options.instances},
                 {"delegates", delegates},
                 {"load_ms", load_ms},
                 {"placement_policy", report.placement}};
  if (options.json) {
    std::cout << result.dump(2) << "\n";
    return 0;
  }
  std::cout << options.program << ": median " << result["median_ms"].get<double>() << " ms, p90 "
            << result["p90_ms"].get<double>() << " ms over " << options.iterations << " iterations (" << warmup
            << " warm-up, " << report.num_threads << " threads; loaded in " << load_ms << " ms, placement "
            << report.placement << ")\n";
  for (const json& d : delegates) {
    std::cout << "  " << d["delegate"].get<std::string>() << " on " << d["backend"].get<std::string>() << ": median "
              << d["median_ms"].get<double>() << " ms" << (d["fell_back"].get<bool>() ? " (fallback)" : "") << "\n";
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command = app.add_subcommand("bench", "Measure a program's forward latency and the time in each delegate");
  command->add_option("PROGRAM", options->program, "The program (.prt)")->required();
  command->add_option("--iterations", options->iterations, "Timed runs (default 50)");
  command->add_option("--warmup", options->warmup,
                      "Untimed runs first (default 5; more while the method first compares its thread counts)");
  command->add_option("--input", options->inputs, "NAME=FILE.npy for an input (repeatable); others are random");
  command->add_option("--instances", options->instances,
                      "Methods of the program in this process: the first is timed while the others run in threads "
                      "of their own (default 1)");
  command->add_flag("--fixed-threads", options->fixed_threads,
                    "Every call on the whole thread budget (by default a call runs on one thread while one runs "
                    "the method faster)");
  add_load_options(*command, options->load);
  add_plugin_search_options(*command, options->plugins);
  add_isolation_options(*command, options->plugins);
  command->add_flag("--json", options->json,
                    "Print JSON (median_ms, p90_ms, iterations, threads, delegates, load_ms, placement_policy)");
  command->callback([options, &result] { result.exit_code = run_bench(*options); });
}

}  // namespace plugrt::tools
