// SPDX-License-Identifier: Apache-2.0
// Reading and writing NumPy .npy files (format versions 1.0 to 3.0, little-endian,
// C order): how `plugrt run` takes inputs and writes outputs.
#ifndef PLUGRT_TOOLS_PLUGRT_NPY_H_
#define PLUGRT_TOOLS_PLUGRT_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plugrt/dtype.h"
#include "plugrt/status.h"

namespace plugrt::tools {

struct NpyArray {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  ///< little-endian elements, C order
};

/// Errors: kAccessFailed (cannot read), kInvalidArgument (not a .npy file, a Fortran
/// order or big-endian array, or a dtype plugrt lacks), each naming the file.
Result<NpyArray> read_npy(const std::string& path);
/// Errors: kAccessFailed naming the file.
Status write_npy(const std::string& path, const NpyArray& array);

/// A CPU DLPack view of `array`'s data and shape, borrowed: valid while the array lives
/// and is not resized.
inline DLTensor dltensor_view(NpyArray& array) {
  return DLTensor{array.data.data(),
                  {kDLCPU, 0},
                  static_cast<int32_t>(array.shape.size()),
                  to_dlpack(array.dtype),
                  array.shape.data(),
                  nullptr,
                  0};
}

}  // namespace plugrt::tools

#endif  // PLUGRT_TOOLS_PLUGRT_NPY_H_
