// SPDX-License-Identifier: Apache-2.0
// Verification at load (MethodOptions::verify): each delegated partition runs once, on
// seeded inputs, on its backend and on its portable fallback; when the results differ
// beyond a tolerance the partition stays on the fallback, and the load report says why.
// A VerificationStore keeps each verdict, so a partition is checked once per blob,
// backend build and device (placement's LoadPlacer keeps them in the blob cache).
#ifndef PLUGRT_VERIFICATION_H_
#define PLUGRT_VERIFICATION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "plugrt/backend.h"
#include "plugrt/span.h"

namespace plugrt {

/// The relative difference a verified partition may show: |backend - fallback| over
/// max(1, the largest |fallback| of that output). Float32 sums in another order or with
/// fused multiply-adds stay far below it; a wrong kernel or post-op lands far above.
inline constexpr double kVerificationTolerance = 1e-3;

struct VerificationVerdict {
  bool agreed = true;
  /// "max difference 2.1e-06 from its portable fallback (tolerance 0.001)", or what
  /// differed or failed.
  std::string detail;
};

/// Keeps verdicts across loads. Implementations must be safe to call from several
/// threads loading methods at once.
class VerificationStore {
 public:
  virtual ~VerificationStore() = default;
  /// The verdict kept for `backend` running `blob` (whose portable fallback is
  /// `fallback`), if any.
  virtual std::optional<VerificationVerdict> find_verdict(const RegisteredBackend& backend, Span<const uint8_t> blob,
                                                          Span<const uint8_t> fallback) = 0;
  virtual void keep_verdict(const RegisteredBackend& backend, Span<const uint8_t> blob, Span<const uint8_t> fallback,
                            const VerificationVerdict& verdict) = 0;
};

}  // namespace plugrt

#endif  // PLUGRT_VERIFICATION_H_
