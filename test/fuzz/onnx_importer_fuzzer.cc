// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: an ONNX model's bytes through the importer (protobuf parse, the
// checks of what plugrt handles, ONNX's checker, shape inference node by node with the
// guards of onnx_inference.cc, constant folding, writing the graph IR). Must never crash,
// hang or exhaust memory: a bad model fails with kInvalidArgument or kNotSupported, and
// a model that imports gives a graph IR that the portable backend's checks accept.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "onnx_importer.h"
#include "plugrt/builtin_backends.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  plugrt::Result<plugrt::compiler::ImportedModel> model =
      plugrt::compiler::import_onnx_bytes(plugrt::Span<const uint8_t>(data, size), "fuzz.onnx");
  if (!model.is_ok()) {
    switch (model.code()) {
      case plugrt::Error::kInvalidArgument:
      case plugrt::Error::kNotSupported:
      case plugrt::Error::kMemoryAllocationFailed: return 0;
      default: std::abort();  // kInternal and the rest mean the importer itself went wrong
    }
  }
  // What the importer writes is what every backend reads: it must be a valid graph.
  const std::vector<uint8_t>& graph = model->graph;
  if (!plugrt::portable_node_support(plugrt::Span<const uint8_t>(graph.data(), graph.size())).is_ok()) std::abort();
  return 0;
}
