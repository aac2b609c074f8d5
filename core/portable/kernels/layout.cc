// Layout and shape kernels: ops that move or view bytes without arithmetic.
#include <cstring>

#include "kernel_families.h"

namespace plugrt::portable {

namespace {

/// Copies the input bytes unchanged (Identity, and the reshaping ops whose output has
/// the same elements in the same order).
class CopyKernel final : public Kernel {
 public:
  explicit CopyKernel(size_t bytes) : bytes_(bytes) {}
  void run(const KernelArgs& args) const override {
    if (args.outputs[0] != args.inputs[0]) std::memmove(args.outputs[0], args.inputs[0], bytes_);
  }

 private:
  size_t bytes_;
};

Prepared prepare_identity(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  if (std::string why = check_output(node, 0, in.shape, in.dtype); !why.empty()) return prepare_error(node, why);
  return prepared<CopyKernel>(in.num_bytes());
}

}  // namespace

void add_layout_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"Identity", prepare_identity});
}

}  // namespace plugrt::portable
