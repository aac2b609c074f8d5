// SPDX-License-Identifier: Apache-2.0
// Recurrent graphs: an LSTM or a GRU (either reset form) over a run-time sequence,
// forward, reverse or both ways, with or without a bias and initial states (constant or
// given at run time), some of its outputs, and now and then a chain op on Y. Batches of 1
// to 5, and one graph in ten 17 to 20 (on one thread, oneDNN's LSTM primitive rather than
// its hand-written step); hidden sizes of 1 to 40, across the step's column panels and tiles;
// a third of the inputs scaled up so that the gates saturate.
#include <optional>

#include "random_graph_internal.h"

namespace plugrt::differential::internal {

RandomGraph Generator::run_recurrent() {
  const bool lstm = random_.chance(0.7);
  const int64_t gates = lstm ? 4 : 3;
  const int64_t steps = random_.between(1, 12), features = random_.between(1, 24), hidden = random_.between(1, 40);
  const int64_t batch = random_.chance(0.1) ? random_.between(17, 20) : random_.chance(0.5) ? 1 : random_.between(2, 5);
  const std::vector<std::string> directions = {"forward", "reverse", "bidirectional"};
  const std::string direction = random_.pick(directions);
  const int64_t ways = direction == "bidirectional" ? 2 : 1;

  Value x = model_.input({steps, batch, features});
  if (random_.chance(0.3)) x = node("Mul", {x, model_.constant({}, {random_.real(2.0f, 8.0f)})}, x.shape);
  const Value absent;
  std::vector<Value> inputs = {x, weights({ways, gates * hidden, features}, features),
                               weights({ways, gates * hidden, hidden}, hidden),
                               random_.chance(0.8) ? random_constant({ways, 2 * gates * hidden}, -1.0f, 1.0f) : absent,
                               absent};  // no sequence_lens
  auto state = [&]() -> Value {
    switch (random_.between(0, 2)) {
      case 0: return absent;
      case 1: return random_constant({ways, batch, hidden}, -1.0f, 1.0f);
      default: return model_.input({ways, batch, hidden});
    }
  };
  inputs.push_back(state());
  if (lstm) inputs.push_back(state());
  while (inputs.back().name.empty()) inputs.pop_back();

  std::vector<Attr> attrs = {Attr::i("hidden_size", hidden)};
  if (direction != "forward" || random_.chance(0.5)) attrs.push_back(Attr::s("direction", direction));
  if (!lstm) attrs.push_back(Attr::i("linear_before_reset", random_.between(0, 1)));

  // Y, Y_h and (LSTM) Y_c, each there or not, at least one.
  std::vector<std::optional<Shape>> shapes = {Shape{steps, ways, batch, hidden}, Shape{ways, batch, hidden}};
  if (lstm) shapes.push_back(Shape{ways, batch, hidden});
  std::vector<bool> wanted(shapes.size(), false);
  while (std::find(wanted.begin(), wanted.end(), true) == wanted.end()) {
    for (size_t o = 0; o < wanted.size(); ++o) wanted[o] = random_.chance(0.6);
  }
  for (size_t o = 0; o < shapes.size(); ++o) {
    if (!wanted[o]) shapes[o].reset();
  }
  while (!shapes.back()) shapes.pop_back();

  const std::string op = lstm ? "LSTM" : "GRU";
  graph_.description += (graph_.description.empty() ? "" : " ") + op + shape_text({steps, batch, features}) + "->" +
                        std::to_string(hidden) + " " + direction;
  reduces(features + hidden);
  const std::vector<Value> outputs = model_.node_outputs(op, inputs, shapes, attrs);
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (outputs[o].name.empty()) continue;
    model_.output(o == 0 && random_.chance(0.4) ? chain_op(outputs[o]) : outputs[o]);
  }
  graph_.onnx = model_.serialise();
  return graph_;
}

}  // namespace plugrt::differential::internal
