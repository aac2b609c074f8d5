// SPDX-License-Identifier: Apache-2.0
// TfIdfVectorizer (tfidf_vectorizer.cc) and the optimizers of ai.onnx.preview.training
// (optimizer.cc) against hand-computed results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr float kTolerance = 1e-5f;

// ---- TfIdfVectorizer -------------------------------------------------------------------

/// Pool: the 1-grams 1, 2, 3 (columns 0 to 2) and the 2-gram (1, 2) (column 3).
NodeRun tfidf(const std::string& mode, std::vector<Attribute> extra = {}) {
  std::vector<Attribute> attrs = {Attribute::Int("min_gram_length", 1),
                                  Attribute::Int("max_gram_length", 2),
                                  Attribute::Int("max_skip_count", 0),
                                  Attribute::String("mode", mode),
                                  Attribute::Ints("pool_int64s", {1, 2, 3, 1, 2}),
                                  Attribute::Ints("ngram_counts", {0, 3}),
                                  Attribute::Ints("ngram_indexes", {0, 1, 2, 3})};
  for (Attribute& a : extra) attrs.push_back(std::move(a));
  return run_node({"TfIdfVectorizer",
                   std::move(attrs),
                   {typed_tensor<int32_t>(DType::kInt32, {1, 5}, {1, 2, 1, 2, 3})},
                   {f32_out({1, 4})}});
}

TEST(TfIdfVectorizerKernel, CountsNGramsAndWeighsThem) {
  NodeRun tf = tfidf("TF");
  ASSERT_TRUE(tf.ok()) << tf.error;
  EXPECT_THAT(tf.outputs[0].floats(), ElementsAre(2, 2, 1, 2));
  NodeRun idf = tfidf("IDF", {Attribute::Floats("weights", {1, 2, 3, 4})});
  ASSERT_TRUE(idf.ok()) << idf.error;
  EXPECT_THAT(idf.outputs[0].floats(), ElementsAre(1, 2, 3, 4));
  NodeRun both = tfidf("TFIDF", {Attribute::Floats("weights", {1, 2, 3, 4})});
  ASSERT_TRUE(both.ok()) << both.error;
  EXPECT_THAT(both.outputs[0].floats(), ElementsAre(2, 4, 3, 8));
  EXPECT_THAT(tfidf("BM25").error, HasSubstr("mode 'BM25' is not TF, IDF or TFIDF"));
}

TEST(TfIdfVectorizerKernel, SkipsCountBiGramsOnly) {
  // Pool: 1, 2, 3 and the 2-gram (1, 3). With one skip the 2-grams (x[i], x[i + 2]) count
  // too, (1, 3) among them; the 1-grams are not counted again.
  std::vector<Attribute> attrs = {Attribute::Int("min_gram_length", 1),
                                  Attribute::Int("max_gram_length", 2),
                                  Attribute::Int("max_skip_count", 1),
                                  Attribute::String("mode", "TF"),
                                  Attribute::Ints("pool_int64s", {1, 2, 3, 1, 3}),
                                  Attribute::Ints("ngram_counts", {0, 3}),
                                  Attribute::Ints("ngram_indexes", {0, 1, 2, 3})};
  NodeRun skipped = run_node({"TfIdfVectorizer",
                              std::move(attrs),
                              {typed_tensor<int32_t>(DType::kInt32, {5}, {1, 2, 1, 2, 3})},
                              {f32_out({4})}});
  ASSERT_TRUE(skipped.ok()) << skipped.error;
  EXPECT_THAT(skipped.outputs[0].floats(), ElementsAre(2, 2, 1, 1));  // (1, 3) at positions 2 and 4
}

// ---- Optimizers ------------------------------------------------------------------------

/// One optimizer step on one tensor of one element: R = 0.1, T, X = 1, G = -1, state.
NodeRun optimizer(const char* op, int64_t t, std::vector<Attribute> attrs, const std::vector<float>& state) {
  std::vector<std::optional<TestTensor>> inputs = {TestTensor::f32({}, {0.1f}), TestTensor::i64({}, {t}),
                                                   TestTensor::f32({1}, {1.0f}), TestTensor::f32({1}, {-1.0f})};
  std::vector<OutputSpec> outputs = {f32_out({1})};
  for (float s : state) {
    inputs.push_back(TestTensor::f32({1}, {s}));
    outputs.push_back(f32_out({1}));
  }
  return run_node({std::string("ai.onnx.preview.training.") + op, std::move(attrs), std::move(inputs), outputs});
}

TEST(OptimizerKernels, AdagradStep) {
  NodeRun run = optimizer("Adagrad", 0,
                          {Attribute::Float("norm_coefficient", 0.001f), Attribute::Float("epsilon", 1e-5f),
                           Attribute::Float("decay_factor", 0.1f)},
                          {2.0f});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{1.0576962f}));
  EXPECT_THAT(run.outputs[1].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{2.998001f}));
}

TEST(OptimizerKernels, MomentumStandardAndNesterov) {
  std::vector<Attribute> attrs = {Attribute::Float("alpha", 0.95f), Attribute::Float("beta", 0.1f),
                                  Attribute::Float("norm_coefficient", 0.001f)};
  NodeRun standard = optimizer("Momentum", 0, attrs, {2.0f});  // T = 0: the gradient's factor is 1
  ASSERT_TRUE(standard.ok()) << standard.error;
  EXPECT_THAT(standard.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{0.9099f}));
  EXPECT_THAT(standard.outputs[1].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{0.901f}));
  attrs.push_back(Attribute::String("mode", "nesterov"));
  NodeRun nesterov = optimizer("Momentum", 0, attrs, {2.0f});
  ASSERT_TRUE(nesterov.ok()) << nesterov.error;
  EXPECT_THAT(nesterov.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{1.014305f}));
}

TEST(OptimizerKernels, AdamStep) {
  NodeRun run = optimizer("Adam", 2, {Attribute::Float("norm_coefficient", 0.001f)}, {0.5f, 0.25f});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{0.98354775f}));
  EXPECT_THAT(run.outputs[1].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{0.3501f}));
  EXPECT_THAT(run.outputs[2].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{0.250748f}));
}

TEST(OptimizerKernels, RefuseUnevenGroups) {
  EXPECT_THAT(optimizer("Adam", 1, {}, {0.5f}).error, HasSubstr("in equal numbers"));
}

}  // namespace
}  // namespace plugrt::portable::testing
