// SPDX-License-Identifier: Apache-2.0
// The calibration set: DIR/*.npy for a model with one input (one file per sample), or
// DIR/<sample>/<input name>.npy for a model with several.
#ifndef PLUGRT_TOOLS_QUANTIZER_CALIBRATION_SAMPLES_H_
#define PLUGRT_TOOLS_QUANTIZER_CALIBRATION_SAMPLES_H_

#include <map>
#include <string>
#include <vector>

#include "npy.h"
#include "plugrt/status.h"

namespace plugrt::quantizer {

/// One sample: an array per input name, and the file each came from.
struct Sample {
  std::map<std::string, tools::NpyArray> inputs;
  std::map<std::string, std::string> files;
};

/// The samples in `dir`, in file-name order, for a model with inputs `inputs`. Errors
/// (kInvalidArgument, naming the directory or file): no such directory, no sample in it,
/// a sample that lacks an input or has a file no input is named after; read_npy's errors.
Result<std::vector<Sample>> read_samples(const std::string& dir, const std::vector<std::string>& inputs);

}  // namespace plugrt::quantizer

#endif  // PLUGRT_TOOLS_QUANTIZER_CALIBRATION_SAMPLES_H_
