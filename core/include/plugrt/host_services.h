// SPDX-License-Identifier: Apache-2.0
// The host side of plugrt_host_services: where plugin logs, profiling events and error
// reports go, and the allocator plugins borrow.
#ifndef PLUGRT_HOST_SERVICES_H_
#define PLUGRT_HOST_SERVICES_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "plugrt/plugrt_abi.h"
#include "plugrt/status.h"

namespace plugrt {

enum class LogLevel : int32_t {
  kDebug = PLUGRT_LOG_DEBUG,
  kInfo = PLUGRT_LOG_INFO,
  kWarning = PLUGRT_LOG_WARNING,
  kError = PLUGRT_LOG_ERROR,
};

/// Receives one log line; `source` names who said it (a plugin, "registry", ...).
using LogSink = std::function<void(LogLevel level, std::string_view source, std::string_view message)>;

/// Receives profiling events from backends and the runtime. Implementations must be
/// thread-safe; `begin` returns a token for `end` (0 means "not recorded").
class Profiler {
 public:
  virtual ~Profiler() = default;
  virtual uint64_t begin(std::string_view source, std::string_view event) = 0;
  virtual void end(uint64_t token) = 0;
};

/// Process-wide settings shared by every plugin's services: the log sink and level,
/// and the profiler. Thread-safe.
class HostEnvironment {
 public:
  HostEnvironment();
  /// For the programs that build no plugrt::Runtime (the kit, the backend host): plugins'
  /// log lines go to stderr when PLUGRT_LOG is set, and nowhere otherwise.
  static std::shared_ptr<HostEnvironment> from_environment();

  /// Replaces the sink (the default writes warnings and errors to stderr).
  void set_log_sink(LogSink sink);
  void set_min_log_level(LogLevel level) { min_level_.store(level); }
  /// `profiler` must outlive its use; nullptr turns profiling off.
  void set_profiler(Profiler* profiler) { profiler_.store(profiler); }

  void log(LogLevel level, std::string_view source, std::string_view message) const;
  Profiler* profiler() const { return profiler_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex sink_mutex_;
  LogSink sink_;
  std::atomic<LogLevel> min_level_{LogLevel::kWarning};
  std::atomic<Profiler*> profiler_{nullptr};
};

/// The failure a plugin reported through `report_error`, kept per thread.
struct ReportedError {
  std::string source;
  Error code = Error::kOk;
  std::string message;
};

/// Takes the error reported on this thread since the last call, if any.
std::optional<ReportedError> take_reported_error();

/// Forgets any error reported on this thread, so that a report made during a call that
/// then succeeded is never taken as the reason for a later failure. Allocates nothing.
void clear_reported_error();

/// The plugrt_host_services table lent to one plugin. Everything the plugin logs,
/// reports or profiles is attributed to `source`. Not movable: the table points at it.
class PluginHostServices {
 public:
  PluginHostServices(std::shared_ptr<HostEnvironment> environment, std::string source);
  PluginHostServices(const PluginHostServices&) = delete;
  PluginHostServices& operator=(const PluginHostServices&) = delete;

  const plugrt_host_services* table() const { return &table_; }
  const std::string& source() const { return source_; }
  /// Renames the source. Only before the table is shared with other threads.
  void set_source(std::string source) { source_ = std::move(source); }
  HostEnvironment& environment() const { return *environment_; }
  /// Allocations made through this table and not yet released.
  int64_t live_allocations() const { return live_allocations_.load(); }

 private:
  static void* allocate(void* context, size_t size, size_t alignment);
  static void deallocate(void* context, void* ptr);
  static void log(void* context, plugrt_log_level level, plugrt_string message);
  static uint64_t profile_begin(void* context, plugrt_string event_name);
  static void profile_end(void* context, uint64_t token);
  static void report_error(void* context, plugrt_status status, plugrt_string message);

  std::shared_ptr<HostEnvironment> environment_;
  std::string source_;
  std::atomic<int64_t> live_allocations_{0};
  plugrt_host_services table_;
};

}  // namespace plugrt

#endif  // PLUGRT_HOST_SERVICES_H_
