// SPDX-License-Identifier: Apache-2.0
#include "worker_spin.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>

namespace plugrt::plugins {

namespace {

void pause_once() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// The budget PLUGRT_SPIN_US asks for, or the default when it is unset or not a number.
uint64_t spin_microseconds() {
  const char* text = std::getenv("PLUGRT_SPIN_US");
  if (text == nullptr || *text == '\0') return kDefaultSpinMicroseconds;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  return (*end == '\0' && value <= 1'000'000) ? value : kDefaultSpinMicroseconds;
}

}  // namespace

uint64_t pauses_in(uint64_t microseconds) {
  constexpr int kProbe = 2000;  // some 20 to 300 microseconds, by CPU
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kProbe; ++i) pause_once();
  const double nanoseconds =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / kProbe;
  const double pauses = static_cast<double>(microseconds) * 1000.0 / (nanoseconds > 0.5 ? nanoseconds : 0.5);
  return pauses < 1 ? 1 : static_cast<uint64_t>(pauses);
}

void bound_worker_spinning() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr) return;
    if (void* loaded = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(loaded);
      return;
    }
    setenv("GOMP_SPINCOUNT", std::to_string(pauses_in(spin_microseconds())).c_str(), 0);
  });
}

}  // namespace plugrt::plugins
