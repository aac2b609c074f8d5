// SPDX-License-Identifier: Apache-2.0
// The ONNX importer: an ONNX model (a ModelProto file) -> the graph IR
// (core/schema/graph_ir.fbs) that partitioning and the portable backend read.
//
// Initializers and Constant nodes become constant values; ONNX's own shape inference
// gives every value a static dtype and shape (or, for dim_params given bounds in
// ImportOptions::dims, dimensions as expressions over those symbols: onnx_symbolic.h);
// Identity nodes are removed; nodes whose inputs are all constant (shape-only subgraphs
// among them) are evaluated at import and replaced by their results; attributes are
// written with the schema's defaults filled in.
// An If whose condition folds is replaced by its branch; other Ifs, Loops and Scans keep
// their subgraphs, each imported the same way as a graph of its own (core/FORMAT.md,
// "Subgraphs in the graph IR"). A Loop's scan outputs need a length known at compile
// time: a constant trip count with a condition that stays true, or a declared shape.
#ifndef PLUGRT_TOOLS_COMPILER_ONNX_IMPORTER_H_
#define PLUGRT_TOOLS_COMPILER_ONNX_IMPORTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt::compiler {

/// Why the import failed on a graph input's shape, for a front end that gives shapes
/// its own way (the plugrt command's --input-shape) and words the error for it; the
/// import's own message speaks of ImportOptions::input_shapes.
/// One input that needs a static shape (or bounds) before the model can be imported.
struct NeededShape {
  std::string input;   ///< the input's name
  std::string reason;  ///< "input 'x' has a dynamic dimension 0 ('N') in [N,3]"
  size_t rank = 0;     ///< the rank a shape for it needs, when the model declares one (else 0)
  std::string symbol;  ///< the dim_param of the dimension that varies, if it has one
};

struct InputShapeProblem {
  enum class Kind {
    kNone,          ///< the import did not fail on an input's shape
    kShapeRefused,  ///< a shape given in input_shapes does not fit the model
    kShapeNeeded,   ///< an input has no static shape and none was given
    kDimRefused,    ///< bounds given in dims do not fit the model
  };
  Kind kind = Kind::kNone;
  std::string input;   ///< the input's name (for kShapeRefused, the name given)
  std::string reason;  ///< "input 'x' has rank 4, the shape given has rank 2": no remedy, no file name
  size_t rank = 0;     ///< the rank a shape for `input` needs, when the model declares one (else 0)
  std::string symbol;  ///< kShapeNeeded: the dim_param of the dimension that varies, if it has one
  /// kShapeNeeded: every input that needs a shape, in the model's order (the fields
  /// above describe the first), so that one error can name them all.
  std::vector<NeededShape> needed;
};

/// The values a symbolic dimension may take, both ends included.
struct DimBounds {
  int64_t min = 0;
  int64_t max = 0;
};

struct ImportOptions {
  /// Static shapes for graph inputs whose ONNX shape has symbolic or unknown
  /// dimensions, by input name. An input left dynamic is an error naming it.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// Bounds for ONNX symbolic dimensions (dim_params), by name: such a dimension stays
  /// symbolic, each value's dimensions become expressions over the symbols, and the
  /// graph is written as ir_version 2. Each name must be a dim_param of some input.
  std::map<std::string, DimBounds> dims;
  /// out: when not null, set when the import fails on an input's shape.
  InputShapeProblem* input_shape_problem = nullptr;
  /// Values for graph inputs, by input name, in the input's own dtype (row-major): each
  /// such input becomes a constant and is no longer an input of the program, so what
  /// depends on it folds (an If on a sample rate becomes its branch). Its shape is the
  /// declared one, completed by `input_shapes`, or [count] for a rank-1 input and [] for
  /// one value of a rank-0 input.
  std::map<std::string, std::vector<double>> input_values;
  /// How a float16 or bfloat16 model computes. kFloat32 (the default): in float32, its
  /// constants widened at import and a Cast at each half input and output of the graph,
  /// which keep their dtype; the fast backends and portable's heavy kernels take float32
  /// only. kAsGiven: in the model's dtypes, which only portable's element-wise kernels take.
  enum class HalfPrecision { kFloat32, kAsGiven };
  HalfPrecision half_precision = HalfPrecision::kFloat32;
};

struct ImportedModel {
  std::vector<uint8_t> graph;  ///< a graph IR buffer (GraphBuilder::finish())
  /// The default-domain opset of the graph (kMinOnnxOpset for an upgraded model; 17 for a
  /// model of ai.onnx.preview.training optimizers alone, which imports no default opset).
  int64_t opset = 0;
  std::string producer;          ///< "pytorch 1.13.1", from the model
  size_t folded_nodes = 0;       ///< nodes evaluated at import (constants, shape subgraphs)
  bool half_in_float32 = false;  ///< a float16 or bfloat16 model, computed in float32
};

/// The lowest and highest default-domain opsets the importer reads. A model below
/// kMinOnnxOpset is first upgraded to it with ONNX's version converter (kNotSupported,
/// naming the file, its opset and the converter's reason, when that fails); a model above
/// kComputedOnnxOpset is written in that opset's forms (onnx_newer_opsets.cc), since the
/// ONNX library the importer uses knows none newer.
inline constexpr int64_t kMinOnnxOpset = 7;
inline constexpr int64_t kComputedOnnxOpset = 17;
inline constexpr int64_t kMaxOnnxOpset = 21;

/// Imports the model at `path`. Errors:
///  - kAccessFailed: the file cannot be read (the message names it);
///  - kInvalidArgument: not a valid ONNX model (protobuf parse, checker, inference);
///  - kNotSupported: an op, opset, domain, dtype, dynamic shape or external data the
///    importer does not handle; the message names the op type, the node name and the
///    opset ("node 'conv1' (Conv, opset 13): ...").
Result<ImportedModel> import_onnx_file(const std::string& path, const ImportOptions& options = {});
/// The same, from the bytes of a model; `origin` names it in messages.
Result<ImportedModel> import_onnx_bytes(Span<const uint8_t> bytes, const std::string& origin,
                                        const ImportOptions& options = {});

}  // namespace plugrt::compiler

#endif  // PLUGRT_TOOLS_COMPILER_ONNX_IMPORTER_H_
