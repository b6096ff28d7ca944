// The allocate pass: the residual stream's dimensions, each with a label.
//
//   one          1 at every position (biases are read from it, so LayerNorm scales them too);
//                -kAnchor where there is an anchor (below). Models with blocks.
//   bos          the BOS token (the token one-hot's extra value), kTokenAmplitude at BOS. Models
//                with heads (their BOS terms read it).
//   pad          the second entry of every embedding row that has no output value (assemble.cpp).
//                Models with blocks, or with a categorical output.
//   zero         (LayerNorm, models with blocks) never written: reading x_j - x_zero after
//                LayerNorm cancels its mean
//   anchor       (LayerNorm, numerical values present) kAnchor everywhere: steadies the variance;
//                with `one` at -kAnchor the mean stays near 0, so float32 LayerNorm rounds every
//                entry to about 1e-7 of a unit read (a mean near kAnchor/n_embd costs ten times that)
//   tokens:a     the input one-hot, kTokenAmplitude high
//   indices:3    position one-hot
//   hist:2       a categorical s-op's one-hot
//   frac         a numerical s-op
//   hist.scratch a selector width's 1/(w+1) (scratch_level), erased by its MLP
//   position.high:2, position.low:5
//                an index's two digits i / B and i % B, one-hots in the position embedding, for
//                prefix means' heads (constructions/prefix_mean.cpp)
//   position.ln  ln(i + 1/2) by position, balanced (.ln .-ln .y .-y): BOS's score in width steps' heads
//   indices.x    a number group (indices, length, widths read by numerical selectors): .x .-x .x2 .-x2
//                .y .-y, balanced so that LayerNorm sees the same moments at every position
#include "compiler/ir.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace raspc::compiler {

Allocation allocate(const Program& program, const Inference& inference, const Schedule& schedule,
                    const CompileOptions& options) {
  Allocation a;
  auto add = [&](std::string label) {
    a.labels.push_back(std::move(label));
    return int(a.labels.size()) - 1;
  };
  // Each bookkeeping dimension only where something reads it. A model of no blocks (its output
  // an embedded map) reads nothing but the output: `pad` stays for a categorical one, whose token
  // rows it keeps at equal sums (lower.cpp); `one` (biases), `zero` (LayerNorm's mean) and `bos`
  // go. `bos` is read by heads alone (a model of maps only has none).
  const bool blocks = schedule.blocks > 0;
  bool heads = false;
  for (const auto& block : schedule.heads) heads = heads || !block.empty();
  if (blocks) a.one = add("one");
  if (heads) a.bos = add("bos");
  if (blocks || inference.info[size_t(program.output)].encoding == Encoding::Categorical) a.pad = add("pad");
  bool numerics = false;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    const SopInfo& info = inference.info[size_t(id)];
    if (!info.needed) continue;
    if (counts_keys(program.node(id)) &&
        (inference.numbers.of(id) == NumberRole::None || inference.numbers.of(id) == NumberRole::WidthNumber))
      numerics = true;
    if (!program.node(id).is_selector() && info.encoding == Encoding::Numerical && schedule.materialised[id])
      numerics = true;
  }
  if (options.layer_norm && blocks) {
    a.zero = add("zero");
    // (The anchor steadies what the blocks' LayerNorms read; a model of no blocks, which has none,
    // reads its numerical output before ln_f.)
    if (numerics) {
      a.anchor = add("anchor");
      a.one_value = -kAnchor;
    }
  }
  bool log_position = false;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id)
    log_position = log_position || (inference.info[size_t(id)].needed &&
                                   is_construction(program.node(id), WidthHeadKind::WidthStep));
  if (log_position) {
    for (const char* part : {"position.ln", "position.-ln", "position.y", "position.-y"})
      a.log_position.push_back(add(part));
    a.log_position_scale = std::max(1.0, std::log(double(options.max_len) + 0.5));
  }
  if (inference.numbers.digit_base > 0) {
    for (int j = 0; j < inference.numbers.digit_count; ++j) a.digit_high.push_back(add("position.high:" + std::to_string(j)));
    for (int b = 0; b < inference.numbers.digit_base; ++b) a.digit_low.push_back(add("position.low:" + std::to_string(b)));
  }
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    const SopInfo& info = inference.info[size_t(id)];
    if (!info.needed) continue;
    const Node& node = program.node(id);
    std::string name = program.label(id);
    // An embedded map reads its source (the tokens or indices) as it is compiled; nothing in the
    // model does, so the source gets no dimensions (an input row without tokens is {pad, 2e}, like
    // a program's that never reads them: lower.cpp).
    if (schedule.embedded && id == schedule.embedded->source) continue;
    if (node.kind == NodeKind::Tokens) {
      std::vector<int> dims;
      for (const Value& v : info.values) dims.push_back(add("tokens:" + to_display(v)));
      a.tokens[id] = dims;
      continue;
    }
    NumberRole role = inference.numbers.of(id);
    // Read only through its number group or its digits (below): no one-hot.
    if (node.kind == NodeKind::Indices && !inference.numbers.indices_onehot && role == NumberRole::None) continue;
    if (role == NumberRole::Indices || role == NumberRole::LastIndex || role == NumberRole::WidthNumber) {
      std::vector<int> dims;
      for (const char* part : {".x", ".-x", ".x2", ".-x2", ".y", ".-y"}) dims.push_back(add(name + part));
      a.number[id] = dims;
      if (role == NumberRole::Indices && !inference.numbers.indices_onehot) continue;
    }
    if (role == NumberRole::WidthNumber && counts_keys(node)) a.scratch[id] = add(name + ".scratch");
    if (role != NumberRole::None && role != NumberRole::Indices) continue;
    if (counts_keys(node)) a.scratch[id] = add(name + ".scratch");
    if (!schedule.materialised[id]) continue;
    if (info.encoding == Encoding::Numerical) {
      a.numeric[id] = add(name);
    } else {
      // The output is read as tokens, so output values that print alike (the number 0 and the
      // string "0") are one token and share one dimension: the tied unembedding can read only
      // one dimension per token.
      std::vector<int> dims;
      std::map<std::string, int> dim_of_text;
      for (const Value& v : info.values) {
        std::string text = to_display(v);
        if (id != program.output) {
          dims.push_back(add(name + ":" + text));
          continue;
        }
        auto [slot, added] = dim_of_text.try_emplace(text, -1);
        if (added) slot->second = add(name + ":" + text);
        dims.push_back(slot->second);
      }
      a.onehot[id] = dims;
      // An embedded map with tied tokens pairs each output dimension with a partner (alike where
      // the values print alike).
      if (id == program.output && schedule.embedded && !schedule.embedded->tied_levels.empty()) {
        std::map<int, int> partner;
        for (size_t i = 0; i < dims.size(); ++i) {
          auto [slot, added] = partner.try_emplace(dims[i], -1);
          if (added) slot->second = add(name + ".unembed:" + to_display(info.values[i]));
          a.unembed.push_back(slot->second);
        }
      }
    }
  }
  return a;
}

std::vector<double> Allocation::log_position_group(int index) const {
  const double u = index < 0 ? 0.0 : std::log(double(index) + 0.5) / log_position_scale;
  const double y = std::sqrt(std::max(0.0, 1.0 - u * u));
  return {u, -u, y, -y};
}

}  // namespace raspc::compiler
