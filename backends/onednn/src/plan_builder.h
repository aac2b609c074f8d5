// SPDX-License-Identifier: Apache-2.0
// Building the execution plan of a verified blob: one oneDNN primitive per op (with its
// post-ops), memory formats chosen by oneDNN (format_tag::any) and converted only where
// a consumer needs another one, weights reordered once, and an arena planned by
// liveness for every intermediate value.
#ifndef PLUGRT_BACKENDS_ONEDNN_SRC_PLAN_BUILDER_H_
#define PLUGRT_BACKENDS_ONEDNN_SRC_PLAN_BUILDER_H_

#include <stdexcept>
#include <string>

#include "onednn_blob_generated.h"
#include "src/onednn_delegate.h"

namespace plugrt::onednn {

/// A blob that is well-formed as a flatbuffer but inconsistent (a bad index, a shape
/// that does not fit its op...).
class BlobError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The blob names constants the host did not lend at all: a host older than ABI 1.4.
class ConstantsMissing : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// oneDNN refused to build a primitive of the blob (a shape or format it does not
/// support on this machine).
class PrimitiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Builds the plan of `blob` on `engine`, reading the constants it names from
/// `constants`. Throws BlobError for an inconsistent blob (or constants that do not fit
/// it), ConstantsMissing when it names constants and none were lent, and PrimitiveError
/// when oneDNN refuses a primitive.
Plan build_plan(const blob::Blob& blob, const sdk::NamedConstants& constants, const dnnl::engine& engine);

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_PLAN_BUILDER_H_
