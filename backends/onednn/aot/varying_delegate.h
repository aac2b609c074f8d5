// SPDX-License-Identifier: Apache-2.0
// Partitions whose dimensions vary (graph IR with symbols). Their blob holds the
// partition's graph IR itself; a handle reads each call's symbol values from its input
// shapes, and lowers and builds the graph for those values the first time they come (a
// static oneDNN handle, weights read from the graph in place), keeping the last few.
// Lowering at run time needs the ahead-of-time half: an on-device build refuses these
// blobs as incompatible, and the host runs their portable fallback.
#ifndef PLUGRT_BACKENDS_ONEDNN_AOT_VARYING_DELEGATE_H_
#define PLUGRT_BACKENDS_ONEDNN_AOT_VARYING_DELEGATE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plugrt/sdk/backend.h"
#include "plugrt/sdk/blob_header.h"
#include "plugrt/sdk/symbol_binder.h"

namespace plugrt::onednn {

/// Magic PRTONDNV: the header, then the partition's graph IR.
inline constexpr sdk::BlobFormat kVaryingBlobFormat{"PRTONDNV", "oneDNN varying-shape", 1, 1};

/// The blob of a partition whose dimensions vary.
std::vector<uint8_t> write_varying_blob(const void* graph, size_t graph_size);

class VaryingDelegate final : public sdk::Delegate {
 public:
  /// The static handles kept, one per set of symbol values (least recently used goes).
  static constexpr size_t kMaxSpecializations = 8;

  /// Checks the graph and builds it at the symbols' upper bounds (which checks that it
  /// lowers); that handle is the first one kept.
  static sdk::Expected<std::unique_ptr<sdk::Delegate>> create(const sdk::InitContext& context);

  /// Binds the symbols from the inputs' shapes (naming the input, dimension and bound
  /// when one does not fit), then runs the handle for those values. Allocates only the
  /// first time a set of values comes. Values at which the graph does not lower are
  /// refused as incompatible: the host runs that call on the portable fallback.
  sdk::Status execute(const sdk::Arguments& args) override;

 private:
  struct Specialization {
    std::vector<int64_t> symbol_values;
    std::vector<uint8_t> blob;              // the static blob its handle reads
    std::unique_ptr<sdk::Delegate> handle;  // null for values the graph does not lower at
    std::string refusal;                    // why not, then
    uint64_t last_use = 0;
  };

  explicit VaryingDelegate(const sdk::InitContext& context);
  /// Lowers and builds the graph at the bound symbols' values.
  sdk::Expected<Specialization> specialize() const;

  sdk::Host host_;
  size_t num_threads_ = 0;
  const uint8_t* graph_ = nullptr;  // in the blob, which outlives the handle
  size_t graph_size_ = 0;
  std::vector<plugrt_named_constant> constants_;  // the graph's, by name: the handles read them in place
  sdk::SymbolBinder symbols_;
  std::vector<Specialization> kept_;
  uint64_t calls_ = 0;
};

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_AOT_VARYING_DELEGATE_H_
