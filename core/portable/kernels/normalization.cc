#include "kernel_families.h"

namespace plugrt::portable {

void add_normalization_kernels(std::vector<KernelEntry>& table) { (void)table; }

}  // namespace plugrt::portable
