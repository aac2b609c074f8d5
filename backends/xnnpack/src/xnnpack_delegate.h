// One initialised XNNPACK delegate: the runtime built from a blob, its pre-allocated
// external buffers, and the edge conversions.
#ifndef PLUGRT_BACKENDS_XNNPACK_SRC_XNNPACK_DELEGATE_H_
#define PLUGRT_BACKENDS_XNNPACK_SRC_XNNPACK_DELEGATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include <pthreadpool.h>
#include <xnnpack.h>

#include "plugrt/plugrt_abi.h"

namespace plugrt::xnnpack {

class XnnpackDelegate {
 public:
  /// Verifies the blob, defines the subgraph, creates and sets up the runtime. On
  /// failure reports the reason through `host` and returns its status:
  /// DELEGATE_INVALID_COMPATIBILITY for a blob of another format or version.
  static plugrt_status create(const plugrt_host_services* host, const plugrt_init_args* args,
                              XnnpackDelegate** out);

  /// Checks the arguments, converts the inputs into the runtime's buffers, invokes it and
  /// converts the outputs back. Allocates nothing.
  plugrt_status execute(const plugrt_execute_args* args);

  ~XnnpackDelegate();
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
    float* buffer = nullptr;  // host-allocated, with XNN_EXTRA_BYTES of slack
  };

  explicit XnnpackDelegate(const plugrt_host_services* host) : host_(host) {}
  plugrt_status build(const plugrt_init_args* args);
  plugrt_status fail(plugrt_status status, const std::string& message) const;
  bool check_tensor(const char* role, size_t index, const DLTensor* tensor, const External& external,
                    const float** data) const;

  const plugrt_host_services* host_;
  void* blob_copy_ = nullptr;  // only when the host's blob was not aligned for floats
  pthreadpool_t threadpool_ = nullptr;
  xnn_runtime_t runtime_ = nullptr;
  std::vector<External> inputs_;
  std::vector<External> outputs_;
};

}  // namespace plugrt::xnnpack

#endif  // PLUGRT_BACKENDS_XNNPACK_SRC_XNNPACK_DELEGATE_H_
