// SPDX-License-Identifier: Apache-2.0
// One XNNPACK handle: the runtime built from a blob, its pre-allocated external buffers,
// and the edge conversions.
#ifndef PLUGRT_BACKENDS_XNNPACK_SRC_XNNPACK_DELEGATE_H_
#define PLUGRT_BACKENDS_XNNPACK_SRC_XNNPACK_DELEGATE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pthreadpool.h>
#include <xnnpack.h>

#include "plugrt/sdk/backend.h"

namespace plugrt::xnnpack {

namespace blob {
struct Blob;
struct Node;
}  // namespace blob

class XnnpackDelegate final : public sdk::Delegate {
 public:
  /// Verifies the blob, defines the subgraph, creates and sets up the runtime. A blob of
  /// another format or version is refused as incompatible (the host falls back).
  static sdk::Expected<std::unique_ptr<sdk::Delegate>> create(const sdk::InitContext& context);

  /// Checks the arguments, converts the inputs into the runtime's buffers, invokes it and
  /// converts the outputs back. Allocates nothing unless it fails, or it is the first
  /// call on one thread of a handle with a pool (see runtime_for).
  sdk::Status execute(const sdk::Arguments& args) override;

  ~XnnpackDelegate() override;
  XnnpackDelegate(const XnnpackDelegate&) = delete;
  XnnpackDelegate& operator=(const XnnpackDelegate&) = delete;

 private:
  /// One partition input or output: where XNNPACK reads or writes it, and how the host's
  /// tensor maps onto it.
  struct External {
    uint32_t xnn_id = XNN_INVALID_VALUE_ID;
    std::vector<int64_t> host_dims;
    size_t num_elements = 0;
    bool transpose = false;  // NCHW <-> NHWC at the edge
    size_t batch = 0, channels = 0, spatial = 0;
    uint8_t dtype_code = kDLFloat;  // the host's type: float32, or int8 or uint8 (quantized values)
    size_t element_size = sizeof(float);
    bool flip_sign = false;  // the host's uint8 is XNNPACK's int8: the top bit flipped
    void* buffer = nullptr;  // host-allocated, with XNN_EXTRA_BYTES of slack
  };

  /// What defining the blob's tensors gives the later phases.
  struct DefinedTensors {
    std::vector<uint32_t> ids;   // XNNPACK value id of each blob tensor
    std::vector<size_t> counts;  // element count of each blob tensor
    uint64_t runtime_bytes = 0;  // what the runtime and the I/O buffers will allocate
  };

  explicit XnnpackDelegate(sdk::Host host) : host_(host) {}

  struct SubgraphDeleter {
    void operator()(xnn_subgraph_t subgraph) const { xnn_delete_subgraph(subgraph); }
  };
  using Subgraph = std::unique_ptr<xnn_subgraph, SubgraphDeleter>;

  // The phases of create, in order.
  sdk::Expected<const blob::Blob*> open_blob(const sdk::InitContext& context);
  static sdk::Status new_subgraph(const blob::Blob& root, Subgraph* subgraph);
  static sdk::Status define_nodes(const blob::Blob& root, const std::vector<uint32_t>& ids, xnn_subgraph_t subgraph);
  sdk::Status define_subgraph(DefinedTensors* tensors, Subgraph* subgraph) const;
  sdk::Status define_tensors(const blob::Blob& root, xnn_subgraph_t subgraph, DefinedTensors* tensors) const;
  sdk::Status bind_externals(const blob::Blob& root, const DefinedTensors& tensors);
  static sdk::Status check_dataflow(const blob::Blob& root);
  static sdk::Status define_node(const blob::Blob& root, size_t index, const std::vector<uint32_t>& ids,
                                 xnn_subgraph_t subgraph);
  sdk::Status create_runtime(xnn_subgraph_t subgraph, uint64_t runtime_bytes, size_t num_threads);
  sdk::Status set_up(xnn_runtime_t runtime) const;
  xnn_runtime_t runtime_for(size_t threads);

  sdk::Status check_tensor(const char* role, size_t index, const DLTensor* tensor, const External& external) const;

  sdk::Host host_;
  void* blob_copy_ = nullptr;  // only when the host's blob was not aligned for floats
  pthreadpool_t threadpool_ = nullptr;
  xnn_runtime_t runtime_ = nullptr;
  const blob::Blob* root_ = nullptr;  // in the blob, which outlives the handle
  xnn_runtime_t one_thread_runtime_ = nullptr;
  bool one_thread_refused_ = false;
  std::vector<External> inputs_;
  std::vector<External> outputs_;
};

}  // namespace plugrt::xnnpack

#endif  // PLUGRT_BACKENDS_XNNPACK_SRC_XNNPACK_DELEGATE_H_
