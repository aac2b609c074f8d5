// SPDX-License-Identifier: Apache-2.0
// TfIdfVectorizer (opset 9) on int32 or int64 tokens, as ONNX Runtime and ONNX's
// reference compute it: each row of X counts the pool's n-grams it contains (lengths
// min_gram_length to max_gram_length, their items max_skip_count or fewer tokens apart;
// 1-grams counted once, not once per skip), into the output column ngram_indexes gives
// each n-gram; then TF keeps the counts, IDF writes the column's weight where the count
// is positive, TFIDF multiplies the counts by the weights (all 1 when weights are absent).
#include <algorithm>

#include "kernel_families.h"

namespace plugrt::portable {

namespace {

enum class Weighting { kTf, kIdf, kTfIdf };

/// One n-gram of the pool: its tokens and its output column.
struct Gram {
  std::vector<int64_t> tokens;
  int64_t column = 0;
};

struct TfIdfConfig {
  std::vector<Gram> grams;  // those of a length between min and max
  int64_t min_length = 1, max_length = 1, max_skip = 0, columns = 0;
  Weighting weighting = Weighting::kTf;
  std::vector<float> weights;  // per column; empty: all 1
};

template <typename T>
class TfIdfKernel final : public Kernel {
 public:
  TfIdfKernel(TfIdfConfig c, int64_t rows, int64_t row_size) : c_(std::move(c)), rows_(rows), row_size_(row_size) {}

  void run(const KernelArgs& args) const override {
    const T* x = static_cast<const T*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    for (int64_t r = 0; r < rows_; ++r) {
      float* out = y + r * c_.columns;
      std::fill(out, out + c_.columns, 0.0f);
      count_row(x + r * row_size_, out);
      weigh(out);
    }
  }

 private:
  void count_row(const T* row, float* out) const {
    for (int64_t distance = 1; distance <= c_.max_skip + 1; ++distance) {
      const int64_t shortest = distance == 1 ? c_.min_length : std::max<int64_t>(c_.min_length, 2);
      if (shortest > c_.max_length) break;
      for (int64_t start = 0; start < row_size_; ++start) {
        for (const Gram& gram : c_.grams) {
          const auto length = static_cast<int64_t>(gram.tokens.size());
          if (length < shortest || start + (length - 1) * distance >= row_size_) continue;
          bool match = true;
          for (int64_t k = 0; k < length && match; ++k) {
            match = static_cast<int64_t>(row[start + k * distance]) == gram.tokens[static_cast<size_t>(k)];
          }
          if (match) out[gram.column] += 1.0f;
        }
      }
    }
  }

  void weigh(float* out) const {
    for (int64_t i = 0; i < c_.columns; ++i) {
      const float weight = c_.weights.empty() ? 1.0f : c_.weights[static_cast<size_t>(i)];
      if (c_.weighting == Weighting::kIdf) out[i] = out[i] > 0.0f ? weight : 0.0f;
      if (c_.weighting == Weighting::kTfIdf) out[i] *= weight;
    }
  }

  TfIdfConfig c_;
  int64_t rows_, row_size_;
};

/// Splits pool_int64s by ngram_counts into n-grams numbered in pool order, keeping
/// those of a length in [min_length, max_length]; the reason when they do not fit.
std::string read_grams(const NodeContext& node, TfIdfConfig* c) {
  const std::vector<int64_t> pool = node.attr_ints("pool_int64s");
  const std::vector<int64_t> counts = node.attr_ints("ngram_counts");
  const std::vector<int64_t> indexes = node.attr_ints("ngram_indexes");
  if (pool.empty() || node.has_attribute("pool_strings")) return "only pool_int64s (integer tokens) is supported";
  size_t ordinal = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const auto length = static_cast<int64_t>(i + 1);
    const int64_t begin = counts[i];
    const int64_t end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % length != 0) {
      return "ngram_counts does not split pool_int64s into n-grams of lengths 1, 2, ...";
    }
    for (int64_t at = begin; at < end; at += length, ++ordinal) {
      if (ordinal >= indexes.size()) return "ngram_indexes has fewer values than the pool has n-grams";
      if (length < c->min_length || length > c->max_length) continue;
      c->grams.push_back({std::vector<int64_t>(pool.begin() + at, pool.begin() + at + length), indexes[ordinal]});
    }
  }
  for (int64_t index : indexes) {
    if (index < 0) return "ngram_indexes has a negative value";
    c->columns = std::max(c->columns, index + 1);
  }
  return {};
}

std::string read_tfidf_config(const NodeContext& node, TfIdfConfig* c) {
  c->min_length = node.attr_int("min_gram_length", 0);
  c->max_length = node.attr_int("max_gram_length", 0);
  c->max_skip = node.attr_int("max_skip_count", 0);
  if (c->min_length < 1 || c->max_length < c->min_length || c->max_skip < 0) {
    return "min_gram_length, max_gram_length and max_skip_count must satisfy 1 <= min <= max and skip >= 0";
  }
  const std::string mode = node.attr_string("mode", "");
  if (mode == "TF") {
    c->weighting = Weighting::kTf;
  } else if (mode == "IDF") {
    c->weighting = Weighting::kIdf;
  } else if (mode == "TFIDF") {
    c->weighting = Weighting::kTfIdf;
  } else {
    return "mode '" + mode + "' is not TF, IDF or TFIDF";
  }
  if (std::string why = read_grams(node, c); !why.empty()) return why;
  c->weights = node.attr_floats("weights");
  if (!c->weights.empty() && c->weights.size() != static_cast<size_t>(c->columns)) {
    return "weights needs one value per output column (" + std::to_string(c->columns) + ")";
  }
  return {};
}

Prepared prepare_tfidf_vectorizer(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  if (x.shape.rank != 1 && x.shape.rank != 2) {
    return prepare_error(node, "X has shape " + to_string(x.shape) + "; expected [C] or [N, C]");
  }
  TfIdfConfig c;
  if (std::string why = read_tfidf_config(node, &c); !why.empty()) return prepare_error(node, why);
  const int64_t rows = x.shape.rank == 2 ? x.shape[0] : 1;
  const int64_t row_size = x.shape[x.shape.rank - 1];
  const Shape out = x.shape.rank == 2 ? Shape{rows, c.columns} : Shape{c.columns};
  if (std::string why = check_output(node, 0, out, DType::kFloat32); !why.empty()) return prepare_error(node, why);
  if (x.dtype == DType::kInt32) return prepared<TfIdfKernel<int32_t>>(std::move(c), rows, row_size);
  if (x.dtype == DType::kInt64) return prepared<TfIdfKernel<int64_t>>(std::move(c), rows, row_size);
  return prepare_error(node, "X must be int32 or int64 tokens, not " + std::string(to_string(x.dtype)));
}

}  // namespace

void add_tfidf_vectorizer_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"TfIdfVectorizer", prepare_tfidf_vectorizer});
}

}  // namespace plugrt::portable
