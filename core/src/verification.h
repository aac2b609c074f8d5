// SPDX-License-Identifier: Apache-2.0
// The check behind MethodOptions::verify (plugrt/verification.h): one delegate call run
// on its backend and on its portable fallback, on the same seeded inputs.
#ifndef PLUGRT_CORE_SRC_VERIFICATION_H_
#define PLUGRT_CORE_SRC_VERIFICATION_H_

#include <vector>

#include <dlpack/dlpack.h>

#include "plugrt/backend.h"
#include "plugrt/verification.h"

namespace plugrt::internal {

/// One delegate call's tensors as the method planned them.
struct PlannedCall {
  std::vector<const DLTensor*> inputs;
  std::vector<bool> constant;  ///< per input: its data is a constant, used as it is
  std::vector<const DLTensor*> outputs;
};

/// Runs `call` once through `backend` and once through `reference`, the other inputs
/// drawn from a fixed seed (floats uniform in [-2, 2), integers and booleans zero) and
/// every output poisoned with NaN bytes first, then compares the outputs: floating-point
/// ones within kVerificationTolerance, others exactly. Allocates its own buffers; the
/// method's arena is not touched. The backend failing counts as a disagreement; an
/// error means the reference failed, so nothing was verified.
Result<VerificationVerdict> compare_with_reference(DelegateHandle& backend, DelegateHandle& reference,
                                                   const PlannedCall& call);

}  // namespace plugrt::internal

#endif  // PLUGRT_CORE_SRC_VERIFICATION_H_
