// SPDX-License-Identifier: Apache-2.0
#include "calibration_samples.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace plugrt::quantizer {

namespace {

namespace fs = std::filesystem;

Status invalid(const std::string& where, const std::string& why) {
  return Status(Error::kInvalidArgument, where + ": " + why);
}

/// The entries of `dir` that are .npy files (files) or directories (!files), sorted.
std::vector<fs::path> entries(const fs::path& dir, bool files) {
  std::vector<fs::path> found;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    if (files ? entry.is_regular_file(error) && entry.path().extension() == ".npy" : entry.is_directory(error)) {
      found.push_back(entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

Status add_input(Sample* sample, const std::string& input, const fs::path& file) {
  Result<tools::NpyArray> array = tools::read_npy(file.string());
  if (!array.is_ok()) return array.status();
  sample->inputs[input] = std::move(*array);
  sample->files[input] = file.string();
  return Status::ok();
}

/// DIR/<sample>/<input>.npy: every input's file, and no other.
Result<Sample> read_sample_dir(const fs::path& dir, const std::vector<std::string>& inputs) {
  Sample sample;
  for (const fs::path& file : entries(dir, true)) {
    const std::string stem = file.stem().string();
    if (std::find(inputs.begin(), inputs.end(), stem) == inputs.end()) {
      std::string names;
      for (const std::string& input : inputs) names += (names.empty() ? "'" : ", '") + input + "'";
      return invalid(file.string(), "names no input of the model (its inputs: " + names + ")");
    }
    PLUGRT_RETURN_IF_ERROR(add_input(&sample, stem, file));
  }
  for (const std::string& input : inputs) {
    if (sample.inputs.count(input) == 0)
      return invalid(dir.string(), "has no " + input + ".npy for input '" + input + "'");
  }
  return sample;
}

}  // namespace

Result<std::vector<Sample>> read_samples(const std::string& dir, const std::vector<std::string>& inputs) {
  std::error_code error;
  if (dir.empty()) return invalid("--calibrate", "no calibration directory given (or use --dynamic)");
  if (!fs::is_directory(dir, error)) return invalid(dir, "not a calibration directory (no such directory)");
  std::vector<Sample> samples;
  const std::vector<fs::path> files = entries(dir, true);
  if (inputs.size() == 1 && !files.empty()) {
    for (const fs::path& file : files) {
      Sample sample;
      PLUGRT_RETURN_IF_ERROR(add_input(&sample, inputs[0], file));
      samples.push_back(std::move(sample));
    }
    return samples;
  }
  for (const fs::path& sub : entries(dir, false)) {
    Result<Sample> sample = read_sample_dir(sub, inputs);
    if (!sample.is_ok()) return sample.status();
    samples.push_back(std::move(*sample));
  }
  if (samples.empty()) {
    return invalid(dir, inputs.size() == 1 ? "holds no .npy file (one per sample)"
                                           : "holds no sample directory (DIR/<sample>/<input name>.npy)");
  }
  return samples;
}

}  // namespace plugrt::quantizer
