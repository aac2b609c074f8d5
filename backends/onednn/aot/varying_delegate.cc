// SPDX-License-Identifier: Apache-2.0
#include "aot/varying_delegate.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <string_view>

#include "aot/lowering.h"
#include "plugrt/sdk/graph.h"
#include "src/onednn_delegate.h"

namespace plugrt::onednn {

std::vector<uint8_t> write_varying_blob(const void* graph, size_t graph_size) {
  std::vector<uint8_t> blob(sdk::BlobFormat::kHeaderSize + graph_size);
  kVaryingBlobFormat.write_header(blob.data());
  std::memcpy(blob.data() + sdk::BlobFormat::kHeaderSize, graph, graph_size);
  return blob;
}

VaryingDelegate::VaryingDelegate(const sdk::InitContext& context)
    : host_(context.host), num_threads_(context.num_threads) {}

sdk::Expected<std::unique_ptr<sdk::Delegate>> VaryingDelegate::create(const sdk::InitContext& context) {
  PLUGRT_SDK_RETURN_IF_ERROR(kVaryingBlobFormat.check_header(context.blob, context.blob_size));
  std::unique_ptr<VaryingDelegate> delegate(new VaryingDelegate(context));
  delegate->graph_ = context.bytes() + sdk::BlobFormat::kHeaderSize;
  delegate->graph_size_ = context.blob_size - sdk::BlobFormat::kHeaderSize;
  sdk::Expected<const ir::Graph*> read = sdk::read_graph(delegate->graph_, delegate->graph_size_);
  if (!read.is_ok()) {
    return sdk::Status(PLUGRT_STATUS_INVALID_PROGRAM,
                       "the varying-shape blob's graph is invalid: " + read.status().message());
  }
  const ir::Graph& graph = **read;
  if (graph.symbols() == nullptr || graph.symbols()->size() == 0) {
    return sdk::Status(PLUGRT_STATUS_INVALID_PROGRAM, "the varying-shape blob's graph has no symbols");
  }
  for (const ir::Symbol* symbol : *graph.symbols()) {
    if (symbol->min() < 0 || symbol->min() > symbol->max()) {
      return sdk::Status(PLUGRT_STATUS_INVALID_PROGRAM, "the varying-shape blob's graph has a symbol of range [" +
                                                            std::to_string(symbol->min()) + ", " +
                                                            std::to_string(symbol->max()) + "]");
    }
  }
  for (int32_t input : sdk::indices(graph.inputs())) {
    if (sdk::value_at(graph, input) == nullptr) {
      return sdk::Status(PLUGRT_STATUS_INVALID_PROGRAM, "the varying-shape blob's graph names a missing input");
    }
  }
  delegate->symbols_ = sdk::symbol_binder_for(graph);
  // The handles read the weights from the graph by name when the names allow it.
  std::set<std::string_view> names;
  for (size_t v = 0; v < sdk::num_values(graph); ++v) {
    const ir::Value* value = sdk::value_at(graph, static_cast<int32_t>(v));
    if (value->data() == nullptr) continue;
    if (value->name() == nullptr || value->name()->size() == 0 || !names.insert(value->name()->string_view()).second) {
      delegate->constants_.clear();
      break;
    }
    delegate->constants_.push_back(
        {{value->name()->c_str(), value->name()->size()}, value->data()->data(), value->data()->size()});
  }
  PLUGRT_SDK_ASSIGN_OR_RETURN(Specialization at_bounds, delegate->specialize());
  delegate->kept_.push_back(std::move(at_bounds));
  return std::unique_ptr<sdk::Delegate>(std::move(delegate));
}

sdk::Expected<VaryingDelegate::Specialization> VaryingDelegate::specialize() const {
  Specialization result;
  result.symbol_values = symbols_.values();
  PLUGRT_SDK_ASSIGN_OR_RETURN(const GraphView graph, GraphView::open(graph_, graph_size_, result.symbol_values.data()));
  Lowering lowering(graph);
  if (std::string why = lowering.add_all_nodes(); !why.empty()) return sdk::Status::not_supported(why);
  lowering.set_name_constants(!constants_.empty());
  std::string error;
  result.blob = lowering.finish(&error);
  if (result.blob.empty()) return sdk::Status::invalid_argument(error);
  const sdk::InitContext context{
      host_,
      result.blob.data(),
      result.blob.size(),
      sdk::Options(),
      sdk::Options(),
      num_threads_,
      lowering.names_constants() ? sdk::NamedConstants(constants_.data(), constants_.size()) : sdk::NamedConstants()};
  PLUGRT_SDK_ASSIGN_OR_RETURN(result.handle, OnednnDelegate::create(context));
  return result;
}

sdk::Status VaryingDelegate::execute(const sdk::Arguments& args) {
  ++calls_;
  const plugrt_execute_args& raw = args.raw();
  char error[256];
  if (!symbols_.bind(raw.inputs, raw.num_inputs, error, sizeof(error))) return sdk::Status::invalid_argument(error);
  auto kept = std::find_if(kept_.begin(), kept_.end(),
                           [this](const Specialization& s) { return s.symbol_values == symbols_.values(); });
  if (kept == kept_.end()) {
    sdk::Expected<Specialization> made = specialize();
    Specialization refused;  // remembered, so that the shape is not lowered again
    if (!made.is_ok()) {
      refused.symbol_values = symbols_.values();
      refused.refusal = "at";
      for (size_t s = 0; s < symbols_.num_symbols(); ++s) {
        refused.refusal += (s == 0 ? " " : ", ") + symbols_.names()[s] + "=" + std::to_string(symbols_.values()[s]);
      }
      refused.refusal += ": " + made.status().message();
    }
    if (kept_.size() == kMaxSpecializations) {
      kept_.erase(std::min_element(kept_.begin(), kept_.end(), [](const Specialization& a, const Specialization& b) {
        return a.last_use < b.last_use;
      }));
    }
    kept_.push_back(made.is_ok() ? std::move(made).value() : std::move(refused));
    kept = kept_.end() - 1;
  }
  kept->last_use = calls_;
  // A shape that does not lower: the host runs this call on the portable fallback.
  if (kept->handle == nullptr) return sdk::Status::incompatible_blob(kept->refusal);
  return kept->handle->execute(args);
}

}  // namespace plugrt::onednn
