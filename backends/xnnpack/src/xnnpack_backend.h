// SPDX-License-Identifier: Apache-2.0
// The XNNPACK backend, written on the SDK: is_available and init here, partition and
// preprocess in aot/xnnpack_aot.cc (left out of an on-device build).
#ifndef PLUGRT_BACKENDS_XNNPACK_SRC_XNNPACK_BACKEND_H_
#define PLUGRT_BACKENDS_XNNPACK_SRC_XNNPACK_BACKEND_H_

#include "plugrt/sdk/backend.h"

namespace plugrt::xnnpack {

class XnnpackBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "xnnpack";
  static constexpr char kDescription[] =
      "XNNPACK (Debian 2022-02 snapshot) float32 CPU kernels, NHWC inside a partition, pthreadpool threads";
  // No CONCURRENT_EXECUTE: a handle owns one XNNPACK runtime and its I/O buffers, which
  // one call at a time may use. Separate handles run in parallel.
  static constexpr bool kHasAot = true;
#if PLUGRT_SDK_HAS_AOT
  // Partitions whose dimensions vary are lowered per shape at run time (plugrt/sdk/per_shape.h).
  static constexpr plugrt_backend_capabilities kCapabilities = PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS;
#endif

  /// Available where XNNPACK initialises: it refuses CPUs that lack the instructions its
  /// kernels need.
  sdk::Availability is_available(sdk::Host host) override;
  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext& context) override;

#if PLUGRT_SDK_HAS_AOT
  /// Takes each node that lowers to XNNPACK (aot/lowering.h); the others stay untaken.
  /// A graph whose dimensions vary is judged at the symbols' upper bounds.
  sdk::Status partition(const sdk::PartitionRequest& request) override;
  /// Lowers one partition to the blob that init reads (schema/xnnpack_blob.fbs). A
  /// partition whose dimensions vary is checked at its bounds and kept as its graph.
  sdk::Expected<std::vector<uint8_t>> preprocess(const sdk::PreprocessRequest& request) override;
#endif
};

}  // namespace plugrt::xnnpack

#endif  // PLUGRT_BACKENDS_XNNPACK_SRC_XNNPACK_BACKEND_H_
