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
  /// partition per group the move could remove: each group all of whose nodes move; each
  /// group some of whose nodes move that had an edge out of it there (a path through it
  /// may go, letting it merge with another); and all but one of the groups on `b` next to
  /// the nodes (which the moved nodes may join); plus one when `b` has no group yet (the
  /// moved nodes make one). A node moved out of the middle of a long group removes none,
  /// so a chain of N nodes costs N cheap checks, not N regroupings; nor does a run that
  /// would only change backend, on a graph cut into thousands of partitions.
  double optimistic_delta(const std::vector<size_t>& node_backend, const std::vector<size_t>& group_of,
                          const std::vector<size_t>& group_size, const std::vector<uint32_t>& nodes, size_t b,
                          bool b_has_groups, std::vector<char>& moving) const {
    double delta = 0;
    for (uint32_t n : nodes) moving[n] = 1;
    std::vector<size_t> moved_groups, neighbours_on_b, left_groups;
    for (uint32_t n : nodes) {
      delta += problem_.node_cost[n][b] - problem_.node_cost[n][node_backend[n]];
      moved_groups.push_back(group_of[n]);
      for (size_t e : incident_[n]) {
        const NodeGraph::Edge& edge = problem_.graph.edges[e];
        const uint32_t other = edge.from == n ? edge.to : edge.from;
        if (!moving[other] && node_backend[other] == b) neighbours_on_b.push_back(group_of[other]);
        if (!moving[other] && group_of[other] != group_of[n]) left_groups.push_back(group_of[n]);
        if (moving[other] && other < n) continue;  // counted once, from its other end
        const size_t before_other = node_backend[other];
        const size_t after_other = moving[other] ? b : before_other;
        delta += (after_other != b ? crossing(edge) : 0) - (before_other != node_backend[n] ? crossing(edge) : 0);
      }
    }
    for (uint32_t n : nodes) moving[n] = 0;
    std::sort(moved_groups.begin(), moved_groups.end());
    std::sort(left_groups.begin(), left_groups.end());
    size_t removable = 0;
    for (size_t i = 0; i < moved_groups.size();) {
      size_t j = i;
      while (j < moved_groups.size() && moved_groups[j] == moved_groups[i]) ++j;
      const bool emptied = j - i == group_size[moved_groups[i]];
      if (emptied || std::binary_search(left_groups.begin(), left_groups.end(), moved_groups[i])) ++removable;
      i = j;
    }
    std::sort(neighbours_on_b.begin(), neighbours_on_b.end());
    const size_t joined = std::unique(neighbours_on_b.begin(), neighbours_on_b.end()) - neighbours_on_b.begin();
    const double added = joined == 0 && !b_has_groups ? 1 : 0;
    removable += joined > 1 ? joined - 1 : 0;
    return delta - problem_.partition_us * (static_cast<double>(removable) - added);
  }

 private:
  const PlacementProblem& problem_;
  std::vector<std::vector<double>> cost_;
  std::vector<std::vector<uint32_t>> producers_;
  std::vector<std::vector<uint32_t>> neighbours_;
  std::vector<std::vector<size_t>> incident_;
};

/// Connected components of the nodes `accept` allows, two of them joined when they are
/// neighbours and `joined` says so: each node's component (or kNone), and each
/// component's nodes in ascending order. One pass over the graph, O(nodes + edges).
struct Components {
  static constexpr size_t kNone = SIZE_MAX;
  std::vector<size_t> of;
  std::vector<std::vector<uint32_t>> members;
};

template <typename Accept, typename Joined>
Components components(const Search& search, Accept accept, Joined joined) {
  Components result;
  result.of.assign(search.num_nodes(), Components::kNone);
  for (size_t start = 0; start < search.num_nodes(); ++start) {
    if (result.of[start] != Components::kNone || !accept(start)) continue;
    const size_t label = result.members.size();
    std::vector<uint32_t> found = {static_cast<uint32_t>(start)};
    result.of[start] = label;
    for (size_t i = 0; i < found.size(); ++i) {
      for (uint32_t m : search.neighbours(found[i])) {
        if (result.of[m] != Components::kNone || !accept(m) || !joined(found[i], m)) continue;
        result.of[m] = label;
        found.push_back(m);
      }
    }
    std::sort(found.begin(), found.end());
    result.members.push_back(std::move(found));
  }
  return result;
}

/// The moves of one backend `b` under the current placement: a node's run (its connected
/// nodes on its own backend that `b` takes) and its region (its connected nodes not on
/// `b` that `b` takes), each evaluated once until the placement changes.
struct BackendMoves {
  Components runs, regions;
  std::vector<char> run_tried, region_tried;
};

BackendMoves moves_for(const Search& search, const std::vector<size_t>& current, size_t b) {
  BackendMoves moves;
  auto movable = [&](size_t m) { return current[m] != b && search.takes(m, b); };
  moves.runs = components(search, movable, [&](size_t u, size_t v) { return current[u] == current[v]; });
  moves.regions = components(search, movable, [](size_t, size_t) { return true; });
  moves.run_tried.assign(moves.runs.members.size(), 0);
  moves.region_tried.assign(moves.regions.members.size(), 0);
  return moves;
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
  // Runs and regions are found for all nodes at once and each is tried once, so a round
  // is near-linear in the graph's size however long its chains (placement/README.md).
  constexpr int kMaxRounds = 16;
  std::vector<size_t>& current = best.node_backend;
  std::vector<size_t> group_of, group_size;
  std::vector<char> has_groups;  // per backend
  auto count_members = [&] {
    group_size.assign(count(group_of), 0);
    has_groups.assign(backends, 0);
    for (size_t n = 0; n < nodes; ++n) {
      ++group_size[group_of[n]];
      has_groups[current[n]] = 1;
    }
  };
  search.total(current, &group_of);
  count_members();
  std::vector<char> moving(nodes, 0);
  std::vector<BackendMoves> by_backend;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool improved = false;
    by_backend.clear();  // made again for this round's placement
    for (size_t n = 0; n < nodes; ++n) {
      for (size_t b = 0; b < backends; ++b) {
        if (b == current[n] || !search.takes(n, b)) continue;
        if (by_backend.empty()) {
          for (size_t c = 0; c < backends; ++c) by_backend.push_back(moves_for(search, current, c));
        }
        BackendMoves& known = by_backend[b];
        const size_t from = current[n];
        std::vector<std::vector<uint32_t>> moves;
        moves.push_back({static_cast<uint32_t>(n)});
        const size_t run = known.runs.of[n], region = known.regions.of[n];
        if (!known.run_tried[run]) moves.push_back(known.runs.members[run]);
        if (!known.region_tried[region]) moves.push_back(known.regions.members[region]);
        known.run_tried[run] = known.region_tried[region] = 1;
        for (size_t i = 0; i < moves.size(); ++i) {
          if (i > 0 && moves[i] == moves[i - 1]) continue;
          const bool fits = bound == 0 || best_groups <= bound;  // else fewer partitions may cost more
          if (fits && search.optimistic_delta(current, group_of, group_size, moves[i], b, has_groups[b], moving) >= 0)
            continue;
          std::vector<size_t> trial = current;
          for (uint32_t m : moves[i]) trial[m] = b;
          std::vector<size_t> trial_groups;
          const double cost = search.total(trial, &trial_groups);
          if (better(count(trial_groups), cost, best_groups, best.estimated_us)) {
            best_groups = count(trial_groups);
            current = std::move(trial);
            group_of = std::move(trial_groups);
            count_members();
            best.estimated_us = cost;
            improved = true;
            by_backend.clear();  // the runs and regions changed
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
