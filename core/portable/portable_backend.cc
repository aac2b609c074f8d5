// SPDX-License-Identifier: Apache-2.0
#include "portable_backend.h"

#include <string>

#include "call_stop.h"
#include "compiled_graph.h"
#include "dynamic_graph.h"
#include "plugrt/sdk/graph.h"

namespace plugrt::portable {

namespace {

/// One handle: a compiled graph, or a graph whose dimensions vary, compiled per shape.
class PortableDelegate final : public sdk::Delegate {
 public:
  explicit PortableDelegate(std::unique_ptr<CompiledGraph> graph) : graph_(std::move(graph)) {}
  explicit PortableDelegate(std::unique_ptr<DynamicGraph> graph) : dynamic_(std::move(graph)) {}

  sdk::Status execute(const sdk::Arguments& args) override {
    const plugrt_execute_args& raw = args.raw();
    char error[512];
    const CallStopScope call(args);
    const bool ran = graph_ != nullptr
                         ? graph_->run(raw.inputs, raw.num_inputs, raw.outputs, raw.num_outputs, error, sizeof(error))
                         : dynamic_->run(raw.inputs, raw.num_inputs, raw.outputs, raw.num_outputs, args.symbol_values(),
                                         args.num_symbol_values(), error, sizeof(error));
    if (ran) return sdk::Status::ok();
    return call.stopped() ? sdk::Status(PLUGRT_STATUS_CANCELLED, error) : sdk::Status::invalid_argument(error);
  }

 private:
  std::unique_ptr<CompiledGraph> graph_;
  std::unique_ptr<DynamicGraph> dynamic_;
};

sdk::Status compile_failure(CompileFailure failure, const std::string& error) {
  switch (failure) {
    case CompileFailure::kIncompatible: return sdk::Status::incompatible_blob(error);
    case CompileFailure::kUnsupported: return sdk::Status::not_supported(error);
    default: return sdk::Status(PLUGRT_STATUS_INVALID_PROGRAM, error);
  }
}

}  // namespace

sdk::Expected<std::unique_ptr<sdk::Delegate>> PortableBackend::init(const sdk::InitContext& context) {
  std::string error;
  CompileFailure failure = CompileFailure::kInvalid;
  if (sdk::has_symbols(context.blob, context.blob_size)) {
    std::unique_ptr<DynamicGraph> graph = DynamicGraph::create(context.blob, context.blob_size, &error, &failure);
    if (graph == nullptr) return compile_failure(failure, error);
    return std::unique_ptr<sdk::Delegate>(std::make_unique<PortableDelegate>(std::move(graph)));
  }
  std::unique_ptr<CompiledGraph> graph = CompiledGraph::compile(context.blob, context.blob_size, &error, &failure);
  if (graph == nullptr) return compile_failure(failure, error);
  return std::unique_ptr<sdk::Delegate>(std::make_unique<PortableDelegate>(std::move(graph)));
}

sdk::Status PortableBackend::partition(const sdk::PartitionRequest& request) {
  std::string error;
  std::vector<std::string> reasons = node_support(request.graph, request.graph_size, &error);
  if (!error.empty()) return sdk::Status::invalid_argument(error);
  if (reasons.size() != request.num_nodes) {
    return sdk::Status::invalid_argument("num_nodes is " + std::to_string(request.num_nodes) + " but the graph has " +
                                         std::to_string(reasons.size()) + " nodes");
  }
  for (size_t n = 0; n < reasons.size(); ++n) request.node_taken[n] = reasons[n].empty() ? 1 : 0;
  return sdk::Status::ok();
}

sdk::Expected<std::vector<uint8_t>> PortableBackend::preprocess(const sdk::PreprocessRequest& request) {
  if (std::string why = verify_graph(request.graph, request.graph_size); !why.empty()) {
    return sdk::Status::invalid_argument(why);
  }
  const auto* bytes = static_cast<const uint8_t*>(request.graph);
  return std::vector<uint8_t>(bytes, bytes + request.graph_size);
}

}  // namespace plugrt::portable
