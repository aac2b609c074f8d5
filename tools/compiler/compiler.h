// SPDX-License-Identifier: Apache-2.0
// The ahead-of-time compiler: an ONNX model, imported into the graph IR
// (onnx_importer.h), compiled into a program by plugrt::placement::compile_graph.
#ifndef PLUGRT_TOOLS_COMPILER_COMPILER_H_
#define PLUGRT_TOOLS_COMPILER_COMPILER_H_

#include <string>

#include "onnx_importer.h"
#include "plugrt/placement/compile.h"

namespace plugrt::compiler {

using placement::compile_graph;
using placement::CompiledModel;
using placement::CompileOptions;
using placement::CompileSummary;
using placement::default_backend_order;
using placement::PartitionSummary;
using placement::PlacementRule;

/// import_onnx_file() then placement::compile_graph(); errors name `path`.
Result<CompiledModel> compile_onnx_file(const std::string& path, Registry& registry, const CompileOptions& options,
                                        const ImportOptions& import_options = {});

}  // namespace plugrt::compiler

#endif  // PLUGRT_TOOLS_COMPILER_COMPILER_H_
