// SPDX-License-Identifier: Apache-2.0
// `plugrt bench PROGRAM.prt`: latency of "forward" (median and p90 over iterations after
// a warm-up) and the time spent in each delegate, from the executor's profiling events.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <mutex>

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

int run_bench(const BenchOptions& options) {
  if (options.iterations == 0) return fail("--iterations must be at least 1");
  CommandRuntime runtime(options.plugins);
  if (!runtime.status().is_ok()) return fail(runtime.status().message());
  Result<Program> program = Program::load(options.program);
  if (!program.is_ok()) return fail(program.status().message());
  const Clock::time_point load_start = Clock::now();
  Result<Method> method = runtime.load_method(*program, "forward", options.load);
  if (!method.is_ok()) return fail(method.status().message());
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - load_start).count();
  if (Status status = fill_inputs(*method, options.inputs, 0); !status.is_ok()) return fail(status.message());

  for (size_t i = 0; i < options.warmup; ++i) {
    if (Status status = method->execute(); !status.is_ok()) return fail(status.message());
  }
  const LoadReport& report = method->report();
  DelegateTimer timer(report);
  runtime.registry().environment().set_profiler(&timer);
  std::vector<double> latencies;
  std::vector<std::vector<double>> per_delegate(report.delegates.size());
  const bool progress = !options.json && isatty(STDERR_FILENO);
  for (size_t i = 0; i < options.iterations; ++i) {
    timer.reset();
    const Clock::time_point start = Clock::now();
    Status status = method->execute();
    latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!status.is_ok()) {
      runtime.registry().environment().set_profiler(nullptr);
      return fail(status.message());
    }
    for (size_t d = 0; d < per_delegate.size(); ++d) per_delegate[d].push_back(timer.totals()[d]);
    if (progress) std::cerr << "\r" << (i + 1) << "/" << options.iterations << std::flush;
  }
  runtime.registry().environment().set_profiler(nullptr);
  if (progress) std::cerr << "\r" << std::string(24, ' ') << "\r";

  json delegates = json::array();
  for (size_t d = 0; d < report.delegates.size(); ++d) {
    delegates.push_back({{"delegate", report.delegates[d].delegate},
                         {"backend", report.delegates[d].backend},
                         {"fell_back", report.delegates[d].fell_back},
                         {"blob_origin", report.delegates[d].blob_origin},
                         {"median_ms", percentile(per_delegate[d], 0.5)}});
  }
  json result = {{"program", options.program},
                 {"median_ms", percentile(latencies, 0.5)},
                 {"p90_ms", percentile(latencies, 0.9)},
                 {"min_ms", percentile(latencies, 0.0)},
                 {"iterations", options.iterations},
                 {"warmup", options.warmup},
                 {"threads", report.num_threads},
                 {"delegates", delegates},
                 {"load_ms", load_ms},
                 {"placement_policy", report.placement}};
  if (options.json) {
    std::cout << result.dump(2) << "\n";
    return 0;
  }
  std::cout << options.program << ": median " << result["median_ms"].get<double>() << " ms, p90 "
            << result["p90_ms"].get<double>() << " ms over " << options.iterations << " iterations (" << options.warmup
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
  command->add_option("--warmup", options->warmup, "Untimed runs first (default 5)");
  command
      ->add_option("--threads", options->load.threads,
                   "The method's thread budget, which its backends take turns on (default: the cores this "
                   "process may run on)")
      ->check(CLI::Range(size_t{0}, size_t{1024}));
  command->add_option("--input", options->inputs, "NAME=FILE.npy for an input (repeatable); others are random");
  command->add_option("--backends", options->load.backends, "Only these backends may run (comma-separated)");
  add_placement_options(*command, options->load);
  add_plugin_search_options(*command, options->plugins);
  add_isolation_options(*command, options->plugins);
  command->add_flag("--json", options->json,
                    "Print JSON (median_ms, p90_ms, iterations, threads, delegates, load_ms, placement_policy)");
  command->callback([options, &result] { result.exit_code = run_bench(*options); });
}

}  // namespace plugrt::tools
