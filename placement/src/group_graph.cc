// SPDX-License-Identifier: Apache-2.0
#include "group_graph.h"

#include <algorithm>
#include <utility>

namespace plugrt::placement {

namespace {

void drop(std::vector<size_t>& list, size_t g) { list.erase(std::remove(list.begin(), list.end(), g), list.end()); }

}  // namespace

size_t GroupGraph::add(size_t backend) {
  backend_.push_back(backend);
  level_.push_back(0);
  successors_.emplace_back();
  predecessors_.emplace_back();
  seen_.push_back(0);
  return backend_.size() - 1;
}

void GroupGraph::add_edge(size_t from, size_t to) {
  if (from == to) return;
  link(from, to);
  if (level_[to] <= level_[from]) {
    level_[to] = level_[from] + 1;
    raise_after(to);
  }
}

void GroupGraph::link(size_t from, size_t to) {
  if (std::find(successors_[from].begin(), successors_[from].end(), to) != successors_[from].end()) return;
  successors_[from].push_back(to);
  predecessors_[to].push_back(from);
}

/// Restores "every edge leads to a higher level" after g's level rose.
void GroupGraph::raise_after(size_t g) {
  stack_.assign(1, g);
  while (!stack_.empty()) {
    const size_t at = stack_.back();
    stack_.pop_back();
    for (size_t s : successors_[at]) {
      if (level_[s] > level_[at]) continue;
      level_[s] = level_[at] + 1;
      stack_.push_back(s);
    }
  }
}

bool GroupGraph::reaches(size_t from, size_t to) const {
  if (from == to) return true;
  if (level_[from] >= level_[to]) return false;  // a path only climbs
  if (++epoch_ == 0) {                           // wrapped: forget every old mark
    std::fill(seen_.begin(), seen_.end(), 0);
    epoch_ = 1;
  }
  stack_.assign(1, from);
  seen_[from] = epoch_;
  while (!stack_.empty()) {
    const size_t at = stack_.back();
    stack_.pop_back();
    for (size_t s : successors_[at]) {
      if (s == to) return true;
      if (seen_[s] == epoch_ || level_[s] >= level_[to]) continue;
      seen_[s] = epoch_;
      stack_.push_back(s);
    }
  }
  return false;
}

bool GroupGraph::closes_cycle(size_t g, const std::vector<size_t>& producers) const {
  for (size_t p : producers) {
    if (p != g && reaches(g, p)) return true;
  }
  return false;
}

bool GroupGraph::through_third(size_t from, size_t to) const {
  for (size_t s : successors_[from]) {
    if (s != to && reaches(s, to)) return true;
  }
  return false;
}

bool GroupGraph::can_merge(size_t a, size_t b) const {
  if (reaches(a, b)) return !through_third(a, b);
  if (reaches(b, a)) return !through_third(b, a);
  return true;
}

std::vector<char> GroupGraph::joined_through_third(size_t a) const {
  std::vector<char> joined(size(), 0);
  for (const auto* edges : {&successors_, &predecessors_}) {
    // Everything reached from a's neighbours on this side by at least one more edge.
    stack_ = (*edges)[a];
    while (!stack_.empty()) {
      const size_t at = stack_.back();
      stack_.pop_back();
      for (size_t next : (*edges)[at]) {
        if (joined[next]) continue;
        joined[next] = 1;
        stack_.push_back(next);
      }
    }
  }
  return joined;
}

void GroupGraph::merge(size_t a, size_t b) {
  for (size_t s : successors_[b]) drop(predecessors_[s], b);
  for (size_t p : predecessors_[b]) drop(successors_[p], b);
  for (size_t s : std::exchange(successors_[b], {})) {
    if (s != a) link(a, s);
  }
  for (size_t p : std::exchange(predecessors_[b], {})) {
    if (p != a) link(p, a);
  }
  drop(successors_[a], b);
  drop(predecessors_[a], b);
  // b's predecessors sat below b, its successors above: lifting a to b's level keeps the
  // first true; the rise after a restores the second.
  level_[a] = std::max(level_[a], level_[b]);
  raise_after(a);
}

}  // namespace plugrt::placement
