// Upgrading models of opsets below the importer's range with ONNX's version converter.
#include <onnx/version_converter/convert.h>

#include "onnx_internal.h"

namespace plugrt::compiler::onnx_import {

Status upgrade_opset(onnx::ModelProto* model, int64_t from, int64_t to) {
  try {
    onnx::ModelProto upgraded = onnx::version_conversion::ConvertVersion(*model, static_cast<int>(to));
    model->Swap(&upgraded);
  } catch (const std::exception& e) {
    return Status(Error::kNotSupported, "opset " + std::to_string(from) +
                                            " of the default ONNX domain cannot be upgraded to opset " +
                                            std::to_string(to) + " (plugrt imports opsets " + std::to_string(to) +
                                            " and later): ONNX's version converter says: " + e.what());
  }
  return Status::ok();
}

}  // namespace plugrt::compiler::onnx_import
