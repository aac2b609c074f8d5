// SPDX-License-Identifier: Apache-2.0
// The oneDNN backend, written on the SDK: is_available and init here, partition and
// preprocess in aot/onednn_aot.cc (left out of an on-device build).
#ifndef PLUGRT_BACKENDS_ONEDNN_SRC_ONEDNN_BACKEND_H_
#define PLUGRT_BACKENDS_ONEDNN_SRC_ONEDNN_BACKEND_H_

#include "plugrt/sdk/backend.h"

namespace plugrt::onednn {

class OnednnBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "onednn";
  static constexpr char kDescription[] =
      "oneDNN 2.x float32 CPU primitives (convolution, matmul, normalization...), formats chosen per machine, "
      "OpenMP threads capped per handle";
  // No CONCURRENT_EXECUTE: a handle's arena and stream serve one call at a time.
  // Separate handles run in parallel.
  static constexpr bool kHasAot = true;
#if PLUGRT_SDK_HAS_AOT
  // Partitions whose dimensions vary are lowered per shape at run time (plugrt/sdk/per_shape.h).
  static constexpr plugrt_backend_capabilities kCapabilities = PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS;
#endif

  /// Available where oneDNN can create a CPU engine. That only looks at the CPU (its ISA
  /// is detected once per process) and allocates nothing that lasts.
  sdk::Availability is_available(sdk::Host host) override;
  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext& context) override;

#if PLUGRT_SDK_HAS_AOT
  /// Takes each node that lowers to oneDNN on its own (aot/lowering.h); the others stay
  /// untaken. A graph whose dimensions vary is judged at the symbols' upper bounds.
  sdk::Status partition(const sdk::PartitionRequest& request) override;
  /// Lowers one partition, with its fusions, to the blob that init reads (schema/onednn_blob.fbs).
  /// A partition whose dimensions vary is checked at its bounds and kept as its graph
  /// (plugrt/sdk/per_shape.h).
  sdk::Expected<std::vector<uint8_t>> preprocess(const sdk::PreprocessRequest& request) override;
#endif
};

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_ONEDNN_BACKEND_H_
