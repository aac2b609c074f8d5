// SPDX-License-Identifier: Apache-2.0
#include "compiler.h"

namespace plugrt::compiler {

Result<CompiledModel> compile_onnx_file(const std::string& path, Registry& registry, const CompileOptions& options,
                                        const ImportOptions& import_options) {
  PLUGRT_ASSIGN_OR_RETURN(ImportedModel model, import_onnx_file(path, import_options));
  Result<CompiledModel> compiled = placement::compile_graph(model.graph, registry, options);
  if (!compiled.is_ok()) return compiled.status().with_context(path);
  if (model.half_in_float32) {
    compiled->summary.notes.push_back(
        "float16 computed in float32: weights widened, a Cast at each float16 input and output "
        "(--compute-dtype as-given keeps the model's dtypes)");
  }
  return compiled;
}

}  // namespace plugrt::compiler
