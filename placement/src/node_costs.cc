// SPDX-License-Identifier: Apache-2.0
#include "node_costs.h"

#include <algorithm>
#include <cmath>

#include "plugrt/placement/cost_model.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::placement {

std::vector<double> slowness(const std::vector<std::vector<double>>& measured, size_t portable) {
  const size_t num_backends = portable + 1;
  std::vector<double> log_sum(num_backends, 0);
  std::vector<size_t> count(num_backends, 0);
  for (const std::vector<double>& figures : measured) {
    double fastest = kNotTaken;
    size_t with_figures = 0;
    for (size_t b = 0; b < portable; ++b) {
      if (figures[b] < 0) continue;
      fastest = std::min(fastest, figures[b]);
      ++with_figures;
    }
    if (with_figures < 2 || !(fastest > 0)) continue;
    for (size_t b = 0; b < portable; ++b) {
      if (figures[b] < 0) continue;
      log_sum[b] += std::log(figures[b] / fastest);
      ++count[b];
    }
  }
  std::vector<double> factor(num_backends, 1.0);
  for (size_t b = 0; b < portable; ++b) {
    if (count[b] > 0) factor[b] = std::exp(log_sum[b] / static_cast<double>(count[b]));
  }
  return factor;
}

size_t read_costs(const ir::Graph& graph, const std::vector<std::vector<bool>>& taken, size_t portable,
                  const std::vector<std::string>& builds, const CostProfile* profile, PlacementProblem& problem,
                  std::vector<std::vector<double>>* measured, std::vector<std::vector<double>>* estimated) {
  const EstimateParameters estimate;
  size_t measured_nodes = 0;
  for (size_t n = 0; n < problem.node_cost.size(); ++n) {
    const NodeWork work = node_work(graph, n);
    const std::string signature = profile != nullptr ? op_signature(graph, n) : std::string();
    bool any = false;
    for (size_t b = 0; b < taken.size(); ++b) {
      if (!taken[b][n]) continue;
      (*estimated)[n][b] = problem.node_cost[n][b] = estimated_node_us(work, b == portable, estimate);
      if (profile == nullptr) continue;
      if (std::optional<double> figure = profile->find(builds[b], signature)) {
        (*measured)[n][b] = problem.node_cost[n][b] = *figure;
        any = any || b != portable;
      }
    }
    measured_nodes += any ? 1 : 0;
  }
  return measured_nodes;
}

void charge_unmeasured(const std::vector<std::vector<bool>>& taken, size_t portable,
                       const std::vector<std::vector<double>>& measured,
                       const std::vector<std::vector<double>>& estimated, PlacementProblem& problem) {
  const std::vector<double> factor = slowness(measured, portable);
  for (size_t n = 0; n < problem.node_cost.size(); ++n) {
    double dearest = -1;  // the dearest figure of a backend other than the fallback
    for (size_t b = 0; b < portable; ++b) dearest = std::max(dearest, taken[b][n] ? measured[n][b] : -1.0);
    for (size_t b = 0; b < portable; ++b) {
      if (!taken[b][n] || measured[n][b] >= 0) continue;
      problem.node_cost[n][b] =
          dearest >= 0 ? kUnmeasuredPenalty * std::max(dearest, estimated[n][b]) : estimated[n][b] * factor[b];
    }
  }
}

}  // namespace plugrt::placement
