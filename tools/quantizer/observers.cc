// SPDX-License-Identifier: Apache-2.0
#include "observers.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace plugrt::quantizer {

void TensorObserver::observe(Span<const float> values) {
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = values.data()[i];
    if (!std::isfinite(v)) continue;
    min_ = seen_ ? std::min(min_, v) : v;
    max_ = seen_ ? std::max(max_, v) : v;
    seen_ = true;
  }
}

float TensorObserver::absmax() const { return std::max(std::fabs(min_), std::fabs(max_)); }

void TensorObserver::observe_histogram(Span<const float> values) {
  if (histogram_.empty()) histogram_.assign(kBins, 0.0);
  const float top = absmax();
  if (top <= 0) return;
  const double per_bin = static_cast<double>(kBins) / top;
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = std::fabs(values.data()[i]);
    if (!std::isfinite(v)) continue;
    histogram_[std::min(static_cast<size_t>(v * per_bin), kBins - 1)] += 1;
  }
}

float TensorObserver::percentile_threshold(double percentile) const {
  double total = 0;
  for (double count : histogram_) total += count;
  const double wanted = total * std::clamp(percentile, 0.0, 100.0) / 100.0;
  double cumulative = 0;
  for (size_t i = 0; i < histogram_.size(); ++i) {
    cumulative += histogram_[i];
    if (cumulative >= wanted) return absmax() * static_cast<float>(i + 1) / kBins;
  }
  return absmax();
}

double clipping_divergence(const std::vector<double>& hist, size_t bins, size_t levels) {
  std::vector<double> p(hist.begin(), hist.begin() + static_cast<std::ptrdiff_t>(bins));
  for (size_t i = bins; i < hist.size(); ++i) p[bins - 1] += hist[i];
  // q: each level's count spread evenly over the bins of that level that are not empty.
  std::vector<double> q(bins, 0.0);
  const double per_level = static_cast<double>(bins) / static_cast<double>(levels);
  for (size_t level = 0; level < levels; ++level) {
    const auto first = static_cast<size_t>(std::floor(level * per_level));
    const size_t last = level + 1 == levels ? bins : static_cast<size_t>(std::floor((level + 1) * per_level));
    double sum = 0;
    size_t nonzero = 0;
    for (size_t i = first; i < last; ++i) {
      sum += hist[i];
      nonzero += hist[i] > 0 ? 1 : 0;
    }
    for (size_t i = first; i < last && nonzero > 0; ++i) q[i] = hist[i] > 0 ? sum / nonzero : 0;
  }
  double p_total = 0, q_total = 0;
  for (size_t i = 0; i < bins; ++i) p_total += p[i], q_total += q[i];
  if (p_total <= 0 || q_total <= 0) return std::numeric_limits<double>::infinity();
  double divergence = 0;
  constexpr double kFloor = 1e-10;  // a bin q leaves empty where p has values: a large, finite cost
  for (size_t i = 0; i < bins; ++i) {
    if (p[i] <= 0) continue;
    const double pi = p[i] / p_total, qi = std::max(q[i] / q_total, kFloor);
    divergence += pi * std::log(pi / qi);
  }
  return divergence;
}

float TensorObserver::entropy_threshold() const {
  double total = 0;
  for (double count : histogram_) total += count;
  if (total < kBins) return absmax();  // too few values to speak of a distribution
  // The zeros a Relu writes would make the first bin a spike that every merge smears,
  // pushing the threshold down; weigh it as its neighbour (as NVIDIA's calibrator does).
  std::vector<double> hist = histogram_;
  hist[0] = hist[1];
  size_t best = kBins;
  double best_divergence = std::numeric_limits<double>::infinity();
  for (size_t bins = kQuantizedBins; bins <= kBins; ++bins) {
    const double divergence = clipping_divergence(hist, bins, kQuantizedBins);
    if (divergence < best_divergence) best_divergence = divergence, best = bins;
  }
  return absmax() * static_cast<float>(best) / kBins;
}

Range TensorObserver::range(Observer observer, double percentile) const {
  if (!seen_) return Range{};
  if (observer == Observer::kMinMax || histogram_.empty()) return Range{min_, max_};
  const float threshold = observer == Observer::kPercentile ? percentile_threshold(percentile) : entropy_threshold();
  return Range{std::max(min_, -threshold), std::min(max_, threshold)};
}

}  // namespace plugrt::quantizer
