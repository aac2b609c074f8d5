// SPDX-License-Identifier: Apache-2.0
/// \file host.h
/// Host: a C++ view of the plugrt_host_services table the host lends a plugin (allocator,
/// logger, profiler, error reports), and HostBuffer, memory from the host's allocator
/// released when it goes out of scope.
///
/// A plugin never writes to stdout or stderr: it logs through Host::log(), and says why a
/// call failed by returning a Status (the SDK reports it through `report_error`).
#ifndef PLUGRT_SDK_HOST_H_
#define PLUGRT_SDK_HOST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "plugrt/plugrt_abi.h"
#include "plugrt/sdk/status.h"

namespace plugrt::sdk {

/// Borrowed; cheap to copy. Valid as long as the table it wraps: until the plugin is
/// unloaded (the table given to the entry function) or until the handle made with it is
/// destroyed (the one given to init). Every function is thread-safe.
class Host {
 public:
  explicit Host(const plugrt_host_services* table) : table_(table) {}

  const plugrt_host_services* table() const { return table_; }
  /// The ABI version the host was built with (its table's abi_major/abi_minor).
  uint32_t abi_major() const { return table_ == nullptr ? 0 : table_->abi_major; }
  uint32_t abi_minor() const { return table_ == nullptr ? 0 : table_->abi_minor; }

  /// Memory from the host's allocator (nullptr on failure); release it with deallocate().
  /// `alignment` is a power of two up to 4096.
  void* allocate(size_t size, size_t alignment = alignof(std::max_align_t)) const {
    if (!has(PLUGRT_STRUCT_SIZE(plugrt_host_services, allocate)) || table_->allocate == nullptr) return nullptr;
    return table_->allocate(table_->context, size, alignment);
  }
  void deallocate(void* ptr) const {
    if (ptr != nullptr && has(PLUGRT_STRUCT_SIZE(plugrt_host_services, deallocate)) && table_->deallocate != nullptr) {
      table_->deallocate(table_->context, ptr);
    }
  }

  void log(plugrt_log_level level, std::string_view message) const {
    if (has(PLUGRT_STRUCT_SIZE(plugrt_host_services, log)) && table_->log != nullptr) {
      table_->log(table_->context, level, plugrt_string{message.data(), message.size()});
    }
  }
  void debug(std::string_view message) const { log(PLUGRT_LOG_DEBUG, message); }
  void info(std::string_view message) const { log(PLUGRT_LOG_INFO, message); }
  void warning(std::string_view message) const { log(PLUGRT_LOG_WARNING, message); }
  void error(std::string_view message) const { log(PLUGRT_LOG_ERROR, message); }

  /// Reports why a call is about to fail. The SDK's export layer does this for every
  /// failing Status a backend returns; call it directly only from code outside the SDK.
  void report_error(plugrt_status status, std::string_view message) const {
    if (has(PLUGRT_STRUCT_SIZE(plugrt_host_services, report_error)) && table_->report_error != nullptr) {
      table_->report_error(table_->context, status, plugrt_string{message.data(), message.size()});
    }
  }

  uint64_t profile_begin(std::string_view event) const {
    if (!has(PLUGRT_STRUCT_SIZE(plugrt_host_services, profile_begin)) || table_->profile_begin == nullptr) return 0;
    return table_->profile_begin(table_->context, plugrt_string{event.data(), event.size()});
  }
  void profile_end(uint64_t token) const {
    if (token != 0 && has(PLUGRT_STRUCT_SIZE(plugrt_host_services, profile_end)) && table_->profile_end != nullptr) {
      table_->profile_end(table_->context, token);
    }
  }

 private:
  // True when the host's table is long enough to hold the field ending at `end`.
  bool has(size_t end) const { return table_ != nullptr && table_->struct_size >= end; }
  const plugrt_host_services* table_;
};

/// A profiling event open for the lifetime of the scope. `event` must be a literal or
/// otherwise outlive the call to profile_begin.
class ProfileScope {
 public:
  ProfileScope(Host host, std::string_view event) : host_(host), token_(host.profile_begin(event)) {}
  ~ProfileScope() { host_.profile_end(token_); }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  Host host_;
  uint64_t token_;
};

/// Bytes from the host's allocator, released on destruction. Move-only. Use it for what a
/// delegate keeps (weights, scratch): the host sees, counts and limits that memory.
class HostBuffer {
 public:
  HostBuffer() : host_(nullptr) {}
  /// Allocates `size` bytes; fails with DelegateMemoryAllocationFailed.
  static Expected<HostBuffer> allocate(Host host, size_t size, size_t alignment = 64) {
    if (size == 0) return HostBuffer(host, nullptr, 0);
    void* data = host.allocate(size, alignment);
    if (data == nullptr) {
      return Status::out_of_memory("the host could not allocate " + std::to_string(size) + " bytes");
    }
    return HostBuffer(host, data, size);
  }
  HostBuffer(HostBuffer&& other) noexcept
      : host_(other.host_), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  HostBuffer& operator=(HostBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      host_ = other.host_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() { reset(); }

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  size_t size() const { return size_; }
  /// Gives the memory up without releasing it (e.g. a preprocess blob the host takes).
  void* release() {
    size_ = 0;
    return std::exchange(data_, nullptr);
  }
  void reset() {
    host_.deallocate(data_);
    data_ = nullptr;
    size_ = 0;
  }

 private:
  HostBuffer(Host host, void* data, size_t size) : host_(host), data_(data), size_(size) {}
  Host host_;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_HOST_H_
