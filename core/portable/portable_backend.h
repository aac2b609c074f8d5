// SPDX-License-Identifier: Apache-2.0
// The portable backend: the reference interpreter of graph IR blobs that runs whatever no
// other backend can. It is written on the SDK like any vendor's backend; the same class
// serves the copy built into the core and the copy built as a plugin (portable_entry.cc).
#ifndef PLUGRT_PORTABLE_PORTABLE_BACKEND_H_
#define PLUGRT_PORTABLE_PORTABLE_BACKEND_H_

#include "plugrt/sdk/backend.h"

namespace plugrt::portable {

class PortableBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "portable";
  static constexpr char kDescription[] =
      "reference kernels for every op plugrt imports; float32, and int64 for indices";
  // No CONCURRENT_EXECUTE: one handle runs one call at a time, its arena is shared by its calls.
  // Graphs whose dimensions vary run at each call's shapes (dynamic_graph.h).
  static constexpr plugrt_backend_capabilities kCapabilities = PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS;
  static constexpr bool kHasAot = true;

  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext& context) override;
  sdk::Status partition(const sdk::PartitionRequest& request) override;
  /// The portable backend's blob is the graph IR itself, checked and copied.
  sdk::Expected<std::vector<uint8_t>> preprocess(const sdk::PreprocessRequest& request) override;
};

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_PORTABLE_BACKEND_H_
