// SPDX-License-Identifier: Apache-2.0
#include "src/concat_in_place.h"

#include <algorithm>
#include <unordered_set>

namespace plugrt::onednn {

namespace {

using dims_t = dnnl::memory::dims;

/// A concatenation that could share a buffer: its output and inputs.
struct Candidate {
  int32_t output = -1;
  std::vector<int32_t> inputs;
};

constexpr int64_t kBlock = 16;

bool fits(const blob::Blob& blob, const blob::Op& op, const std::vector<dims_t>& dims,
          const std::function<bool(int32_t)>& written) {
  if (op.kind() != blob::OpKind::Concat || op.axis() != 1 || op.inputs() == nullptr || op.outputs() == nullptr ||
      op.outputs()->size() != 1 || op.inputs()->size() == 0) {
    return false;
  }
  const auto usable = [&](int32_t t) {
    if (t < 0 || static_cast<size_t>(t) >= dims.size()) return false;
    const blob::Tensor& tensor = *blob.tensors()->Get(static_cast<flatbuffers::uoffset_t>(t));
    const dims_t& d = dims[static_cast<size_t>(t)];
    return tensor.dtype() == blob::DataType::F32 && tensor.external_output() < 0 && d.size() == 4 && d[0] == 1 &&
           d[1] > 0 && d[1] % kBlock == 0;
  };
  const int32_t y = op.outputs()->Get(0);
  if (!usable(y)) return false;
  const dims_t& ys = dims[static_cast<size_t>(y)];
  std::unordered_set<int32_t> seen;
  int64_t channels = 0;
  for (int32_t x : *op.inputs()) {
    if (!usable(x) || !written(x) || !seen.insert(x).second) return false;
    const dims_t& xs = dims[static_cast<size_t>(x)];
    // Producers write into the buffer before the concat is built: its shapes must add up.
    if (xs[2] != ys[2] || xs[3] != ys[3]) return false;
    channels += xs[1];
  }
  return channels == ys[1];
}

/// Keeps the groups that two or more concatenations read. A lone concatenation (a
/// SqueezeNet or Inception module) saves only its one copy, and the blocked layout it
/// needs may cost its neighbours more than that.
void drop_lone_concats(ConcatGroups* groups) {
  std::vector<size_t> readers(groups->groups.size(), 0);
  for (const auto& [output, group] : groups->prefixes) ++readers[group];
  const auto lone = [&](size_t group) { return readers[group] < 2; };
  for (auto it = groups->members.begin(); it != groups->members.end();) {
    it = lone(it->second.group) ? groups->members.erase(it) : std::next(it);
  }
  for (auto it = groups->prefixes.begin(); it != groups->prefixes.end();) {
    it = lone(it->second) ? groups->prefixes.erase(it) : std::next(it);
  }
}

}  // namespace

dnnl::memory::desc blocked16(const dims_t& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nChw16c);
}

ConcatGroups find_concat_groups(const blob::Blob& blob, const std::vector<dims_t>& dims,
                                const std::function<bool(int32_t)>& written) {
  std::vector<Candidate> candidates;
  for (const blob::Op* op : *blob.ops()) {
    if (!fits(blob, *op, dims, written)) continue;
    candidates.push_back({op->outputs()->Get(0), std::vector<int32_t>(op->inputs()->begin(), op->inputs()->end())});
  }
  // The longest list first: it decides the buffer, and shorter lists join it as prefixes.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.inputs.size() > b.inputs.size(); });
  ConcatGroups groups;
  for (const Candidate& candidate : candidates) {
    const auto first = groups.members.find(candidate.inputs[0]);
    if (first == groups.members.end()) {
      const bool free = std::none_of(candidate.inputs.begin(), candidate.inputs.end(),
                                     [&](int32_t x) { return groups.members.count(x) > 0; });
      if (!free) continue;
      const size_t group = groups.groups.size();
      groups.groups.push_back(dims[static_cast<size_t>(candidate.output)]);
      int64_t channel = 0;
      for (int32_t x : candidate.inputs) {
        groups.members[x] = {group, channel};
        channel += dims[static_cast<size_t>(x)][1];
      }
      groups.prefixes[candidate.output] = group;
      continue;
    }
    // A prefix of a group's list: each input where the group has it, in order from 0.
    const size_t group = first->second.group;
    int64_t channel = 0;
    bool prefix = true;
    for (int32_t x : candidate.inputs) {
      const auto member = groups.members.find(x);
      prefix = prefix && member != groups.members.end() && member->second.group == group &&
               member->second.channel == channel;
      channel += dims[static_cast<size_t>(x)][1];
    }
    if (prefix) groups.prefixes[candidate.output] = group;
  }
  drop_lone_concats(&groups);
  return groups;
}

}  // namespace plugrt::onednn
