// SPDX-License-Identifier: Apache-2.0
/// \file mock_host.h
/// MockHostServices: a GoogleMock stand-in for the host services a plugin receives
/// (plugrt_host_services), for backend authors' own unit tests and for the contract kit.
/// Header-only; needs GoogleMock and the ABI header, nothing of the runtime.
///
///   ::testing::NiceMock<plugrt::sdk::testing::MockHostServices> host;
///   EXPECT_CALL(host, report_error(PLUGRT_STATUS_INVALID_ARGUMENT, ::testing::HasSubstr("dtype")));
///   backend->init(host.plugrt_table(), &args, &handle);
///   EXPECT_EQ(host.live_allocations(), 0);
///
/// By default allocate/deallocate really allocate (aligned) and keep count, so
/// live_allocations() says what a plugin has not released; the other calls do nothing.
/// Override any of them with EXPECT_CALL/ON_CALL. Thread-safe, as the real host is.
#ifndef PLUGRT_SDK_TESTING_MOCK_HOST_H_
#define PLUGRT_SDK_TESTING_MOCK_HOST_H_

#include <gmock/gmock.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "plugrt/plugrt_abi.h"

namespace plugrt::sdk::testing {

class MockHostServices {
 public:
  MockHostServices() {
    table_.struct_size = sizeof(table_);
    table_.abi_major = PLUGRT_ABI_MAJOR;
    table_.abi_minor = PLUGRT_ABI_MINOR;
    table_.context = this;
    table_.allocate = [](void* c, size_t size, size_t alignment) { return self(c)->allocate(size, alignment); };
    table_.deallocate = [](void* c, void* ptr) { self(c)->deallocate(ptr); };
    table_.log = [](void* c, plugrt_log_level level, plugrt_string m) { self(c)->log(level, text(m)); };
    table_.profile_begin = [](void* c, plugrt_string event) { return self(c)->profile_begin(text(event)); };
    table_.profile_end = [](void* c, uint64_t token) { self(c)->profile_end(token); };
    table_.report_error = [](void* c, plugrt_status s, plugrt_string m) { self(c)->report_error(s, text(m)); };
    ON_CALL(*this, allocate).WillByDefault([this](size_t size, size_t alignment) {
      return real_allocate(size, alignment);
    });
    ON_CALL(*this, deallocate).WillByDefault([this](void* ptr) { real_deallocate(ptr); });
    ON_CALL(*this, report_error).WillByDefault([this](plugrt_status status, const std::string& message) {
      std::lock_guard<std::mutex> lock(mutex_);
      last_error_ = message;
      last_status_ = status;
      ++num_errors_;
    });
    ON_CALL(*this, log).WillByDefault([this](plugrt_log_level, const std::string& message) {
      std::lock_guard<std::mutex> lock(mutex_);
      logs_.push_back(message);
    });
  }
  MockHostServices(const MockHostServices&) = delete;
  MockHostServices& operator=(const MockHostServices&) = delete;
  /// Releases whatever the plugin left allocated.
  ~MockHostServices() {
    for (auto& [ptr, size] : live_) std::free(ptr);
  }

  /// The C table to hand to a plugin. Valid while this object lives.
  const plugrt_host_services* plugrt_table() const { return &table_; }

  MOCK_METHOD(void*, allocate, (size_t size, size_t alignment));
  MOCK_METHOD(void, deallocate, (void* ptr));
  MOCK_METHOD(void, log, (plugrt_log_level level, const std::string& message));
  MOCK_METHOD(uint64_t, profile_begin, (const std::string& event));
  MOCK_METHOD(void, profile_end, (uint64_t token));
  MOCK_METHOD(void, report_error, (plugrt_status status, const std::string& message));

  /// The default actions of allocate and deallocate (call them from your own actions to
  /// keep the counting).
  void* real_allocate(size_t size, size_t alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) return nullptr;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    void* ptr = nullptr;
    if (posix_memalign(&ptr, alignment, size == 0 ? 1 : size) != 0) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    live_[ptr] = size;
    ++total_allocations_;
    return ptr;
  }
  void real_deallocate(void* ptr) {
    if (ptr == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (live_.erase(ptr) == 0) {
        ++bad_frees_;
        return;  // not ours, or freed twice: never pass it to free()
      }
    }
    std::free(ptr);
  }

  /// Allocations not yet released, and their sizes.
  int64_t live_allocations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int64_t>(live_.size());
  }
  std::vector<size_t> live_sizes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<size_t> sizes;
    for (const auto& entry : live_) sizes.push_back(entry.second);
    return sizes;
  }
  int64_t total_allocations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return total_allocations_;
  }
  /// deallocate() calls with a pointer allocate() never returned (or returned and freed).
  int64_t bad_frees() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bad_frees_;
  }
  /// What the default report_error action recorded.
  std::string last_error() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_error_;
  }
  int64_t num_errors() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return num_errors_;
  }
  std::vector<std::string> logs() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return logs_;
  }

 private:
  static MockHostServices* self(void* context) { return static_cast<MockHostServices*>(context); }
  static std::string text(plugrt_string s) { return s.data == nullptr ? std::string() : std::string(s.data, s.size); }

  plugrt_host_services table_{};
  mutable std::mutex mutex_;
  std::map<void*, size_t> live_;
  int64_t total_allocations_ = 0;
  int64_t bad_frees_ = 0;
  int64_t num_errors_ = 0;
  plugrt_status last_status_ = PLUGRT_STATUS_OK;
  std::string last_error_;
  std::vector<std::string> logs_;
};

}  // namespace plugrt::sdk::testing

#endif  // PLUGRT_SDK_TESTING_MOCK_HOST_H_
