// The allocate pass: the residual stream's dimensions, each with a label.
//
//   one          1 at every position (biases are read from it, so LayerNorm scales them too);
//                -kAnchor where there is an anchor (below). Models with blocks.
//   bos          the BOS token (the token one-hot's extra value), kTokenAmplitude at BOS. Models
//                with heads (their BOS terms read it).
//   pad          the second entry of an embedding row that has no output value (lower.cpp), where
//                some input rows have one and others not, where no input row reads a token, and
//                in models of no blocks with a categorical output; LayerNorm only (token_rows below).
//   zero         (LayerNorm, models with blocks) never written: reading x_j - x_zero after
//                LayerNorm cancels its mean
//   anchor       (LayerNorm, a numerical value where a block's LayerNorm is read) kAnchor
//                everywhere: steadies the variance;
//                with `one` at -kAnchor the mean stays near 0, so float32 LayerNorm rounds every
//                entry to about 1e-7 of a unit read (a mean near kAnchor/n_embd costs ten times that)
//   tokens:a     the input one-hot, kTokenAmplitude high
//   indices:3    position one-hot
//   hist:2       a categorical s-op's one-hot
//   frac         a numerical s-op
//   hist.scratch a selector width's 1/(w+1) (scratch_level), erased by its MLP
//   hist.unembed, hist.unembed.one, hist.unembed.-one, hist.unembed.balance
//                a count output read from its scratch whose values print as input tokens: the
//                pairs its tied rows write (constructions/scratch_output.cpp)
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

namespace {

// How the token rows keep equal sums (lower.cpp writes them): whether they need `pad`, and how many
// entries of e each row has (Allocation::token_row_entries). An input row is its token's one-hot at
// e and, where the token prints as an output value with a one-hot, that value's dimension at e too.
// - Where no input row has that second entry (hist's counts are no letters; a numerical output),
//   every row is one entry.
// - Where every input row has it (every symbol is an output value: shifts, reverse, sort), every
//   row is two, and a row of an output value that is no input symbol takes its second entry in
//   `zero`, which no position writes (`pad` would be a second such dimension).
// - Where only some input rows have it, the others have it in `pad`.
// BOS's row is its entries in `bos`, which the heads read as it is (lower.cpp simulates BOS); in a
// model without heads, which never reads BOS's stream, in `zero`. A program that never reads the
// tokens (its input rows are `pad`), an embedded map (its rows' own pads) and a model of no blocks
// with a categorical output keep `pad`. Without LayerNorm (and so without `zero`) no mean is taken
// off the stream, and rows of different sums change no logit: no row needs `pad` (an input row is
// its one-hot and any output dimension, BOS's `bos` or nothing).
struct TokenRows {
  bool pad;
  int entries;
};

TokenRows token_rows(const Program& program, const Inference& inference, const Schedule& schedule,
                     const CompileOptions& options, bool tokens_read) {
  const NodeId out = program.output;
  const SopInfo& info = inference.info[size_t(out)];
  if (schedule.blocks == 0) {
    const bool categorical = info.encoding == Encoding::Categorical;
    return {categorical, categorical ? 2 : 1};
  }
  // Without LayerNorm no mean is taken off, so unequal sums change no logit: no row needs `pad`.
  if (!options.layer_norm && !schedule.embedded) return {false, 1};
  if (schedule.embedded || !tokens_read) return {true, 2};
  const bool output_onehot = info.encoding == Encoding::Categorical && schedule.materialised[size_t(out)] &&
                             inference.numbers.of(out) == NumberRole::None;
  if (!output_onehot) return {false, 1};
  const auto tied = std::count_if(options.vocab.begin(), options.vocab.end(), [&](const Value& symbol) {
    return std::any_of(info.values.begin(), info.values.end(),
                       [&](const Value& v) { return to_display(v) == to_display(symbol); });
  });
  if (tied == 0) return {false, 1};
  if (size_t(tied) < options.vocab.size()) return {true, 2};
  return {false, 2};
}

}  // namespace

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
  bool tokens_read = false;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id)
    tokens_read = tokens_read || (inference.info[size_t(id)].needed && program.node(id).kind == NodeKind::Tokens &&
                                  !(schedule.embedded && schedule.embedded->reads(id)));
  const TokenRows rows = token_rows(program, inference, schedule, options, tokens_read);
  if (rows.pad) a.pad = add("pad");
  a.token_row_entries = rows.entries;
  // The last residual stage a block's LayerNorm is read at: 2b by the heads of blocks.b (ln_1),
  // 2b+1 by its MLP (ln_2); -1 where nothing is read. (The schedule has heads and mlps for each block.)
  int last_read = -1;
  for (size_t b = 0; b < schedule.heads.size(); ++b) {
    if (!schedule.heads[b].empty()) last_read = int(2 * b);
    if (!schedule.mlps[b].empty()) last_read = int(2 * b + 1);
  }
  // Whether a numerical value (a width's 1/(w+1), a numerical s-op) is in the residual when a
  // block's LayerNorm is read. One written after the last read (a mean in the last attention with
  // no MLP after it; an output count the unembedding reads from its scratch) meets only ln_f, which
  // a numerical output does not pass and which scales every logit of a categorical one alike;
  // it needs no anchor where every embedding row has the same moments (the tokens' one-hot beside
  // BOS's `bos`). Where the tokens are not read, an input row is `pad` at 2e and BOS's `bos` and
  // `pad` at e: the anchor's variance is what lets a width's head weigh BOS as it weighs a key.
  bool numerics = false, numerics_read = false;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    const SopInfo& info = inference.info[size_t(id)];
    if (!info.needed) continue;
    int written = -1;
    if (counts_keys(program.node(id)) &&
        (inference.numbers.of(id) == NumberRole::None || inference.numbers.of(id) == NumberRole::WidthNumber))
      written = 2 * schedule.block_of[size_t(id)] - 1;
    if (!program.node(id).is_selector() && info.encoding == Encoding::Numerical && schedule.materialised[id])
      written = written < 0 ? schedule.ready[size_t(id)] : std::min(written, schedule.ready[size_t(id)]);
    if (written < 0) continue;
    numerics = true;
    numerics_read = numerics_read || written <= last_read;
  }
  if (options.layer_norm && blocks) {
    a.zero = add("zero");
    // (The anchor steadies what the blocks' LayerNorms read; a model of no blocks, which has none,
    // reads its numerical output before ln_f.)
    if (numerics_read || (numerics && !(tokens_read && heads))) {
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
    if (schedule.embedded && schedule.embedded->reads(id)) continue;
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
    // A count read from its scratch whose values print as input tokens: the pairs the tied rows
    // need (constructions/scratch_output.cpp).
    if (id == program.output && schedule.output_from_scratch && some_value_prints_as_symbol(info.values, options)) {
      a.scratch_partner = add(name + ".unembed");
      a.scratch_constant = add(name + ".unembed.one");
      a.scratch_constant_partner = add(name + ".unembed.-one");
      a.scratch_balance = add(name + ".unembed.balance");
    }
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
      if (id == program.output && schedule.embedded && schedule.embedded->paired()) {
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
