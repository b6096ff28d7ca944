// A map folded into the embeddings: an output that is a map (categorical or numerical) of the
// tokens alone, of the positions alone (`indices` and maps of it) or of nothing is a table over the
// token or the position, so the token (position) embedding's row writes its value (a categorical
// one's one-hot, a numerical one's number: below) directly: no MLP, and a program that
// needs nothing else is a model of no blocks (HF's GPT-2 takes n_layer 0; the exports that need a
// block get one of zeros, runtime/export/).
//
// Positions: wpe isn't tied to anything, so its rows write the one-hot at 1 exactly as an MLP would
// and the tied unembedding reads it as it reads any output. Nothing in the model reads the
// positions' one-hot then, so indices get no dimensions (allocate.cpp).
//
// Tokens: nothing in the model reads them (the map did, as it was compiled), so they get no
// dimensions (allocate.cpp) and an input row is {pad, 2e} (e = kTokenAmplitude) plus, here, the
// map's one-hot at 1. wte is also the unembedding, so what an input row writes is read back as that
// token's logit: every input token u with F(u) = F(t) scores 4e^2 + 1 at a position holding t,
// above an output token's usual {pad e, out e} (2e^2 + e). So each output-only token's row writes
// its output dimension at 1 + e instead of e: the right output scores 2e^2 + 1 + e, a margin of
// e - 2e^2 over every input token (as an MLP-written output's), and every row still sums to the
// same 1 + 2e, so ln_f's mean moves every logit alike. Output values that are also input symbols
// have input rows, which cannot carry 1 + e; such a map stays an MLP.
//
// A numerical output is read off the residual stream before ln_f, not through the unembedding, so
// its map's row writes the value itself, F(t) or F(i), in the output's one dimension: exact up to
// float32's rounding of the number. The tied unembedding reads that dimension too, but nothing
// reads a numerical model's logits.
#include <optional>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {

std::optional<EmbeddedMap> embedded_map(const Program& program, const Inference& inference,
                                        const CompileOptions& options) {
  const NodeId id = program.output;
  const SopInfo& info = inference.info[size_t(id)];
  if (program.node(id).kind != NodeKind::Elementwise) return std::nullopt;
  const bool numerical = info.encoding == Encoding::Numerical;
  // A numerical output's rows write the values the map takes, so they must be known (an affine
  // map without a finite value set stays an MLP).
  if (numerical && (!info.values_known || info.values.empty())) return std::nullopt;
  std::vector<NodeId> support = support_of(program, id, &inference.cut);
  if (support.empty()) return EmbeddedMap{EmbeddedMap::Over::Positions, -1};
  if (support.size() != 1) return std::nullopt;
  const NodeKind source = program.node(support[0]).kind;
  if (source == NodeKind::Indices) return EmbeddedMap{EmbeddedMap::Over::Positions, support[0]};
  if (source != NodeKind::Tokens) return std::nullopt;
  if (numerical) return EmbeddedMap{EmbeddedMap::Over::Tokens, support[0]};
  for (const Value& v : info.values)
    for (const Value& symbol : options.vocab)
      if (to_display(v) == to_display(symbol)) return std::nullopt;
  return EmbeddedMap{EmbeddedMap::Over::Tokens, support[0]};
}

std::string EmbeddedMap::why() const {
  return over == Over::Tokens ? "the token embedding: each input token's row writes the map's value"
                              : "the position embedding: each position's row writes the map's value";
}

void write_embedded_map(const LowerContext& ctx, const EmbeddedMap& map, Lowered& out) {
  const NodeId id = ctx.program.output;
  const std::vector<Value>& values = ctx.info(id).values;
  const bool numerical = ctx.info(id).encoding == Encoding::Numerical;
  std::vector<NodeId> support;
  if (map.source >= 0) support.push_back(map.source);
  // What the row of x writes: F(x)'s one-hot dimension at 1, or F(x) itself in the numerical
  // output's dimension; nothing where the map is undefined at x (an MLP writes nothing there either).
  auto entry_of = [&](const Value& x) -> std::optional<std::pair<int, double>> {
    Value v;
    std::vector<Value> at;
    if (map.source >= 0) at.push_back(x);
    if (!evaluate_fused(ctx.program, id, support, at, v)) return std::nullopt;
    if (numerical) return std::pair{ctx.allocation.numeric.at(id), number_of(v)};
    const std::vector<int>& dims = ctx.allocation.onehot.at(id);
    for (size_t i = 0; i < values.size(); ++i)
      if (same_value(values[i], v)) return std::pair{dims[i], 1.0};
    return std::nullopt;
  };
  if (map.over == EmbeddedMap::Over::Positions) {
    for (size_t p = 1; p < out.wpe.size(); ++p)
      if (auto entry = entry_of(Value::of_int(int64_t(p) - 1))) out.wpe[p].push_back(*entry);
    return;
  }
  const std::vector<Value>& symbols = ctx.options.vocab;
  for (size_t s = 0; s < symbols.size(); ++s)
    if (auto entry = entry_of(symbols[s])) out.wte[size_t(out.input_ids[s])].push_back(*entry);
  // Output-only tokens (every output value here): their output dimension at 1 + e, as above.
  for (int token : out.output_token_of_value)
    for (auto& [dim, w] : out.wte[size_t(token)])
      if (dim != ctx.allocation.pad) w = 1.0 + kTokenAmplitude;
}

}  // namespace raspc::compiler
