// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/compile.h"

#include <algorithm>

#include "node_costs.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/common/graph_ir.h"
#include "plugrt/graph_builder.h"
#include "plugrt/graph_constants.h"
#include "plugrt/placement/cost_model.h"
#include "plugrt/placement/partitioner.h"
#include "plugrt/placement/passes.h"
#include "plugrt/placement/placer.h"
#include "plugrt/program_builder.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::placement {

namespace {

using flatbuffers::uoffset_t;

std::string node_label(const ir::Node& node, int opset) {
  std::string label = "node '" + (node.name() != nullptr ? node.name()->str() : std::string()) + "' (" +
                      node.op_type()->str() + ", opset " + std::to_string(opset) + ")";
  return label;
}

/// The chosen backends, resolved, with "portable" last.
struct ChosenBackends {
  std::vector<std::string> names;
  std::vector<RegisteredBackend> backends;  // same order
  size_t portable = 0;                      // index of "portable"
};

/// Equal costs go to the earlier backend. In the default order (by name) the backends the
/// profile has figures for come first, so that between backends nobody measured for a node
/// one measured elsewhere on this machine is preferred to one never measured.
void prefer_measured(const CostProfile& profile, ChosenBackends& chosen) {
  std::vector<size_t> order(chosen.portable);
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(),
                        [&](size_t i) { return profile.has_build(backend_build(chosen.backends[i])); });
  ChosenBackends sorted;
  for (size_t i : order) {
    sorted.names.push_back(chosen.names[i]);
    sorted.backends.push_back(chosen.backends[i]);
  }
  sorted.names.push_back(chosen.names.back());
  sorted.backends.push_back(chosen.backends.back());
  sorted.portable = chosen.portable;
  chosen = std::move(sorted);
}

Result<ChosenBackends> choose_backends(Registry& registry, const CompileOptions& options) {
  ChosenBackends chosen;
  std::vector<std::string> names = options.backends.empty() ? default_backend_order(registry) : options.backends;
  names.erase(std::remove(names.begin(), names.end(), std::string(kPortableBackendName)), names.end());
  names.push_back(kPortableBackendName);
  for (size_t i = 0; i < names.size(); ++i) {
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i)) {
      return Status(Error::kInvalidArgument, "backend '" + names[i] + "' is listed twice");
    }
    Result<RegisteredBackend> backend = [&]() -> Result<RegisteredBackend> {
      Result<RegisteredBackend> found = registry.find_backend(names[i]);
      if (!found.is_ok() && names[i] == kPortableBackendName) return builtin_portable_backend();
      return found;
    }();
    if (!backend.is_ok()) return backend.status();
    if (!backend->has_aot()) {
      return Status(Error::kNotSupported, "backend '" + names[i] + "' (" + backend->plugin().origin +
                                              ") has no ahead-of-time entries, so it cannot compile");
    }
    chosen.names.push_back(names[i]);
    chosen.backends.push_back(*backend);
  }
  chosen.portable = chosen.names.size() - 1;
  if (options.compile_specs != nullptr) PLUGRT_RETURN_IF_ERROR(options.compile_specs->check_backends(chosen.names));
  if (options.backends.empty() && options.profile != nullptr) prefer_measured(*options.profile, chosen);
  return chosen;
}

/// The compile specs options.compile_specs addresses to `backend`, as the ABI passes them.
std::vector<plugrt_option> specs_for(const CompileOptions& options, std::string_view backend) {
  return options.compile_specs == nullptr ? std::vector<plugrt_option>() : options.compile_specs->for_backend(backend);
}

/// The same, as the program stores them with a delegate.
std::vector<CompileSpec> stored_specs(const CompileOptions& options, std::string_view backend) {
  std::vector<CompileSpec> stored;
  for (const plugrt_option& spec : specs_for(options, backend)) {
    const auto* value = static_cast<const uint8_t*>(spec.value);
    stored.push_back(
        CompileSpec{std::string(spec.key.data, spec.key.size), std::vector<uint8_t>(value, value + spec.value_size)});
  }
  return stored;
}

/// Nodes that two or more backends besides the fallback take: where costs choose a backend.
std::vector<bool> contested_nodes(const std::vector<std::vector<bool>>& taken, size_t portable, size_t num_nodes) {
  std::vector<bool> contested(num_nodes, false);
  for (size_t n = 0; n < num_nodes; ++n) {
    size_t takers = 0;
    for (size_t b = 0; b < taken.size(); ++b) takers += b != portable && taken[b][n] ? 1 : 0;
    contested[n] = takers >= 2;
  }
  return contested;
}

/// Measures what the profile lacks: every node's figures with `tune`, else those of
/// contested nodes within options.measure_seconds. Nothing without a profile.
TuneReport measure_missing(Span<const uint8_t> graph, const std::vector<TuneBackend>& backends,
                           const std::vector<bool>& contested, const CompileOptions& options) {
  if (options.profile == nullptr) return {};
  if (options.tune) return tune(graph, backends, *options.profile, options.tune_options);
  if (!(options.measure_seconds > 0)) return {};
  std::vector<TuneBackend> masked = backends;
  for (TuneBackend& backend : masked) {
    for (size_t n = 0; n < backend.taken.size(); ++n) backend.taken[n] = backend.taken[n] && contested[n];
  }
  TuneOptions measure = options.tune_options;
  measure.runs = std::min(measure.runs, 3);
  measure.budget_seconds = options.measure_seconds;
  measure.settle_clearly_slower = true;
  return tune(graph, masked, *options.profile, measure);
}

}  // namespace

std::vector<std::string> default_backend_order(Registry& registry) {
  std::vector<std::string> order;
  for (const std::string& name : registry.backend_names()) {  // sorted
    if (name == kPortableBackendName) continue;
    Result<RegisteredBackend> backend = registry.find_backend(name);  // loads a plugin's candidate
    if (backend.is_ok() && backend->has_aot()) order.push_back(name);
  }
  order.push_back(kPortableBackendName);
  return order;
}

Result<CompiledModel> compile_graph(Span<const uint8_t> imported_bytes, Registry& registry,
                                    const CompileOptions& options) {
  // The portable backend's view checks the graph and says, per node, why it cannot run it.
  PLUGRT_ASSIGN_OR_RETURN(std::vector<std::string> portable_reasons, portable_node_support(imported_bytes));
  CompiledModel result;
  result.summary.num_nodes_imported = portable_reasons.size();
  std::vector<uint8_t> simplified;
  Span<const uint8_t> graph_bytes = imported_bytes;
  if (options.passes) {
    PLUGRT_ASSIGN_OR_RETURN(PassResult passes, run_graph_passes(imported_bytes));
    result.summary.pass_changes = passes.changes;
    simplified = std::move(passes.graph);
    graph_bytes = simplified;
    PLUGRT_ASSIGN_OR_RETURN(portable_reasons, portable_node_support(graph_bytes));
  }
  const ir::Graph& graph = *ir::GetGraph(graph_bytes.data());
  const size_t num_nodes = portable_reasons.size();
  PLUGRT_ASSIGN_OR_RETURN(ChosenBackends chosen, choose_backends(registry, options));

  // What each backend takes, and what each node would cost there.
  const EstimateParameters estimate;
  PlacementProblem problem;
  problem.graph = node_graph(graph);
  problem.node_cost.assign(num_nodes, std::vector<double>(chosen.backends.size(), kNotTaken));
  problem.fallback.assign(chosen.backends.size(), false);
  problem.fallback[chosen.portable] = true;
  problem.partition_us = estimate.partition_us;
  problem.crossing_us = estimate.crossing_us;
  problem.crossing_us_per_byte = 1.0 / (estimate.crossing_gbytes_per_s * 1e3);
  std::vector<std::vector<bool>> taken(chosen.backends.size());
  std::vector<TuneBackend> to_tune;
  for (size_t b = 0; b < chosen.backends.size(); ++b) {
    if (b == chosen.portable) {
      taken[b].resize(num_nodes);
      for (size_t n = 0; n < num_nodes; ++n) taken[b][n] = portable_reasons[n].empty();
      continue;
    }
    const std::vector<plugrt_option> specs = specs_for(options, chosen.names[b]);
    Result<std::vector<bool>> answer =
        chosen.backends[b].partition(graph_bytes, num_nodes, Span<const plugrt_option>(specs.data(), specs.size()));
    if (!answer.is_ok()) return answer.status();
    taken[b] = std::move(answer).value();
    to_tune.push_back({chosen.backends[b], taken[b]});  // the fallback is never chosen on cost
  }
  const std::vector<bool> contested = contested_nodes(taken, chosen.portable, num_nodes);
  result.summary.tune = measure_missing(graph_bytes, to_tune, contested, options);
  std::vector<std::string> builds;
  for (const RegisteredBackend& backend : chosen.backends) builds.push_back(backend_build(backend));
  std::vector<std::vector<double>> measured(num_nodes, std::vector<double>(chosen.backends.size(), -1));
  std::vector<std::vector<double>> estimated(num_nodes, std::vector<double>(chosen.backends.size(), kNotTaken));
  result.summary.measured_nodes =
      read_costs(graph, taken, chosen.portable, builds, options.profile, problem, &measured, &estimated);
  charge_unmeasured(taken, chosen.portable, measured, estimated, problem);
  std::vector<bool> taken_by_other(num_nodes, false);
  for (size_t n = 0; n < num_nodes; ++n) {
    for (size_t b = 0; b < taken.size(); ++b)
      taken_by_other[n] = taken_by_other[n] || (b != chosen.portable && taken[b][n]);
  }
  result.summary.backends = chosen.names;
  result.summary.num_nodes = num_nodes;
  for (size_t n = 0; n < num_nodes; ++n) {
    if (taken_by_other[n]) continue;
    const ir::Node& node = *graph.nodes()->Get(static_cast<uoffset_t>(n));
    if (!portable_reasons[n].empty()) {
      return Status(Error::kNotSupported,
                    node_label(node, graph.opset()) + ": no chosen backend takes it, and " + portable_reasons[n]);
    }
    if (chosen.backends.size() > 1) ++result.summary.untaken_ops[node.op_type()->str()];
  }

  std::vector<size_t> node_backend(num_nodes, chosen.portable);
  if (options.placement == PlacementRule::kFirstTaker) {
    result.summary.placement = "first";
    for (size_t n = 0; n < num_nodes; ++n) {
      for (size_t b = 0; b < chosen.backends.size(); ++b) {
        if (b != chosen.portable && problem.node_cost[n][b] != kNotTaken) {
          node_backend[n] = b;
          break;
        }
      }
    }
    result.summary.estimated_us = placement_cost(problem, node_backend);
  } else {
    result.summary.placement = "cost";
    if (result.summary.measured_nodes > 0) {
      // Measured figures choose between backends, within the partitions the estimate
      // needs (placer.h, max_partitions): single-node measurements do not justify splits.
      PlacementProblem by_estimate = problem;
      by_estimate.node_cost = estimated;
      size_t groups = 0;
      group_nodes(problem.graph.producers(), place(by_estimate).node_backend, &groups);
      problem.max_partitions = groups;
    }
    Placement placed = place(problem);
    node_backend = std::move(placed.node_backend);
    result.summary.estimated_us = placed.estimated_us;
  }

  std::vector<Partition> partitions = cut_partitions(graph, node_backend);
  // The method: graph inputs, graph outputs and partition boundaries live in its arena.
  ProgramBuilder program;
  program.set_producer(options.producer);
  MethodBuilder& method = program.add_method("forward");
  if (graph.symbols() != nullptr) {
    for (const ir::Symbol* symbol : *graph.symbols())
      method.add_symbol(symbol->name()->str(), symbol->min(), symbol->max());
  }
  std::vector<int64_t> method_value(graph.values()->size(), -1);
  auto value_of = [&](int32_t v) -> uint32_t {
    if (method_value[static_cast<size_t>(v)] < 0) {
      const ir::Value& source = *graph.values()->Get(static_cast<uoffset_t>(v));
      std::string name = source.name() != nullptr ? source.name()->str() : std::string();
      std::vector<int64_t> shape;
      if (source.shape() != nullptr) shape.assign(source.shape()->begin(), source.shape()->end());
      method_value[static_cast<size_t>(v)] =
          source.dims() != nullptr
              ? method.add_dynamic_value(std::move(name), static_cast<DType>(source.dtype()), read_value_dims(source))
              : method.add_value(std::move(name), static_cast<DType>(source.dtype()), std::move(shape));
    }
    return static_cast<uint32_t>(method_value[static_cast<size_t>(v)]);
  };
  for (int32_t v : *graph.inputs()) method.add_input(value_of(v));

  // A graph output that no node writes (a constant, or an input passed through) gets an
  // Identity partition of its own, so that every output is written by an instruction.
  std::vector<bool> written(graph.values()->size(), false);
  for (const Partition& partition : partitions) {
    for (int32_t v : partition.outputs) written[static_cast<size_t>(v)] = true;
  }
  for (int32_t v : *graph.outputs()) {
    if (written[static_cast<size_t>(v)] || !graph.values()->Get(static_cast<uoffset_t>(v))->data()) continue;
    const ir::Value& source = *graph.values()->Get(static_cast<uoffset_t>(v));
    GraphBuilder copy(graph.opset());
    std::vector<int64_t> shape(source.shape()->begin(), source.shape()->end());
    ValueId c = copy.add_constant("constant", static_cast<DType>(source.dtype()), shape,
                                  std::vector<uint8_t>(source.data()->begin(), source.data()->end()));
    ValueId out = copy.add_value("output", static_cast<DType>(source.dtype()), shape);
    copy.add_node("Identity", "constant_output", {c}, {out});
    copy.add_output(out);
    const std::vector<uint8_t> blob = copy.finish();
    const std::string name = "portable:" + std::to_string(result.summary.partitions.size());
    method.add_instruction(method.add_delegate(name, kPortableBackendName, blob), {}, {value_of(v)});
    PartitionSummary summary;
    summary.name = name;
    summary.backend = kPortableBackendName;
    summary.op_counts["Identity"] = 1;
    summary.num_nodes = 1;
    summary.blob_size = blob.size();
    result.summary.partitions.push_back(std::move(summary));
    written[static_cast<size_t>(v)] = true;
  }

  for (Partition& partition : partitions) {
    const std::vector<uint8_t> subgraph = extract_subgraph(graph, partition);
    std::optional<FoundBlob> found;
    PreprocessedBlob lowered;
    // A backend may decline in preprocess a partition it took node by node (a plugin
    // before ABI 1.6 declines one whose inputs do not give its symbols): that partition
    // runs on the portable backend.
    for (;;) {
      const RegisteredBackend& backend = chosen.backends[partition.backend];
      const std::string& backend_name = chosen.names[partition.backend];
      if (options.blobs != nullptr) found = options.blobs->find(backend, backend_name, subgraph);
      if (found) break;
      // With the fallback kept, the backend may name its weights there instead of copying them.
      const bool offer = options.fallback && partition.backend != chosen.portable && graph_constants(subgraph).is_ok();
      const std::vector<plugrt_option> specs = specs_for(options, backend_name);
      Result<PreprocessedBlob> blob =
          backend.preprocess(subgraph, Span<const plugrt_option>(specs.data(), specs.size()),
                             offer ? PLUGRT_PREPROCESS_CONSTANTS_BY_NAME : 0);
      if (!blob.is_ok() && blob.status().code() == Error::kNotSupported && partition.backend != chosen.portable) {
        partition.backend = chosen.portable;
        continue;
      }
      const std::string name = backend_name + ":" + std::to_string(result.summary.partitions.size());
      if (!blob.is_ok()) return blob.status().with_context("partition " + name);
      lowered = std::move(blob).value();
      if (options.blobs != nullptr) {
        options.blobs->lowered(backend, backend_name, subgraph, lowered.bytes, lowered.names_constants);
      }
      break;
    }
    const std::string& backend_name = chosen.names[partition.backend];
    const std::string name = backend_name + ":" + std::to_string(result.summary.partitions.size());
    const bool portable = partition.backend == chosen.portable;
    const Span<const uint8_t> blob = found ? found->bytes : Span<const uint8_t>(lowered.bytes);
    const bool names_constants = found ? found->names_constants : lowered.names_constants;
    // A blob that names constants keeps the graph that holds them, fallback or not.
    const bool with_fallback = (options.fallback || names_constants) && !portable;
    std::vector<uint32_t> inputs, outputs;
    for (int32_t v : partition.inputs) inputs.push_back(value_of(v));
    for (int32_t v : partition.outputs) outputs.push_back(value_of(v));
    const uint32_t delegate =
        method.add_delegate(name, backend_name, blob, stored_specs(options, backend_name),
                            with_fallback ? Span<const uint8_t>(subgraph) : Span<const uint8_t>(), names_constants);
    method.add_instruction(delegate, std::move(inputs), std::move(outputs));

    PartitionSummary summary;
    summary.name = name;
    summary.backend = chosen.names[partition.backend];
    summary.num_nodes = partition.nodes.size();
    summary.estimated_us = problem.partition_us;
    summary.measured_us = 0;
    for (uint32_t n : partition.nodes) {
      ++summary.op_counts[graph.nodes()->Get(n)->op_type()->str()];
      summary.estimated_us += problem.node_cost[n][partition.backend];
      const double figure = measured[n][partition.backend];
      summary.measured_us = summary.measured_us < 0 || figure < 0 ? -1 : summary.measured_us + figure;
      if (contested[n] && figure < 0) ++summary.unmeasured_choices;
    }
    summary.blob_size = blob.size();
    if (found) summary.blob_origin = found->origin;
    summary.blob_names_constants = names_constants;
    summary.fallback_size = with_fallback ? subgraph.size() : 0;
    result.summary.partitions.push_back(std::move(summary));
  }
  for (int32_t v : *graph.outputs()) method.add_output(value_of(v));

  PLUGRT_ASSIGN_OR_RETURN(result.program, program.finish());
  return result;
}

}  // namespace plugrt::placement
