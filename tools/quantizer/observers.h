// SPDX-License-Identifier: Apache-2.0
// What the calibration observes of one activation, and the range it is quantized over.
// minmax needs one pass over the samples; percentile and entropy a second one, which
// fills a histogram of |x| over [0, the largest |x| of the first].
#ifndef PLUGRT_TOOLS_QUANTIZER_OBSERVERS_H_
#define PLUGRT_TOOLS_QUANTIZER_OBSERVERS_H_

#include <vector>

#include "plugrt/span.h"
#include "quantizer.h"

namespace plugrt::quantizer {

/// The real range an activation is quantized over.
struct Range {
  float min = 0;
  float max = 0;
};

class TensorObserver {
 public:
  static constexpr size_t kBins = 2048;          ///< histogram bins of |x|
  static constexpr size_t kQuantizedBins = 128;  ///< the levels entropy calibration compares against

  /// First pass: the smallest and largest values.
  void observe(Span<const float> values);
  /// Second pass (percentile, entropy): the histogram of |x|.
  void observe_histogram(Span<const float> values);
  /// The range `observer` picks; `percentile` for Observer::kPercentile.
  Range range(Observer observer, double percentile) const;

 private:
  float absmax() const;
  float percentile_threshold(double percentile) const;
  float entropy_threshold() const;

  bool seen_ = false;
  float min_ = 0, max_ = 0;
  std::vector<double> histogram_;
};

/// The KL divergence of `hist`'s first `bins` bins (outliers added to the last) from the
/// same bins merged into `levels` levels: entropy calibration's measure of a threshold.
double clipping_divergence(const std::vector<double>& hist, size_t bins, size_t levels);

}  // namespace plugrt::quantizer

#endif  // PLUGRT_TOOLS_QUANTIZER_OBSERVERS_H_
