// SPDX-License-Identifier: Apache-2.0
// The differential check: one ONNX graph compiled for a fast backend (what it does not
// take on portable) and for the portable backend alone, both run on the same seeded
// inputs, their outputs compared with a tolerance that scales with the graph's
// longest reduction.
#ifndef PLUGRT_TEST_DIFFERENTIAL_DIFFERENTIAL_H_
#define PLUGRT_TEST_DIFFERENTIAL_DIFFERENTIAL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/registry.h"

namespace plugrt::differential {

struct Verdict {
  /// Empty when both programs compiled, loaded and ran; else what failed, which is a
  /// failure of the check as well (a graph the generator writes is valid ONNX).
  std::string error;
  /// The largest (|backend - portable| - absolute bound) / max(1, |portable|) over every
  /// float output element (infinity when the shapes differ or one side has a NaN the
  /// other has not), or, where an 8-bit output is the furthest from its bound (in
  /// difference / tolerance), its largest |backend - portable| in quanta.
  double difference = 0;
  double tolerance = 0;
  bool in_quanta = false;  ///< difference and tolerance are an 8-bit output's, in quanta
  /// Nodes the backend ran (0: the graph only tested portable against itself).
  size_t nodes_on_backend = 0;

  bool agrees() const { return error.empty() && difference <= tolerance; }
  /// "max difference 0.77 (tolerance 0.0012), 3 nodes on onednn", or the error.
  std::string to_string(const std::string& backend) const;
};

/// How one output is compared: a float output within tolerance * max(1, |portable|) +
/// `absolute`; an 8-bit one (quanta >= 0) within `quanta` of portable's.
struct OutputBound {
  int64_t quanta = -1;
  double absolute = 0;
};

/// The bounds a graph states in its metadata (random_graph.h, kOutputBoundsKey), one per
/// output; empty when it states none or they do not parse (every output float, absolute 0).
std::vector<OutputBound> output_bounds(const std::vector<uint8_t>& onnx);

/// The tolerance for a graph whose longest reduction has `length` terms: float32
/// rounding grows about with the square root of a sum's length, and a fast backend may
/// sum in another order or with fused multiply-adds.
double tolerance_for(int64_t reduction_length);

class Checker {
 public:
  /// A registry with the built-in backends and each plugin file (loaded on first use).
  explicit Checker(const std::vector<std::string>& plugin_files);
  ~Checker();

  /// Checks `onnx` on `backend` against portable, with inputs drawn from `input_seed`.
  Verdict check(const std::vector<uint8_t>& onnx, int64_t reduction_length, const std::string& backend,
                uint32_t input_seed);

  /// Whether `backend` is present and available on this machine (why not in `why`).
  bool available(const std::string& backend, std::string* why);

 private:
  Registry registry_;
  std::unique_ptr<plugins::PluginLoader> loader_;
};

/// A disagreement (or an error) found on one random graph.
struct Finding {
  uint64_t seed = 0;
  std::string description;
  Verdict verdict;
  std::string saved_as;  ///< the ONNX file written for it; empty when none was
};

struct Campaign {
  size_t graphs = 0;
  size_t graphs_on_backend = 0;  ///< those with at least one node on the backend
  std::vector<Finding> findings;
};

/// Checks the random graphs of seeds first_seed, first_seed + 1, ... on `backend`, `count`
/// of them or as many as `seconds` allow (<= 0: no limit). Each finding's graph is written
/// to `failures_dir` (when not empty) as <backend>-<seed>.k<reduction length>.onnx, the
/// name the regression cases keep.
Campaign run_campaign(Checker& checker, const std::string& backend, uint64_t first_seed, size_t count, double seconds,
                      const std::string& failures_dir);

/// The reduction length a regression case's file name carries (".k64.onnx"), else 1.
int64_t reduction_length_of(const std::string& file_name);

/// The largest relative difference of two outputs, as Verdict::difference, where
/// |actual - expected| up to `absolute` counts as none.
double relative_difference(const std::vector<float>& actual, const std::vector<float>& expected, double absolute = 0);

}  // namespace plugrt::differential

#endif  // PLUGRT_TEST_DIFFERENTIAL_DIFFERENTIAL_H_
