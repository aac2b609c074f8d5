// SPDX-License-Identifier: Apache-2.0
/// \file per_shape.h
/// Dimensions that vary (ABI 1.5) for a backend that lowers static graphs: the blob of a
/// partition whose dimensions vary holds the partition's graph itself, and its handle
/// runs the backend's own preprocess and init again for each new set of symbol values a
/// call brings (passed by the host, ABI 1.6, or read from its input shapes), keeping the
/// last few handles. Header-only; link plugrt::sdk_graph. In the backend:
///
///   static constexpr plugrt_backend_capabilities kCapabilities = PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS;
///   static constexpr sdk::BlobFormat kVaryingFormat{"PRTMYNPV", "my_npu varying-shape", 2, 1};
///
///   partition:  const std::vector<int64_t> at = sdk::symbol_maxima(request.graph, request.graph_size);
///               GraphView::open(request.graph, request.graph_size, sdk::values_or_null(at))  // judged at the bounds
///   preprocess: open the view at request.symbol_values if set, else at the maxima; lower;
///               then, for a graph with symbols and no symbol_values:
///               return sdk::PerShapeDelegate::write_blob(kVaryingFormat, request);
///   init:       if (sdk::PerShapeDelegate::is_blob(kVaryingFormat, context))
///                 return sdk::PerShapeDelegate::create(*this, kVaryingFormat, context);
///
/// A call at values the graph does not lower at is refused with
/// Status::incompatible_blob: the host runs that call on the portable fallback. The
/// handle keeps a copy of init's compile specs and runtime options: each specialization's
/// preprocess gets the same compile specs, and its init the same specs and options.
#ifndef PLUGRT_SDK_PER_SHAPE_H_
#define PLUGRT_SDK_PER_SHAPE_H_

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plugrt/sdk/backend.h"
#include "plugrt/sdk/blob_header.h"
#include "plugrt/sdk/graph.h"
#include "plugrt/sdk/symbol_binder.h"

namespace plugrt::sdk {

/// Each symbol's upper bound; empty for a graph without symbols (or an invalid buffer,
/// which GraphView::open refuses).
inline std::vector<int64_t> symbol_maxima(const void* data, size_t size) {
  std::vector<int64_t> maxima;
  Expected<const ir::Graph*> graph = read_graph(data, size);
  if (graph.is_ok() && (*graph)->symbols() != nullptr) {
    for (const ir::Symbol* symbol : *(*graph)->symbols()) maxima.push_back(symbol->max());
  }
  return maxima;
}

/// `values.data()`, or null when there are none (a static graph).
inline const int64_t* values_or_null(const std::vector<int64_t>& values) {
  return values.empty() ? nullptr : values.data();
}

class PerShapeDelegate final : public Delegate {
 public:
  /// The handles kept, one per set of symbol values (the least recently used goes).
  static constexpr size_t kMaxSpecializations = 8;

  /// Where the graph starts in a blob of each version: version 1 right after the header;
  /// from version 2 at 64 bytes, so that the blob ends with the very bytes of the
  /// partition's graph at a segment boundary and a program stores them once for the blob
  /// and the portable fallback (ProgramBuilder::add_segment_within).
  static constexpr size_t kGraphOffset = 64;
  static size_t graph_offset(uint32_t version) { return version < 2 ? BlobFormat::kHeaderSize : kGraphOffset; }

  /// The blob of a partition whose dimensions vary: `format`'s header, then the graph
  /// (at graph_offset(format.version())).
  static Expected<std::vector<uint8_t>> write_blob(const BlobFormat& format, const PreprocessRequest& request) {
    Expected<const ir::Graph*> graph = read_graph(request.graph, request.graph_size);
    if (!graph.is_ok()) return Status::invalid_argument(graph.status().message());
    const size_t offset = graph_offset(format.version());
    std::vector<uint8_t> blob(offset + request.graph_size, 0);
    format.write_header(blob.data());
    std::memcpy(blob.data() + offset, request.graph, request.graph_size);
    return blob;
  }

  static bool is_blob(const BlobFormat& format, const InitContext& context) {
    return format.check_header(context.blob, context.blob_size).is_ok();
  }

  /// Checks the graph, and that `backend`'s preprocess lowers it at the symbols' upper
  /// bounds. Builds nothing: each set of values a call brings is built on first use.
  static Expected<std::unique_ptr<Delegate>> create(Backend& backend, const BlobFormat& format,
                                                    const InitContext& context) {
    PLUGRT_SDK_RETURN_IF_ERROR(format.check_header(context.blob, context.blob_size));
    const size_t offset = graph_offset(BlobFormat::version_of(context.blob));
    if (context.blob_size < offset) return invalid("it ends inside its header");
    std::unique_ptr<PerShapeDelegate> delegate(new PerShapeDelegate(backend, context));
    delegate->graph_ = context.bytes() + offset;
    delegate->graph_size_ = context.blob_size - offset;
    Expected<const ir::Graph*> read = read_graph(delegate->graph_, delegate->graph_size_);
    if (!read.is_ok()) return invalid("its graph is invalid: " + read.status().message());
    const ir::Graph& graph = **read;
    if (graph.symbols() == nullptr || graph.symbols()->size() == 0) return invalid("its graph has no symbols");
    for (const ir::Symbol* symbol : *graph.symbols()) {
      if (symbol->min() < 0 || symbol->min() > symbol->max()) {
        return invalid("its graph has a symbol of range [" + std::to_string(symbol->min()) + ", " +
                       std::to_string(symbol->max()) + "]");
      }
    }
    for (int32_t input : indices(graph.inputs())) {
      if (value_at(graph, input) == nullptr) return invalid("its graph names a missing input");
    }
    delegate->symbols_ = symbol_binder_for(graph);
    // The handles may read the weights from the graph by name, when the names allow it.
    std::set<std::string_view> names;
    for (size_t v = 0; v < num_values(graph); ++v) {
      const ir::Value* value = value_at(graph, static_cast<int32_t>(v));
      if (value->data() == nullptr) continue;
      if (value->name() == nullptr || value->name()->size() == 0 ||
          !names.insert(value->name()->string_view()).second) {
        delegate->constants_.clear();
        break;
      }
      delegate->constants_.push_back(
          {{value->name()->c_str(), value->name()->size()}, value->data()->data(), value->data()->size()});
    }
    const Expected<std::pair<std::vector<uint8_t>, bool>> at_bounds = delegate->lower(delegate->symbols_.values());
    // Written by preprocess, which lowered it: a graph this build cannot lower (a newer
    // plugin's, or a damaged one) goes to the portable fallback.
    if (!at_bounds.is_ok()) {
      return Status::incompatible_blob("its graph does not lower at the symbols' upper bounds here: " +
                                       at_bounds.status().message());
    }
    return std::unique_ptr<Delegate>(std::move(delegate));
  }

  /// Binds the symbols (the host's values, else the inputs' shapes; naming the input,
  /// dimension and bound when one does not fit), then runs the handle for those values.
  /// Allocates only the first time a set of values comes. Values the graph does not
  /// lower at are refused as incompatible: the host runs that call on the portable
  /// fallback.
  Status execute(const Arguments& args) override {
    ++calls_;
    const plugrt_execute_args& raw = args.raw();
    char error[256];
    if (!symbols_.bind(raw.inputs, raw.num_inputs, args.symbol_values(), args.num_symbol_values(), error,
                       sizeof(error))) {
      return Status::invalid_argument(error);
    }
    auto kept = std::find_if(kept_.begin(), kept_.end(),
                             [this](const Specialization& s) { return s.symbol_values == symbols_.values(); });
    if (kept == kept_.end()) {
      Expected<Specialization> made = specialize();
      Specialization refused;  // remembered, so that these values are not lowered again
      if (!made.is_ok()) {
        refused.symbol_values = symbols_.values();
        refused.refusal = "at";
        for (size_t s = 0; s < symbols_.num_symbols(); ++s) {
          refused.refusal += (s == 0 ? " " : ", ") + symbols_.names()[s] + "=" + std::to_string(symbols_.values()[s]);
        }
        refused.refusal += ": " + made.status().message();
      }
      if (kept_.size() == kMaxSpecializations) {
        auto oldest =
            std::min_element(kept_.begin(), kept_.end(),
                             [](const Specialization& a, const Specialization& b) { return a.last_use < b.last_use; });
        release(*oldest);
        kept_.erase(oldest);
      }
      kept_.push_back(made.is_ok() ? std::move(made).value() : std::move(refused));
      kept = kept_.end() - 1;
    }
    kept->last_use = calls_;
    if (kept->handle == nullptr) return Status::incompatible_blob(kept->refusal);
    return backend_->execute(*kept->handle, args);
  }

  ~PerShapeDelegate() override {
    for (Specialization& kept : kept_) release(kept);
  }
  PerShapeDelegate(const PerShapeDelegate&) = delete;
  PerShapeDelegate& operator=(const PerShapeDelegate&) = delete;

 private:
  struct Specialization {
    std::vector<int64_t> symbol_values;
    std::vector<uint8_t> blob;         // the static blob its handle reads
    std::unique_ptr<Delegate> handle;  // null for values the graph does not lower at
    std::string refusal;               // why not, then
    uint64_t last_use = 0;
  };

  PerShapeDelegate(Backend& backend, const InitContext& context)
      : backend_(&backend),
        host_(context.host),
        num_threads_(context.num_threads),
        compile_specs_(context.compile_specs, "compile spec"),
        runtime_options_(context.runtime_options, "runtime option") {}

  static Status invalid(const std::string& why) {
    return Status(PLUGRT_STATUS_INVALID_PROGRAM, "the varying-shape blob is damaged: " + why);
  }

  void release(Specialization& kept) {
    if (kept.handle != nullptr) backend_->destroy(std::move(kept.handle));
  }

  /// The backend's own preprocess at `values`: the static blob, and whether it names
  /// the graph's constants.
  Expected<std::pair<std::vector<uint8_t>, bool>> lower(const std::vector<int64_t>& values) const {
    PreprocessRequest request{host_, graph_, graph_size_, compile_specs_.view()};
    plugrt_blob_flags flags = 0;
    request.constants_by_name_offered = !constants_.empty();
    request.blob_flags_ = &flags;
    request.symbol_values = values.data();
    PLUGRT_SDK_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, backend_->preprocess(request));
    return std::make_pair(std::move(blob), (flags & PLUGRT_BLOB_NAMES_CONSTANTS) != 0);
  }

  /// The backend's own preprocess and init at the bound symbols' values.
  Expected<Specialization> specialize() const {
    Specialization result;
    result.symbol_values = symbols_.values();
    PLUGRT_SDK_ASSIGN_OR_RETURN(auto lowered, lower(result.symbol_values));
    result.blob = std::move(lowered.first);
    const bool named = lowered.second;
    const InitContext context{host_,
                              result.blob.data(),
                              result.blob.size(),
                              compile_specs_.view(),
                              runtime_options_.view(),
                              num_threads_,
                              named ? NamedConstants(constants_.data(), constants_.size()) : NamedConstants()};
    PLUGRT_SDK_ASSIGN_OR_RETURN(result.handle, backend_->init(context));
    return result;
  }

  Backend* backend_;
  Host host_;
  size_t num_threads_ = 0;
  // init's options, kept: each specialization is lowered and initialised with them.
  OwnedOptions compile_specs_;
  OwnedOptions runtime_options_;
  const uint8_t* graph_ = nullptr;  // in the blob, which outlives the handle
  size_t graph_size_ = 0;
  std::vector<plugrt_named_constant> constants_;  // the graph's, by name
  SymbolBinder symbols_;
  std::vector<Specialization> kept_;
  uint64_t calls_ = 0;
};

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_PER_SHAPE_H_
