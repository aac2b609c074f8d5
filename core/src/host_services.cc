// SPDX-License-Identifier: Apache-2.0
#include "plugrt/host_services.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace plugrt {
namespace {

constexpr size_t kMaxAlignment = 4096;

// The last error a plugin reported on this thread, until the host takes it.
thread_local std::optional<ReportedError> tls_reported_error;

std::string_view view_of(plugrt_string text) {
  if (text.data == nullptr) return {};
  return std::string_view(text.data, text.size);
}

std::string_view level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
  }
  return "log";
}

LogLevel clamp_level(plugrt_log_level level) {
  if (level <= PLUGRT_LOG_DEBUG) return LogLevel::kDebug;
  if (level >= PLUGRT_LOG_ERROR) return LogLevel::kError;
  return static_cast<LogLevel>(level);
}

PluginHostServices& self(void* context) { return *static_cast<PluginHostServices*>(context); }

}  // namespace

HostEnvironment::HostEnvironment()
    : sink_([](LogLevel level, std::string_view source, std::string_view message) {
        std::fprintf(stderr, "plugrt %.*s [%.*s]: %.*s\n", static_cast<int>(level_name(level).size()),
                     level_name(level).data(), static_cast<int>(source.size()), source.data(),
                     static_cast<int>(message.size()), message.data());
      }) {}

std::shared_ptr<HostEnvironment> HostEnvironment::from_environment() {
  auto environment = std::make_shared<HostEnvironment>();
  if (std::getenv("PLUGRT_LOG") == nullptr) environment->set_log_sink(nullptr);
  return environment;
}

void HostEnvironment::set_log_sink(LogSink sink) {
  std::lock_guard<std::mutex> lock(sink_mutex_);
  sink_ = std::move(sink);
}

void HostEnvironment::log(LogLevel level, std::string_view source, std::string_view message) const {
  if (level < min_level_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(sink_mutex_);
  if (sink_) sink_(level, source, message);
}

std::optional<ReportedError> take_reported_error() {
  std::optional<ReportedError> taken = std::move(tls_reported_error);
  tls_reported_error.reset();
  return taken;
}

void clear_reported_error() {
  if (tls_reported_error.has_value()) tls_reported_error.reset();
}

PluginHostServices::PluginHostServices(std::shared_ptr<HostEnvironment> environment, std::string source)
    : environment_(std::move(environment)), source_(std::move(source)) {
  table_.struct_size = sizeof(plugrt_host_services);
  table_.abi_major = PLUGRT_ABI_MAJOR;
  table_.abi_minor = PLUGRT_ABI_MINOR;
  table_.context = this;
  table_.allocate = &PluginHostServices::allocate;
  table_.deallocate = &PluginHostServices::deallocate;
  table_.log = &PluginHostServices::log;
  table_.profile_begin = &PluginHostServices::profile_begin;
  table_.profile_end = &PluginHostServices::profile_end;
  table_.report_error = &PluginHostServices::report_error;
}

void* PluginHostServices::allocate(void* context, size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment) {
    return nullptr;
  }
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  void* ptr = nullptr;
  if (posix_memalign(&ptr, alignment, size == 0 ? 1 : size) != 0) return nullptr;
  self(context).live_allocations_.fetch_add(1, std::memory_order_relaxed);
  return ptr;
}

void PluginHostServices::deallocate(void* context, void* ptr) {
  if (ptr == nullptr) return;
  self(context).live_allocations_.fetch_sub(1, std::memory_order_relaxed);
  std::free(ptr);
}

void PluginHostServices::log(void* context, plugrt_log_level level, plugrt_string message) {
  PluginHostServices& host = self(context);
  host.environment_->log(clamp_level(level), host.source_, view_of(message));
}

uint64_t PluginHostServices::profile_begin(void* context, plugrt_string event_name) {
  PluginHostServices& host = self(context);
  Profiler* profiler = host.environment_->profiler();
  return profiler == nullptr ? 0 : profiler->begin(host.source_, view_of(event_name));
}

void PluginHostServices::profile_end(void* context, uint64_t token) {
  if (token == 0) return;
  Profiler* profiler = self(context).environment_->profiler();
  if (profiler != nullptr) profiler->end(token);
}

void PluginHostServices::report_error(void* context, plugrt_status status, plugrt_string message) {
  PluginHostServices& host = self(context);
  tls_reported_error = ReportedError{host.source_, error_from_abi(status), std::string(view_of(message))};
  host.environment_->log(LogLevel::kDebug, host.source_, view_of(message));
}

}  // namespace plugrt
