// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "plugrt/dtype.h"
#include "plugrt/placement/cost_model.h"
#include "plugrt/placement/partitioner.h"
#include "plugrt/schema/graph_ir_generated.h"
#include "value_size.h"

namespace plugrt::placement {

namespace {

using Clock = std::chrono::steady_clock;
using flatbuffers::uoffset_t;

/// 64-byte aligned bytes for one tensor, as backends expect of the host's arena.
struct AlignedBuffer {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data;
  explicit AlignedBuffer(size_t bytes) : data(std::aligned_alloc(64, std::max<size_t>(64, (bytes + 63) / 64 * 64))) {}
};

/// The tensors of one single-node partition: buffers, shapes and DLPack views.
class PartitionTensors {
 public:
  PartitionTensors(const ir::Graph& graph, const Partition& partition) {
    const size_t count = partition.inputs.size() + partition.outputs.size();
    shapes_.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      const bool input = i < partition.inputs.size();
      const int32_t v = input ? partition.inputs[i] : partition.outputs[i - partition.inputs.size()];
      const ir::Value& value = *graph.values()->Get(static_cast<uoffset_t>(v));
      const auto dtype = static_cast<DType>(value.dtype());
      const size_t bytes = value_bytes(value);
      buffers_.emplace_back(bytes);
      if (buffers_.back().data == nullptr) {
        ok_ = false;
        return;
      }
      fill(buffers_.back().data.get(), dtype, bytes, input);
      shapes_.emplace_back(value.shape() != nullptr ? std::vector<int64_t>(value.shape()->begin(), value.shape()->end())
                                                    : std::vector<int64_t>());
      tensors_.push_back(DLTensor{buffers_.back().data.get(),
                                  {kDLCPU, 0},
                                  static_cast<int32_t>(shapes_.back().size()),
                                  to_dlpack(dtype),
                                  shapes_.back().data(),
                                  nullptr,
                                  0});
    }
    for (size_t i = 0; i < tensors_.size(); ++i)
      (i < partition.inputs.size() ? inputs_ : outputs_).push_back(&tensors_[i]);
  }
  bool ok() const { return ok_; }
  Span<const DLTensor* const> inputs() const { return inputs_; }
  Span<const DLTensor* const> outputs() const { return outputs_; }

 private:
  /// Floats in [-1, 1); integers and booleans zero, which is in range as an index too.
  static void fill(void* data, DType dtype, size_t bytes, bool input) {
    std::memset(data, 0, bytes);
    if (!input || dtype != DType::kFloat32) return;
    auto* floats = static_cast<float*>(data);
    for (size_t i = 0; i < bytes / sizeof(float); ++i) floats[i] = static_cast<float>(i % 17) / 8.5f - 1.0f;
  }
  bool ok_ = true;
  std::vector<AlignedBuffer> buffers_;
  std::vector<std::vector<int64_t>> shapes_;
  std::vector<DLTensor> tensors_;
  std::vector<const DLTensor*> inputs_, outputs_;
};

/// The node alone as a partition: its non-constant inputs in, its outputs out.
Partition single_node(const ir::Graph& graph, uint32_t n) {
  Partition partition;
  partition.nodes = {n};
  const ir::Node& node = *graph.nodes()->Get(n);
  if (node.inputs() != nullptr) {
    for (int32_t v : *node.inputs()) {
      if (v < 0 || graph.values()->Get(static_cast<uoffset_t>(v))->data() != nullptr) continue;
      if (std::find(partition.inputs.begin(), partition.inputs.end(), v) == partition.inputs.end()) {
        partition.inputs.push_back(v);
      }
    }
  }
  if (node.outputs() != nullptr) {
    for (int32_t v : *node.outputs()) {
      if (v >= 0) partition.outputs.push_back(v);
    }
  }
  return partition;
}

/// A backend that measured slower before in this tune() call and whose first timed run on
/// a node takes this many times the fastest figure of another backend there is clearly
/// slower: that run is its figure.
constexpr double kClearlySlower = 4;
constexpr double kNoCut = std::numeric_limits<double>::infinity();

/// Median microseconds of `runs` timed executions after one untimed one (which warms
/// caches and thread pools); the first timed one alone when it took over `cut_us`. Past
/// `deadline` no further run starts: a slow node costs at most two runs beyond the budget.
Result<double> measure(const RegisteredBackend& backend, const std::vector<uint8_t>& blob,
                       const PartitionTensors& tensors, Span<const int64_t> symbols, const TuneOptions& options,
                       double cut_us, Clock::time_point deadline) {
  InitOptions init;
  init.num_threads = options.threads;
  init.blob = blob.data();
  init.blob_size = blob.size();
  PLUGRT_ASSIGN_OR_RETURN(DelegateHandle handle, backend.init(init));
  PLUGRT_RETURN_IF_ERROR(handle.execute(tensors.inputs(), tensors.outputs(), 0, symbols));
  std::vector<double> times;
  for (int r = 0; r < std::max(1, options.runs) && (times.empty() || Clock::now() < deadline); ++r) {
    const Clock::time_point start = Clock::now();
    PLUGRT_RETURN_IF_ERROR(handle.execute(tensors.inputs(), tensors.outputs(), 0, symbols));
    times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (times.front() > cut_us) return times.front();
  }
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
  return times[times.size() / 2];
}

/// Lowers node `n` alone on `backend` and measures it (measure()).
Result<double> measure_node(const ir::Graph& graph, const RegisteredBackend& backend, uint32_t n,
                            const TuneOptions& options, double cut_us, Clock::time_point deadline) {
  const Partition partition = single_node(graph, n);
  const std::vector<uint8_t> subgraph = extract_subgraph(graph, partition);
  PLUGRT_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, backend.preprocess(subgraph));
  PartitionTensors tensors(graph, partition);
  if (!tensors.ok()) return Status(Error::kMemoryAllocationFailed, "no memory for the node's tensors");
  // Dimensions that vary run at their upper bounds, which the tensors' shapes hold.
  std::vector<int64_t> symbols;
  if (const ir::Graph& lowered = *ir::GetGraph(subgraph.data()); lowered.symbols() != nullptr) {
    for (const ir::Symbol* symbol : *lowered.symbols()) symbols.push_back(symbol->max());
  }
  return measure(backend, blob, tensors, symbols, options, cut_us, deadline);
}

/// How much slower than the fastest each backend has measured so far in one tune() call
/// (a geometric mean), so that each node measures the backends likely to be fast first.
class RunningSlowness {
 public:
  explicit RunningSlowness(size_t backends) : log_sum_(backends, 0), count_(backends, 0) {}
  double of(size_t backend) const {
    return count_[backend] > 0 ? log_sum_[backend] / static_cast<double>(count_[backend]) : 0;
  }
  /// One node's figures, by backend (-1: none).
  void add(const std::vector<double>& figures) {
    double fastest = std::numeric_limits<double>::infinity();
    for (double us : figures) fastest = us >= 0 ? std::min(fastest, us) : fastest;
    if (!(fastest > 0) || std::isinf(fastest)) return;
    for (size_t b = 0; b < figures.size(); ++b) {
      if (figures[b] < 0) continue;
      log_sum_[b] += std::log(figures[b] / fastest);
      ++count_[b];
    }
  }

 private:
  std::vector<double> log_sum_;
  std::vector<size_t> count_;
};

/// Adds one node's figures (by backend, -1: none) to the count of nodes of its op type on
/// which each backend was clearly slower than the fastest.
void count_clearly_slower(const std::vector<double>& figures, const std::string& op,
                          std::map<std::pair<size_t, std::string>, int>& counts) {
  double fastest = std::numeric_limits<double>::infinity();
  for (double us : figures) fastest = us >= 0 ? std::min(fastest, us) : fastest;
  for (size_t b = 0; b < figures.size(); ++b) {
    if (figures[b] > kClearlySlower * fastest) ++counts[{b, op}];
  }
}

}  // namespace

TuneReport tune(Span<const uint8_t> graph_bytes, const std::vector<TuneBackend>& backends, CostProfile& profile,
                const TuneOptions& options) {
  const ir::Graph& graph = *ir::GetGraph(graph_bytes.data());
  const size_t num_nodes = graph.nodes() != nullptr ? graph.nodes()->size() : 0;
  // The work: one node per (signature, backend) pair the profile lacks.
  struct Job {
    uint32_t node;
    size_t backend;
    std::string signature;
  };
  std::vector<Job> jobs;
  TuneReport report;
  // The first node each backend takes with each signature: the backends may take different nodes.
  std::vector<std::string> signatures(num_nodes);
  for (uint32_t n = 0; n < num_nodes; ++n) signatures[n] = op_signature(graph, n);
  for (size_t b = 0; b < backends.size(); ++b) {
    const std::string build = backend_build(backends[b].backend);
    std::set<std::string> seen;
    for (uint32_t n = 0; n < num_nodes && n < backends[b].taken.size(); ++n) {
      if (!backends[b].taken[n] || !seen.insert(signatures[n]).second) continue;
      if (profile.find(build, signatures[n])) {
        ++report.known;
      } else {
        jobs.push_back({n, b, signatures[n]});
      }
    }
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const Job& a, const Job& b) { return a.node != b.node ? a.node < b.node : a.backend < b.backend; });

  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(std::min(options.budget_seconds, 1e7)));
  RunningSlowness slowness(backends.size());
  std::map<std::pair<size_t, std::string>, int> clearly_slower;  // (backend, op type) -> nodes
  for (size_t first = 0, last = 0; first < jobs.size() && report.skipped == 0; first = last) {
    // One node's jobs, the backends measured fastest so far first, so that a clearly
    // slower one runs once.
    while (last < jobs.size() && jobs[last].node == jobs[first].node) ++last;
    std::stable_sort(jobs.begin() + static_cast<std::ptrdiff_t>(first),
                     jobs.begin() + static_cast<std::ptrdiff_t>(last),
                     [&](const Job& a, const Job& b) { return slowness.of(a.backend) < slowness.of(b.backend); });
    std::vector<double> figures(backends.size(), -1);
    for (size_t b = 0; b < backends.size(); ++b) {
      if (std::optional<double> known = profile.find(backend_build(backends[b].backend), jobs[first].signature)) {
        figures[b] = *known;
      }
    }
    for (size_t j = first; j < last; ++j) {
      if (std::chrono::duration<double>(Clock::now() - start).count() > options.budget_seconds) {
        report.skipped = jobs.size() - j;
        if (options.progress != nullptr) {
          *options.progress << "tune: time budget of " << options.budget_seconds << " s spent; " << report.skipped
                            << " measurements left to the estimate\n";
        }
        break;
      }
      const Job& job = jobs[j];
      const std::string op = graph.nodes()->Get(job.node)->op_type()->str();
      if (options.settle_clearly_slower && clearly_slower[{job.backend, op}] >= 2) {
        ++report.settled;
        continue;
      }
      double fastest = std::numeric_limits<double>::infinity();
      for (double us : figures) fastest = us >= 0 ? std::min(fastest, us) : fastest;
      const RegisteredBackend& backend = backends[job.backend].backend;
      // Only a backend already measured slower is cut short: on the first nodes every
      // backend gets its full median, whatever noise its first run met.
      const double cut = slowness.of(job.backend) > 0 ? kClearlySlower * fastest : kNoCut;
      const Result<double> us = measure_node(graph, backend, job.node, options, cut, deadline);
      if (us.is_ok()) {
        figures[job.backend] = *us;
        profile.set(backend_build(backend), job.signature, *us);
        ++report.measured;
        report.figures.push_back({job.node, op, backend.name(), *us});
      } else {
        ++report.failed;
      }
      if (options.progress != nullptr) {
        *options.progress << "tune: [" << (j + 1) << "/" << jobs.size() << "] " << op << " (node " << job.node
                          << ") on " << backend.name() << ": ";
        if (us.is_ok()) {
          *options.progress << *us << " us\n";
        } else {
          *options.progress << "not measured: " << us.status().message() << "\n";
        }
      }
    }
    slowness.add(figures);
    count_clearly_slower(figures, graph.nodes()->Get(jobs[first].node)->op_type()->str(), clearly_slower);
  }
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

}  // namespace plugrt::placement
