// SPDX-License-Identifier: Apache-2.0
// RNN, GRU and LSTM against the ONNX equations worked by hand for one hidden unit, and
// the layout and direction forms against each other.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr float kTolerance = 1e-5f;

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

const std::vector<float> kX = {0.5f, -1.0f, 2.0f};  // three steps, batch 1, one feature

/// RNN over kX with one hidden unit: W 0.8, R 0.5, Wb 0.1, Rb 0.2.
NodeSpec scalar_rnn(const std::string& direction = "forward") {
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  return {"RNN",
          {Attribute::String("direction", direction), Attribute::Int("hidden_size", 1)},
          {TestTensor::f32({3, 1, 1}, kX), TestTensor::f32({dirs, 1, 1}, std::vector<float>(dirs, 0.8f)),
           TestTensor::f32({dirs, 1, 1}, std::vector<float>(dirs, 0.5f)),
           TestTensor::f32({dirs, 2},
                           dirs == 1 ? std::vector<float>{0.1f, 0.2f} : std::vector<float>{0.1f, 0.2f, 0.1f, 0.2f})},
          {f32_out({3, dirs, 1, 1}), f32_out({dirs, 1, 1})},
          14};
}

/// h_t = tanh(0.8 x_t + 0.5 h_{t-1} + 0.3) over the steps in `order`.
std::vector<float> rnn_by_hand(const std::vector<int>& order) {
  std::vector<float> y(kX.size());
  float h = 0;
  for (int t : order) y[static_cast<size_t>(t)] = h = std::tanh(0.8f * kX[static_cast<size_t>(t)] + 0.5f * h + 0.3f);
  return y;
}

TEST(RnnKernel, ForwardFollowsTheEquation) {
  NodeRun run = run_node(scalar_rnn());
  ASSERT_TRUE(run.ok()) << run.error;
  const std::vector<float> y = rnn_by_hand({0, 1, 2});
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), y));
  EXPECT_THAT(run.outputs[1].floats(), Pointwise(FloatNear(kTolerance), {y[2]}));
}

TEST(RnnKernel, ReverseRunsFromTheLastStep) {
  NodeRun run = run_node(scalar_rnn("reverse"));
  ASSERT_TRUE(run.ok()) << run.error;
  const std::vector<float> y = rnn_by_hand({2, 1, 0});
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), y));
  EXPECT_THAT(run.outputs[1].floats(), Pointwise(FloatNear(kTolerance), {y[0]}));
}

TEST(RnnKernel, BidirectionalInterleavesBothDirections) {
  NodeRun run = run_node(scalar_rnn("bidirectional"));
  ASSERT_TRUE(run.ok()) << run.error;
  const std::vector<float> forward = rnn_by_hand({0, 1, 2}), reverse = rnn_by_hand({2, 1, 0});
  // Y is [seq, directions, batch, hidden].
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {forward[0], reverse[0], forward[1], reverse[1],
                                                                         forward[2], reverse[2]}));
  EXPECT_THAT(run.outputs[1].floats(), Pointwise(FloatNear(kTolerance), {forward[2], reverse[0]}));
}

TEST(RnnKernel, SequenceLengthsEndEachSequenceAndZeroTheRest) {
  // Batch 2: the first sequence is kX, the second only its first step (x = 3).
  NodeSpec spec = scalar_rnn("bidirectional");
  spec.inputs[0] = TestTensor::f32({3, 2, 1}, {0.5f, 3.0f, -1.0f, 9.0f, 2.0f, 9.0f});
  spec.inputs.push_back(TestTensor::i32({2}, {3, 1}));
  spec.outputs = {f32_out({3, 2, 2, 1}), f32_out({2, 2, 1})};
  NodeRun run = run_node(spec);
  ASSERT_TRUE(run.ok()) << run.error;
  const std::vector<float> forward = rnn_by_hand({0, 1, 2}), reverse = rnn_by_hand({2, 1, 0});
  const float short_h = std::tanh(0.8f * 3.0f + 0.3f);  // both directions see only x = 3
  EXPECT_THAT(run.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), {forward[0], short_h, reverse[0], short_h,  // t = 0
                                                forward[1], 0.0f, reverse[1], 0.0f,        // t = 1
                                                forward[2], 0.0f, reverse[2], 0.0f}));     // t = 2
  EXPECT_THAT(run.outputs[1].floats(), Pointwise(FloatNear(kTolerance), {forward[2], short_h, reverse[0], short_h}));
}

TEST(RnnKernel, StartsFromTheInitialState) {
  NodeSpec spec = scalar_rnn();
  spec.inputs.push_back(std::nullopt);  // sequence_lens
  spec.inputs.push_back(TestTensor::f32({1, 1, 1}, {0.4f}));
  NodeRun run = run_node(spec);
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats()[0], FloatNear(std::tanh(0.4f + 0.5f * 0.4f + 0.3f), kTolerance));
}

TEST(RnnKernel, AppliesTheNamedActivationWithItsAlphaAndBetaAndClips) {
  NodeSpec spec = scalar_rnn();
  spec.attributes.push_back(Attribute::String("activations", "Affine"));
  spec.attributes.push_back(Attribute::Floats("activation_alpha", {2.0f}));
  spec.attributes.push_back(Attribute::Floats("activation_beta", {0.5f}));
  spec.attributes.push_back(Attribute::Float("clip", 1.0f));
  NodeRun run = run_node(spec);
  ASSERT_TRUE(run.ok()) << run.error;
  float h = 0;
  std::vector<float> y;
  for (float x : kX) {
    const float pre = std::min(1.0f, std::max(-1.0f, 0.8f * x + 0.5f * h + 0.3f));
    y.push_back(h = 2.0f * pre + 0.5f);
  }
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), y));
}

TEST(RnnKernel, BatchFirstLayoutMatchesTheDefaultLayout) {
  // seq 3, batch 2, input 2, hidden 3, both directions, with initial state.
  const std::vector<float> x = random_floats(12, 1), w = random_floats(12, 2), r = random_floats(18, 3),
                           b = random_floats(12, 4), h0 = random_floats(12, 5);
  auto spec_for = [&](int64_t layout) {
    std::vector<float> x_in = x, h0_in = h0;
    if (layout == 1) {  // [seq, batch, input] -> [batch, seq, input]; [dirs, batch, h] -> [batch, dirs, h]
      for (int t = 0; t < 3; ++t) {
        for (int n = 0; n < 2; ++n) {
          for (int i = 0; i < 2; ++i) x_in[(n * 3 + t) * 2 + i] = x[(t * 2 + n) * 2 + i];
        }
      }
      for (int d = 0; d < 2; ++d) {
        for (int n = 0; n < 2; ++n) {
          for (int k = 0; k < 3; ++k) h0_in[(n * 2 + d) * 3 + k] = h0[(d * 2 + n) * 3 + k];
        }
      }
    }
    const std::vector<int64_t> x_shape = layout == 1 ? std::vector<int64_t>{2, 3, 2} : std::vector<int64_t>{3, 2, 2};
    const std::vector<int64_t> state = layout == 1 ? std::vector<int64_t>{2, 2, 3} : std::vector<int64_t>{2, 2, 3};
    return NodeSpec{
        "RNN",
        {Attribute::String("direction", "bidirectional"), Attribute::Int("layout", layout)},
        {TestTensor::f32(x_shape, x_in), TestTensor::f32({2, 3, 2}, w), TestTensor::f32({2, 3, 3}, r),
         TestTensor::f32({2, 6}, b), std::nullopt, TestTensor::f32(state, h0_in)},
        {f32_out(layout == 1 ? std::vector<int64_t>{2, 3, 2, 3} : std::vector<int64_t>{3, 2, 2, 3}), f32_out(state)},
        14};
  };
  NodeRun seq_first = run_node(spec_for(0));
  NodeRun batch_first = run_node(spec_for(1));
  ASSERT_TRUE(seq_first.ok()) << seq_first.error;
  ASSERT_TRUE(batch_first.ok()) << batch_first.error;
  const std::vector<float> y0 = seq_first.outputs[0].floats(), y1 = batch_first.outputs[0].floats();
  const std::vector<float> h0_out = seq_first.outputs[1].floats(), h1_out = batch_first.outputs[1].floats();
  for (int t = 0; t < 3; ++t) {
    for (int d = 0; d < 2; ++d) {
      for (int n = 0; n < 2; ++n) {
        for (int k = 0; k < 3; ++k) {
          EXPECT_FLOAT_EQ(y1[((n * 3 + t) * 2 + d) * 3 + k], y0[((t * 2 + d) * 2 + n) * 3 + k]);
          if (t == 0) {
            EXPECT_FLOAT_EQ(h1_out[(n * 2 + d) * 3 + k], h0_out[(d * 2 + n) * 3 + k]);
          }
        }
      }
    }
  }
}

TEST(RnnKernel, RefusesAnUnknownDirectionActivationOrShape) {
  NodeSpec direction = scalar_rnn();
  direction.attributes[0] = Attribute::String("direction", "sideways");
  EXPECT_THAT(run_node(direction).error, HasSubstr("direction 'sideways' is not forward, reverse or bidirectional"));
  NodeSpec activation = scalar_rnn();
  activation.attributes.push_back(Attribute::String("activations", "Gelu"));
  EXPECT_THAT(run_node(activation).error, HasSubstr("activation 'Gelu' is not one the recurrent ops define"));
  NodeSpec hidden = scalar_rnn();
  hidden.attributes[1] = Attribute::Int("hidden_size", 2);
  EXPECT_THAT(run_node(hidden).error, HasSubstr("hidden_size 2 does not match R [1, 1, 1]"));
  NodeSpec weights = scalar_rnn();
  weights.inputs[1] = TestTensor::f32({1, 2, 1}, {1, 1});
  EXPECT_THAT(run_node(weights).error, HasSubstr("W has shape [1, 2, 1]; expected [1, 1, 1]"));
}

// ---- GRU --------------------------------------------------------------------------------

/// GRU over kX, one hidden unit, initial state 0.3. Gates z, r, h: W {0.5, -0.4, 0.9},
/// R {0.3, 0.8, -0.6}, Wb {0.1, 0.2, 0.3}, Rb {-0.1, 0.05, 0.2}.
NodeSpec scalar_gru(int64_t linear_before_reset) {
  return {
      "GRU",
      {Attribute::Int("hidden_size", 1), Attribute::Int("linear_before_reset", linear_before_reset)},
      {TestTensor::f32({3, 1, 1}, kX), TestTensor::f32({1, 3, 1}, {0.5f, -0.4f, 0.9f}),
       TestTensor::f32({1, 3, 1}, {0.3f, 0.8f, -0.6f}), TestTensor::f32({1, 6}, {0.1f, 0.2f, 0.3f, -0.1f, 0.05f, 0.2f}),
       std::nullopt, TestTensor::f32({1, 1, 1}, {0.3f})},
      {f32_out({3, 1, 1, 1}), f32_out({1, 1, 1})}};
}

std::vector<float> gru_by_hand(bool linear_before_reset) {
  std::vector<float> y;
  float h = 0.3f;
  for (float x : kX) {
    const float z = sigmoid(0.5f * x + 0.3f * h + 0.1f - 0.1f);
    const float r = sigmoid(-0.4f * x + 0.8f * h + 0.2f + 0.05f);
    const float hh = linear_before_reset ? std::tanh(0.9f * x + r * (-0.6f * h + 0.2f) + 0.3f)
                                         : std::tanh(0.9f * x + -0.6f * (r * h) + 0.2f + 0.3f);
    y.push_back(h = (1 - z) * hh + z * h);
  }
  return y;
}

TEST(GruKernel, ResetsBeforeTheRecurrentProduct) {
  NodeRun run = run_node(scalar_gru(0));
  ASSERT_TRUE(run.ok()) << run.error;
  const std::vector<float> y = gru_by_hand(false);
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), y));
  EXPECT_THAT(run.outputs[1].floats(), Pointwise(FloatNear(kTolerance), {y[2]}));
}

TEST(GruKernel, LinearBeforeResetResetsTheProduct) {
  NodeRun run = run_node(scalar_gru(1));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), gru_by_hand(true)));
}

// ---- LSTM -------------------------------------------------------------------------------

/// LSTM over kX, one hidden unit. Gates i, o, f, c: W {0.5, -0.3, 0.8, 0.7},
/// R {0.2, 0.4, -0.5, 0.6}, Wb {0.1, 0, 0.2, -0.1}, Rb 0; peepholes i, o, f {0.3, -0.2, 0.1};
/// initial h 0.1 and c -0.2.
NodeSpec scalar_lstm() {
  return {
      "LSTM",
      {Attribute::Int("hidden_size", 1)},
      {TestTensor::f32({3, 1, 1}, kX), TestTensor::f32({1, 4, 1}, {0.5f, -0.3f, 0.8f, 0.7f}),
       TestTensor::f32({1, 4, 1}, {0.2f, 0.4f, -0.5f, 0.6f}),
       TestTensor::f32({1, 8}, {0.1f, 0.0f, 0.2f, -0.1f, 0, 0, 0, 0}), std::nullopt, TestTensor::f32({1, 1, 1}, {0.1f}),
       TestTensor::f32({1, 1, 1}, {-0.2f}), TestTensor::f32({1, 3}, {0.3f, -0.2f, 0.1f})},
      {f32_out({3, 1, 1, 1}), f32_out({1, 1, 1}), f32_out({1, 1, 1})}};
}

TEST(LstmKernel, FollowsTheEquationWithPeepholes) {
  NodeRun run = run_node(scalar_lstm());
  ASSERT_TRUE(run.ok()) << run.error;
  std::vector<float> y;
  float h = 0.1f, c = -0.2f;
  for (float x : kX) {
    const float i = sigmoid(0.5f * x + 0.2f * h + 0.3f * c + 0.1f);
    const float f = sigmoid(0.8f * x - 0.5f * h + 0.1f * c + 0.2f);
    const float candidate = std::tanh(0.7f * x + 0.6f * h - 0.1f);
    c = f * c + i * candidate;
    const float o = sigmoid(-0.3f * x + 0.4f * h - 0.2f * c);
    y.push_back(h = o * std::tanh(c));
  }
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), y));
  EXPECT_THAT(run.outputs[1].floats(), Pointwise(FloatNear(kTolerance), {h}));
  EXPECT_THAT(run.outputs[2].floats(), Pointwise(FloatNear(kTolerance), {c}));
}

TEST(LstmKernel, InputForgetCouplesTheForgetGate) {
  NodeSpec spec = scalar_lstm();
  spec.attributes.push_back(Attribute::Int("input_forget", 1));
  spec.inputs.resize(5);  // no initial state, no peepholes
  NodeRun run = run_node(spec);
  ASSERT_TRUE(run.ok()) << run.error;
  float h = 0, c = 0;
  for (float x : kX) {
    const float i = sigmoid(0.5f * x + 0.2f * h + 0.1f);
    c = (1 - i) * c + i * std::tanh(0.7f * x + 0.6f * h - 0.1f);
    h = sigmoid(-0.3f * x + 0.4f * h) * std::tanh(c);
  }
  EXPECT_THAT(run.outputs[1].floats(), Pointwise(FloatNear(kTolerance), {h}));
}

TEST(LstmKernel, WritesOnlyTheOutputsAsked) {
  NodeSpec spec = scalar_lstm();
  spec.outputs = {f32_out({3, 1, 1, 1})};
  NodeRun run = run_node(spec);
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_EQ(run.outputs.size(), 1u);
}

TEST(LstmKernel, RefusesAPeepholeOfTheWrongShapeAndAnInt64Length) {
  NodeSpec peephole = scalar_lstm();
  peephole.inputs[7] = TestTensor::f32({1, 4}, {0, 0, 0, 0});
  EXPECT_THAT(run_node(peephole).error, HasSubstr("P has shape [1, 4]; expected [1, 3]"));
  NodeSpec lengths = scalar_lstm();
  lengths.inputs[4] = TestTensor::i64({1}, {3});
  EXPECT_THAT(run_node(lengths).error, HasSubstr("input 4 is int64, expected int32"));
}

TEST(LstmKernel, RefusesTheWrongNumberOfActivations) {
  NodeSpec spec = scalar_lstm();
  spec.attributes.push_back(Attribute::String("activations", "Sigmoid,Tanh"));
  EXPECT_THAT(run_node(spec).error, HasSubstr("activations lists 2 functions; 3 are needed (3 per direction)"));
}

}  // namespace
}  // namespace plugrt::portable::testing
