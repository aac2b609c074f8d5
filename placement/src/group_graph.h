// SPDX-License-Identifier: Apache-2.0
// The graph between the groups that group_nodes() forms: each group's backend, its direct
// edges both ways, and a level per group (every edge leads to a higher level), which
// bounds each reachability search to the groups between two levels. No closure matrix,
// so a graph cut into tens of thousands of groups costs memory linear in its edges.
#ifndef PLUGRT_PLACEMENT_SRC_GROUP_GRAPH_H_
#define PLUGRT_PLACEMENT_SRC_GROUP_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace plugrt::placement {

class GroupGraph {
 public:
  size_t size() const { return backend_.size(); }
  size_t backend(size_t g) const { return backend_[g]; }
  const std::vector<size_t>& successors(size_t g) const { return successors_[g]; }
  const std::vector<size_t>& predecessors(size_t g) const { return predecessors_[g]; }

  size_t add(size_t backend);
  /// A direct edge; raises the levels after `to` as needed.
  void add_edge(size_t from, size_t to);

  /// Whether a path leads from `from` to `to` (a group reaches itself).
  bool reaches(size_t from, size_t to) const;
  /// Whether a node of `g` reading from `producers` (groups) closes a cycle: a path leads
  /// from g to one of the others.
  bool closes_cycle(size_t g, const std::vector<size_t>& producers) const;
  /// Whether `a` and `b` may become one group: no path joins them through a third. When
  /// neither reaches the other, none can; when one does, a third lies on a path exactly
  /// when a direct successor other than the other group reaches it.
  bool can_merge(size_t a, size_t b) const;
  /// Per group, whether a path through a third joins it to `a` (either way): the groups
  /// can_merge(a, ·) refuses, found in one pass over the graph instead of one search each.
  std::vector<char> joined_through_third(size_t a) const;
  /// Folds `b` into `a` (can_merge(a, b) must hold): a takes b's edges; b is left empty.
  void merge(size_t a, size_t b);

 private:
  bool through_third(size_t from, size_t to) const;
  void link(size_t from, size_t to);
  void raise_after(size_t g);

  std::vector<size_t> backend_, level_;
  std::vector<std::vector<size_t>> successors_, predecessors_;
  // A search's marks: a group is seen when its mark is the search's epoch.
  mutable std::vector<uint32_t> seen_;
  mutable uint32_t epoch_ = 0;
  mutable std::vector<size_t> stack_;
};

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_SRC_GROUP_GRAPH_H_
