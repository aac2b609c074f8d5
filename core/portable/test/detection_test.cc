// SPDX-License-Identifier: Apache-2.0
// NonMaxSuppression (detection.cc) against ONNX's examples and hand-computed cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

OutputSpec selected(int64_t rows) { return {DType::kInt64, {rows, 3}}; }

/// ONNX's example boxes, [y1, x1, y2, x2]: 0 to 2 overlap, 3 and 4 overlap, 5 stands alone.
TestTensor example_boxes() {
  return TestTensor::f32(
      {1, 6, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101});
}
TestTensor example_scores() { return TestTensor::f32({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f}); }

NodeSpec nms(std::vector<std::optional<TestTensor>> inputs, int64_t rows, std::vector<Attribute> attributes = {}) {
  return NodeSpec{"NonMaxSuppression", std::move(attributes), std::move(inputs), {selected(rows)}, 11};
}

TestTensor max_boxes(int64_t n) { return TestTensor::i64({1}, {n}); }
TestTensor threshold(float t) { return TestTensor::f32({1}, {t}); }

TEST(NonMaxSuppressionKernel, SuppressesByIouInScoreOrder) {
  NodeRun run = run_node(nms({example_boxes(), example_scores(), max_boxes(3), threshold(0.5f), threshold(0)}, 3));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(0, 0, 3, 0, 0, 0, 0, 0, 5));
}

TEST(NonMaxSuppressionKernel, KeepsOnlyScoresAboveTheThresholdStrictly) {
  // Box 1 scores exactly 0.75: not above the threshold, so it is not a candidate.
  NodeRun run = run_node(nms({example_boxes(), example_scores(), max_boxes(6), threshold(1), threshold(0.75f)}, 2));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(0, 0, 3, 0, 0, 0));
  // Without a score threshold every box is a candidate; IoU threshold 1 suppresses none.
  NodeRun all = run_node(nms({example_boxes(), example_scores(), max_boxes(6), threshold(1)}, 6));
  ASSERT_TRUE(all.ok()) << all.error;
  EXPECT_THAT(all.outputs[0].ints(), ElementsAre(0, 0, 3, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0, 0, 5));
}

TEST(NonMaxSuppressionKernel, TakesCornersInEitherOrder) {
  const TestTensor flipped = TestTensor::f32(
      {1, 6, 4}, {1, 1, 0, 0, 0, 0.1f, 1, 1.1f, 0, 0.9f, 1, -0.1f, 0, 10, 1, 11, 1, 10.1f, 0, 11.1f, 1, 101, 0, 100});
  NodeRun run = run_node(nms({flipped, example_scores(), max_boxes(3), threshold(0.5f), threshold(0)}, 3));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(0, 0, 3, 0, 0, 0, 0, 0, 5));
}

TEST(NonMaxSuppressionKernel, ReadsCenterPointBoxes) {
  const TestTensor centers = TestTensor::f32({1, 6, 4}, {0.5f, 0.5f,  1, 1, 0.5f, 0.6f,  1, 1, 0.5f, 0.4f,   1, 1,
                                                         0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1});
  NodeRun run = run_node(nms({centers, example_scores(), max_boxes(3), threshold(0.5f), threshold(0)}, 3,
                             {Attribute::Int("center_point_box", 1)}));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(0, 0, 3, 0, 0, 0, 0, 0, 5));
}

TEST(NonMaxSuppressionKernel, TiesInScoreGoToTheLowerIndex) {
  // Identical boxes and scores: the first one is kept.
  std::vector<float> same;
  for (int k = 0; k < 5; ++k) same.insert(same.end(), {0, 0, 1, 1});
  NodeRun identical =
      run_node(nms({TestTensor::f32({1, 5, 4}, same), TestTensor::f32({1, 1, 5}, std::vector<float>(5, 0.9f)),
                    max_boxes(5), threshold(0.5f)},
                   1));
  ASSERT_TRUE(identical.ok()) << identical.error;
  EXPECT_THAT(identical.outputs[0].ints(), ElementsAre(0, 0, 0));
  // Apart from each other: equal scores come out in index order.
  const TestTensor apart = TestTensor::f32({1, 4, 4}, {0, 0, 1, 1, 0, 2, 1, 3, 0, 4, 1, 5, 0, 6, 1, 7});
  NodeRun order =
      run_node(nms({apart, TestTensor::f32({1, 1, 4}, {0.5f, 0.9f, 0.5f, 0.9f}), max_boxes(4), threshold(0.5f)}, 4));
  ASSERT_TRUE(order.ok()) << order.error;
  EXPECT_THAT(order.outputs[0].ints(), ElementsAre(0, 0, 1, 0, 0, 3, 0, 0, 0, 0, 0, 2));
}

TEST(NonMaxSuppressionKernel, BoxesOfZeroAreaNeverSuppress) {
  // Two identical boxes of zero height, then a box inside a proper one: with IoU threshold
  // 0 any overlap suppresses, but a zero-area box overlaps nothing.
  const TestTensor boxes = TestTensor::f32({1, 4, 4}, {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 2, 2, 0.5f, 0.5f, 1, 1});
  NodeRun run =
      run_node(nms({boxes, TestTensor::f32({1, 1, 4}, {0.9f, 0.8f, 0.7f, 0.6f}), max_boxes(4), threshold(0)}, 3));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(0, 0, 0, 0, 0, 1, 0, 0, 2));
}

TEST(NonMaxSuppressionKernel, SelectsNoneWithoutAPositiveMaximum) {
  for (int64_t n : {int64_t{0}, int64_t{-2}}) {
    NodeRun run = run_node(nms({example_boxes(), example_scores(), max_boxes(n), threshold(0.5f)}, 0));
    ASSERT_TRUE(run.ok()) << run.error;
    EXPECT_THAT(run.outputs[0].ints(), IsEmpty());
  }
  // Absent, max_output_boxes_per_class is 0.
  NodeRun absent = run_node(nms({example_boxes(), example_scores()}, 0));
  ASSERT_TRUE(absent.ok()) << absent.error;
  EXPECT_THAT(absent.outputs[0].ints(), IsEmpty());
}

TEST(NonMaxSuppressionKernel, LimitsEachClassOfEachBatch) {
  // Two batches (the second's boxes are the first's), two classes with reversed scores.
  std::vector<float> boxes = example_boxes().floats();
  const std::vector<float> one = boxes;
  boxes.insert(boxes.end(), one.begin(), one.end());
  const std::vector<float> up = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};
  const std::vector<float> down = {0.3f, 0.5f, 0.95f, 0.6f, 0.75f, 0.9f};
  std::vector<float> scores;
  for (const auto* part : {&up, &down, &down, &up}) scores.insert(scores.end(), part->begin(), part->end());
  NodeRun run = run_node(nms({TestTensor::f32({2, 6, 4}, boxes), TestTensor::f32({2, 2, 6}, scores), max_boxes(2),
                              threshold(0.5f), threshold(0)},
                             8));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(0, 0, 3, 0, 0, 0,  // batch 0, class 0
                                                 0, 1, 2, 0, 1, 5,  // batch 0, class 1
                                                 1, 0, 2, 1, 0, 5,  // batch 1, class 0
                                                 1, 1, 3, 1, 1, 0));
}

TEST(NonMaxSuppressionKernel, FailsTheCallWhenTheCountDiffersFromTheCompiledLength) {
  NodeRun run = run_node(nms({example_boxes(), example_scores(), max_boxes(3), threshold(0.5f), threshold(0)}, 2));
  EXPECT_THAT(run.error, HasSubstr("selected 3 boxes, but its output (selected_indices) was compiled for 2"));
}

TEST(NonMaxSuppressionKernel, RefusesBadShapesAttributesAndThresholds) {
  NodeRun boxes = run_node(nms({TestTensor::f32({1, 2, 3}, std::vector<float>(6)), example_scores()}, 0));
  EXPECT_THAT(boxes.error, HasSubstr("must have shape [batches, boxes, 4]"));
  NodeRun scores = run_node(nms({example_boxes(), TestTensor::f32({1, 1, 5}, std::vector<float>(5))}, 0));
  EXPECT_THAT(scores.error, HasSubstr("the scores (input 1) must have shape [1, classes, 6]"));
  NodeRun center = run_node(nms({example_boxes(), example_scores()}, 0, {Attribute::Int("center_point_box", 2)}));
  EXPECT_THAT(center.error, HasSubstr("center_point_box must be 0 or 1"));
  NodeRun rows = run_node(nms({example_boxes(), example_scores()}, 7));
  EXPECT_THAT(rows.error, HasSubstr("at most 6 boxes can be selected"));
  NodeRun iou = run_node(nms({example_boxes(), example_scores(), max_boxes(3), threshold(1.5f)}, 0));
  EXPECT_THAT(iou.error, HasSubstr("iou_threshold 1.5 is outside [0, 1]"));
}

}  // namespace
}  // namespace plugrt::portable::testing
