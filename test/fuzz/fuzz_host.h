// SPDX-License-Identifier: Apache-2.0
// The host services table the fuzz targets hand to a backend: a plain aligned allocator
// that counts live blocks (a backend must release in destroy() all it allocated through
// the host in init()), and log and error sinks that drop what they get.
#ifndef PLUGRT_TEST_FUZZ_FUZZ_HOST_H_
#define PLUGRT_TEST_FUZZ_FUZZ_HOST_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "plugrt/plugrt_abi.h"

namespace plugrt::fuzz {

struct FuzzHost {
  plugrt_host_services services{};
  long live_blocks = 0;

  FuzzHost() {
    services.struct_size = PLUGRT_HOST_SERVICES_SIZE;
    services.abi_major = PLUGRT_ABI_MAJOR;
    services.abi_minor = PLUGRT_ABI_MINOR;
    services.context = this;
    services.allocate = [](void* context, size_t size, size_t alignment) -> void* {
      if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) return nullptr;
      if (alignment < sizeof(void*)) alignment = sizeof(void*);
      void* p = nullptr;
      if (posix_memalign(&p, alignment, size == 0 ? 1 : size) != 0) return nullptr;
      ++static_cast<FuzzHost*>(context)->live_blocks;
      return p;
    };
    services.deallocate = [](void* context, void* p) {
      if (p == nullptr) return;
      --static_cast<FuzzHost*>(context)->live_blocks;
      std::free(p);
    };
    services.log = [](void*, plugrt_log_level, plugrt_string) {};
    services.profile_begin = [](void*, plugrt_string) -> uint64_t { return 0; };
    services.profile_end = [](void*, uint64_t) {};
    services.report_error = [](void*, plugrt_status, plugrt_string) {};
  }
  FuzzHost(const FuzzHost&) = delete;
  FuzzHost& operator=(const FuzzHost&) = delete;
};

/// The backend named `name` in a plugin descriptor, or null.
inline const plugrt_backend* find_backend(const plugrt_plugin_descriptor* descriptor, const char* name,
                                          size_t name_size) {
  if (descriptor == nullptr) return nullptr;
  for (size_t i = 0; i < descriptor->num_backends; ++i) {
    const plugrt_backend* backend = descriptor->backends[i];
    if (backend == nullptr || backend->name.size != name_size) continue;
    bool same = true;
    for (size_t c = 0; c < name_size; ++c) same = same && backend->name.data[c] == name[c];
    if (same) return backend;
  }
  return nullptr;
}

/// A copy of the input at a 64-byte boundary, as the program loader hands blobs over
/// (segments are 64-byte aligned in a mapped file).
class AlignedCopy {
 public:
  AlignedCopy(const uint8_t* data, size_t size) : size_(size) {
    if (posix_memalign(&bytes_, 64, size == 0 ? 1 : size) != 0) bytes_ = nullptr;
    if (bytes_ != nullptr && size > 0) std::memcpy(bytes_, data, size);
  }
  ~AlignedCopy() { std::free(bytes_); }
  AlignedCopy(const AlignedCopy&) = delete;
  AlignedCopy& operator=(const AlignedCopy&) = delete;

  const void* data() const { return bytes_; }
  size_t size() const { return size_; }

 private:
  void* bytes_ = nullptr;
  size_t size_ = 0;
};

}  // namespace plugrt::fuzz

#endif  // PLUGRT_TEST_FUZZ_FUZZ_HOST_H_
