// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/placer.h"

#include <algorithm>
#include <cmath>

#include "plugrt/placement/partitioner.h"

namespace plugrt::placement {

namespace {

bool takes(const std::vector<std::vector<double>>& cost, size_t n, size_t b) { return std::isfinite(cost[n][b]); }

/// The costs the search uses: the fallback's only where no other backend takes the node.
std::vector<std::vector<double>> effective_costs(const PlacementProblem& problem) {
  std::vector<std::vector<double>> cost = problem.node_cost;
  for (std::vector<double>& row : cost) {
    bool other = false;
    for (size_t b = 0; b < row.size(); ++b) other |= std::isfinite(row[b]) && !problem.fallback[b];
    if (!other) continue;
    for (size_t b = 0; b < row.size(); ++b) {
      if (problem.fallback[b]) row[b] = kNotTaken;
    }
  }
  return cost;
}

size_t cheapest(const std::vector<double>& row) {
  size_t best = 0;
  for (size_t b = 1; b < row.size(); ++b) {
    if (row[b] < row[best]) best = b;
  }
  return best;
}

/// Evaluates placements of one problem; keeps what every evaluation needs.
class Search {
 public:
  explicit Search(const PlacementProblem& problem)
      : problem_(problem),
        cost_(effective_costs(problem)),
        producers_(problem.graph.producers()),
        neighbours_(problem.graph.num_nodes),
        incident_(problem.graph.num_nodes) {
    for (size_t e = 0; e < problem.graph.edges.size(); ++e) {
      const NodeGraph::Edge& edge = problem.graph.edges[e];
      neighbours_[edge.from].push_back(edge.to);
      neighbours_[edge.to].push_back(edge.from);
      incident_[edge.from].push_back(e);
      incident_[edge.to].push_back(e);
    }
  }

  size_t num_nodes() const { return cost_.size(); }
  size_t num_backends() const { return problem_.fallback.size(); }
  bool takes(size_t n, size_t b) const { return placement::takes(cost_, n, b); }
  double node_cost(size_t n, size_t b) const { return cost_[n][b]; }
  const std::vector<uint32_t>& neighbours(size_t n) const { return neighbours_[n]; }

  double crossing(const NodeGraph::Edge& edge) const {
    return problem_.crossing_us + problem_.crossing_us_per_byte * static_cast<double>(edge.bytes);
  }

  double total(const std::vector<size_t>& node_backend, std::vector<size_t>* group_of = nullptr) const {
    double sum = 0;
    for (size_t n = 0; n < node_backend.size(); ++n) sum += problem_.node_cost[n][node_backend[n]];
    for (const NodeGraph::Edge& edge : problem_.graph.edges) {
      if (node_backend[edge.from] != node_backend[edge.to]) sum += crossing(edge);
    }
    size_t groups = 0;
    std::vector<size_t> grouped = group_nodes(producers_, node_backend, &groups);
    if (group_of != nullptr) *group_of = std::move(grouped);
    return sum + problem_.partition_us * static_cast<double>(groups);
  }

  /// An optimistic change of total() when `nodes` move to `b`, to skip moves that cannot
  /// help without regrouping: the exact change of the node and crossing costs, less one
  /// partition per distinct group among the nodes and their neighbours.
  double optimistic_delta(const std::vector<size_t>& node_backend, const std::vector<size_t>& group_of,
                          const std::vector<uint32_t>& nodes, size_t b, std::vector<char>& moving) const {
    double delta = 0;
    for (uint32_t n : nodes) moving[n] = 1;
    std::vector<size_t> groups;
    for (uint32_t n : nodes) {
      delta += problem_.node_cost[n][b] - problem_.node_cost[n][node_backend[n]];
      groups.push_back(group_of[n]);
      for (size_t e : incident_[n]) {
        const NodeGraph::Edge& edge = problem_.graph.edges[e];
        const uint32_t other = edge.from == n ? edge.to : edge.from;
        groups.push_back(group_of[other]);
        if (moving[other] && other < n) continue;  // counted once, from its other end
        const size_t before_other = node_backend[other];
        const size_t after_other = moving[other] ? b : before_other;
        delta += (after_other != b ? crossing(edge) : 0) - (before_other != node_backend[n] ? crossing(edge) : 0);
      }
    }
    for (uint32_t n : nodes) moving[n] = 0;
    std::sort(groups.begin(), groups.end());
    const auto distinct = static_cast<double>(std::unique(groups.begin(), groups.end()) - groups.begin());
    return delta - problem_.partition_us * distinct;
  }

 private:
  const PlacementProblem& problem_;
  std::vector<std::vector<double>> cost_;
  std::vector<std::vector<uint32_t>> producers_;
  std::vector<std::vector<uint32_t>> neighbours_;
  std::vector<std::vector<size_t>> incident_;
};

/// The connected nodes reached from `start` through nodes that `accept` allows.
template <typename Accept>
std::vector<uint32_t> region(const Search& search, size_t start, Accept accept) {
  std::vector<uint32_t> found = {static_cast<uint32_t>(start)};
  std::vector<char> seen(search.num_nodes(), 0);
  seen[start] = 1;
  for (size_t i = 0; i < found.size(); ++i) {
    for (uint32_t m : search.neighbours(found[i])) {
      if (seen[m] || !accept(m)) continue;
      seen[m] = 1;
      found.push_back(m);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

double placement_cost(const PlacementProblem& problem, const std::vector<size_t>& node_backend) {
  return Search(problem).total(node_backend);
}

Placement place(const PlacementProblem& problem) {
  const Search search(problem);
  const size_t nodes = search.num_nodes(), backends = search.num_backends();
  Placement best;
  if (nodes == 0) return best;

  // Starting points: one backend taking all it can, or every node on its cheapest taker.
  std::vector<size_t> cheapest_taker(nodes);
  for (size_t n = 0; n < nodes; ++n) {
    std::vector<double> row(backends);
    for (size_t b = 0; b < backends; ++b) row[b] = search.node_cost(n, b);
    cheapest_taker[n] = cheapest(row);
  }
  // Within the partition bound first, then cheaper.
  const size_t bound = problem.max_partitions;
  auto count = [&](const std::vector<size_t>& group_of) {
    return group_of.empty() ? size_t{0} : *std::max_element(group_of.begin(), group_of.end()) + 1;
  };
  auto better = [&](size_t groups, double cost, size_t best_groups, double best_cost) {
    const bool fits = bound == 0 || groups <= bound, best_fits = bound == 0 || best_groups <= bound;
    if (fits != best_fits) return fits;
    if (!fits && groups != best_groups) return groups < best_groups;
    return cost < best_cost - 1e-9 * std::max(1.0, std::fabs(best_cost));
  };
  std::vector<size_t> groups_of;
  best.node_backend = cheapest_taker;
  best.estimated_us = search.total(best.node_backend, &groups_of);
  size_t best_groups = count(groups_of);
  for (size_t b = 0; b < backends; ++b) {
    std::vector<size_t> candidate = cheapest_taker;
    for (size_t n = 0; n < nodes; ++n) {
      if (search.takes(n, b)) candidate[n] = b;
    }
    const double cost = search.total(candidate, &groups_of);
    if (better(count(groups_of), cost, best_groups, best.estimated_us)) {
      best = Placement{std::move(candidate), cost};
      best_groups = count(groups_of);
    }
  }

  // Local moves: a node, its run on its current backend, or the whole region another
  // backend could take, whichever lowers the total; until nothing does (bounded rounds).
  constexpr int kMaxRounds = 16;
  std::vector<size_t>& current = best.node_backend;
  std::vector<size_t> group_of;
  search.total(current, &group_of);
  std::vector<char> moving(nodes, 0);
  for (int round = 0; round < kMaxRounds; ++round) {
    bool improved = false;
    for (size_t n = 0; n < nodes; ++n) {
      for (size_t b = 0; b < backends; ++b) {
        if (b == current[n] || !search.takes(n, b)) continue;
        const size_t from = current[n];
        std::vector<std::vector<uint32_t>> moves;
        moves.push_back({static_cast<uint32_t>(n)});
        moves.push_back(region(search, n, [&](uint32_t m) { return current[m] == from && search.takes(m, b); }));
        moves.push_back(region(search, n, [&](uint32_t m) { return current[m] != b && search.takes(m, b); }));
        for (size_t i = 0; i < moves.size(); ++i) {
          if (i > 0 && moves[i] == moves[i - 1]) continue;
          const bool fits = bound == 0 || best_groups <= bound;  // else fewer partitions may cost more
          if (fits && search.optimistic_delta(current, group_of, moves[i], b, moving) >= 0) continue;
          std::vector<size_t> trial = current;
          for (uint32_t m : moves[i]) trial[m] = b;
          std::vector<size_t> trial_groups;
          const double cost = search.total(trial, &trial_groups);
          if (better(count(trial_groups), cost, best_groups, best.estimated_us)) {
            best_groups = count(trial_groups);
            current = std::move(trial);
            group_of = std::move(trial_groups);
            best.estimated_us = cost;
            improved = true;
            break;
          }
        }
        if (current[n] != from) break;
      }
    }
    if (!improved) break;
  }
  return best;
}

}  // namespace plugrt::placement
