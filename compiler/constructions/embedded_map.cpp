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
// have input rows, which cannot carry 1 + e: such a map's rows are tied (below).
//
// Tied tokens. Under LayerNorm the rows can carry output values that are input symbols too. ln_f
// weighs dimensions alike, so far: give it signed gains, and each output value v two dimensions,
// its own `NAME:v` at gain +g and a partner `NAME.unembed:v` at -g, so that a logit is
// g/sigma * (x_P . w_P - x_N . w_N). A row writes its input part, F(t) in both (1, 1), and, for the
// token of an output value v, its output part, -lambda_v in the partner. In the logits the input
// parts of two rows cancel (1 - 1), output parts meet only on their own token (-lambda_v^2), and an
// input part meets an output part where the input maps to that value (+lambda_v). At a position
// holding t, F(t) = v, the token of v scores lambda_v (2 lambda_v - lambda_v^2 where F(v) = v), the
// token of t itself -lambda_t^2, a token u with F(u) = t lambda_t, every other 0. So the right
// token wins where lambda rises along every step t -> F(t) between tokens that are both: lambda_v =
// (1 + level_v) / (L + 2), level_v the longest chain of such steps ending at v, which exists where
// the map takes no such token around a cycle (a fixed point is no step). The smallest gap is
// 1/(L + 2)^2 (lambda (1 - lambda) at a fixed point). Every row sums to 0 (pad, at gain 0, takes
// the rest), so ln_f's mean is 0; its scale differs by row, a positive factor of every logit. Where
// the map cycles (a permutation of the tokens), or its chains are long (kMostTiedLevels), it stays
// an MLP.
//
// A numerical output is read off the residual stream before ln_f, not through the unembedding, so
// its map's row writes the value itself, F(t) or F(i), in the output's one dimension: exact up to
// float32's rounding of the number. The tied unembedding reads that dimension too, but nothing
// reads a numerical model's logits.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {

namespace {

// The longest chain of tied tokens written into the rows: the smallest gap between logits is
// 1/(L + 2)^2 of their scale, so ln_f's gain, and with it the logits, grow with L^2 (about 4e5 at
// 64, which float32 still resolves to a few hundredths against a margin of 50). Longer chains (a
// map t -> t - 1 over a long range of numbers) keep the MLP.
constexpr int kMostTiedLevels = 64;

// A map of the token and the position, F(t, i). Additive scores: the row of symbol t writes a
// score a_t[k] for each output token k, the row of position i a score b_i[k], and the residual
// holds their sum, so the tied unembedding reads a_t[k] + b_i[k] for output token k. Where some
// F(t, i) = v is written that way, with v's score above every other token's at every (t, i), the
// map needs no MLP. Not every map is (t XOR i over two symbols and two positions: the four
// inequalities add up to 0 < 0), so the scores are searched for, and the map stays an MLP where
// none is found.
//
// The rows, through the pairs of dimensions of tied tokens (above): symbol t writes a_t into both
// halves, `NAME:k` (gain +g) and `NAME.unembed:k` (gain -g), and, where t prints as output token
// k_t, 1 more into `NAME:k_t`; position i writes b_i into both halves; an output-only token's row is
// 1 in its `NAME:k`; `pad` (gain 0) makes every row sum to 0, so ln_f's mean is 0 and its 1/sigma a
// positive factor of every logit. At a position (t, i), the logit of
//   an output-only token k:                a_t[k] + b_i[k]
//   a tied token y (its output token k_y):  a_t[k_y] + b_i[k_y] + [t tied] (a_y[k_t] + [k_t == k_y])
//   an input symbol y that no output is:   [t tied] a_y[k_t]
//   BOS (pad alone):                       0
// (the halves cancel where both rows hold a score: g (x.w - x.w) = 0). Each is linear in the
// scores, so "the right token is 1 above every other" is a set of linear inequalities, solved by a
// perceptron with margin over integers: wherever scores with every homogeneous part positive exist,
// it finds ones with every part at least 1 in finitely many updates (the perceptron convergence
// theorem), and doubling them covers the constants (at most 1 apart); past kMostPairPasses the map
// stays an MLP. The model is verified like any other; ln_f's gain makes the least margin 50.

// Rows of inequalities the perceptron is given at most (a symbol, a position and a rival each),
// and its passes over them: small maps (Tracr's float maps of a token and a position) take a few
// hundred rows and a few dozen passes; a map the scores cannot write never stops improving, so
// the passes stop at kMostPairPasses, or at kMostPairWork rows in all (a few tenths of a second).
constexpr size_t kMostPairRows = 60000;
constexpr size_t kMostPairPasses = 2000;
constexpr size_t kMostPairWork = 40000000;

// The right token's logit less a rival's, as terms over the scores (variable, coefficient); the
// constants the tied tokens add ([k_t == k], at most 1 apart) are left to the doubling above.
struct PairRow {
  std::vector<std::pair<size_t, int>> terms;
};

std::optional<EmbeddedMap> pair_map(const Program& program, const Inference& inference, const CompileOptions& options,
                                    const std::vector<NodeId>& support) {
  const NodeId id = program.output;
  const SopInfo& info = inference.info[size_t(id)];
  if (!options.layer_norm || !info.values_known || info.values.empty()) return std::nullopt;
  const bool tokens_first = program.node(support[0]).kind == NodeKind::Tokens;
  const NodeId tokens = support[tokens_first ? 0 : 1], indices = support[tokens_first ? 1 : 0];
  if (program.node(tokens).kind != NodeKind::Tokens || program.node(indices).kind != NodeKind::Indices) return std::nullopt;
  // Output tokens: the output's distinct texts, in the order of the allocation's dimensions.
  std::map<std::string, size_t> slot_of_text;
  for (const Value& v : info.values) slot_of_text.try_emplace(to_display(v), slot_of_text.size());
  const size_t K = slot_of_text.size(), S = options.vocab.size(), n = size_t(options.max_len);
  std::vector<int> slot_of_symbol(S, -1);  // the output token a symbol prints as, or -1
  std::vector<int> symbol_of_slot(K, -1);
  for (size_t t = 0; t < S; ++t)
    if (auto it = slot_of_text.find(to_display(options.vocab[t])); it != slot_of_text.end()) {
      if (symbol_of_slot[it->second] >= 0) return std::nullopt;  // two symbols print alike
      slot_of_symbol[t] = int(it->second);
      symbol_of_slot[it->second] = int(t);
    }
  size_t untied = 0;
  for (int slot : slot_of_symbol) untied += slot < 0;
  const size_t tied = S - untied;
  if (n * (S * K + tied * untied) > kMostPairRows) return std::nullopt;
  auto a = [&](size_t t, size_t k) { return t * K + k; };
  auto b = [&](size_t i, size_t k) { return (S + i) * K + k; };
  // Output token k's logit at (t, i), its terms added to `out` with `sign`.
  auto logit_of_slot = [&](size_t t, size_t i, size_t k, PairRow& out, int sign) {
    out.terms.push_back({a(t, k), sign});
    out.terms.push_back({b(i, k), sign});
    if (slot_of_symbol[t] >= 0 && symbol_of_slot[k] >= 0)
      out.terms.push_back({a(size_t(symbol_of_slot[k]), size_t(slot_of_symbol[t])), sign});
  };
  std::vector<PairRow> rows;
  std::vector<std::vector<int>> right_token(S, std::vector<int>(n));
  for (size_t t = 0; t < S; ++t)
    for (size_t i = 0; i < n; ++i) {
      Value v;
      std::vector<Value> at(2);
      at[tokens_first ? 0 : 1] = options.vocab[t];
      at[tokens_first ? 1 : 0] = Value::of_int(int64_t(i));
      if (!evaluate_fused(program, id, support, at, v)) return std::nullopt;
      const size_t right = slot_of_text.at(to_display(v));
      right_token[t][i] = int(right);
      for (size_t k = 0; k < K; ++k) {
        if (k == right) continue;
        PairRow row;
        logit_of_slot(t, i, right, row, +1);
        logit_of_slot(t, i, k, row, -1);
        rows.push_back(std::move(row));
      }
      // The untied symbols, then BOS (y == S): logit 0 where t is untied too, one row for them all.
      for (size_t y = slot_of_symbol[t] >= 0 ? 0 : S; y <= S; ++y) {
        if (y < S && slot_of_symbol[y] >= 0) continue;
        PairRow row;
        logit_of_slot(t, i, right, row, +1);
        if (y < S && slot_of_symbol[t] >= 0) row.terms.push_back({a(y, size_t(slot_of_symbol[t])), -1});
        rows.push_back(std::move(row));
      }
    }
  std::vector<int64_t> z((S + n) * K, 0);
  bool solved = false;
  const size_t passes = std::min<size_t>(kMostPairPasses, kMostPairWork / rows.size());
  for (size_t pass = 0; pass < passes && !solved; ++pass) {
    solved = true;
    for (const PairRow& row : rows) {
      int64_t sum = 0;
      for (auto [var, c] : row.terms) sum += c * z[var];
      if (sum >= 1) continue;
      solved = false;
      for (auto [var, c] : row.terms) z[var] += c;
    }
  }
  if (!solved) return std::nullopt;
  EmbeddedMap map = EmbeddedMap::of(EmbeddedMap::Over::Pairs, tokens, indices);
  map.right_token = std::move(right_token);
  map.symbol_scores.assign(S, std::vector<int64_t>(K));
  map.position_scores.assign(n, std::vector<int64_t>(K));
  for (size_t k = 0; k < K; ++k) {
    for (size_t t = 0; t < S; ++t) map.symbol_scores[t][k] = 2 * z[a(t, k)];
    for (size_t i = 0; i < n; ++i) map.position_scores[i][k] = 2 * z[b(i, k)];
  }
  return map;
}

}  // namespace

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
  if (support.empty()) return EmbeddedMap::of(EmbeddedMap::Over::Positions);
  if (support.size() == 2 && !numerical) return pair_map(program, inference, options, support);
  if (support.size() != 1) return std::nullopt;
  const NodeKind source = program.node(support[0]).kind;
  if (source == NodeKind::Indices) return EmbeddedMap::of(EmbeddedMap::Over::Positions, support[0]);
  if (source != NodeKind::Tokens) return std::nullopt;
  EmbeddedMap map = EmbeddedMap::of(EmbeddedMap::Over::Tokens, support[0]);
  if (numerical) return map;
  // Output values by the token that prints them; the steps t -> F(t) between tokens that are an
  // input symbol and an output value, and each value's level along them.
  std::map<std::string, size_t> value_of_text;
  for (size_t i = 0; i < info.values.size(); ++i) value_of_text.try_emplace(to_display(info.values[i]), i);
  std::vector<std::vector<size_t>> steps_into(info.values.size());
  bool tied = false;
  for (const Value& symbol : options.vocab) {
    auto own = value_of_text.find(to_display(symbol));
    if (own == value_of_text.end()) continue;
    tied = true;
    Value v;
    if (!evaluate_fused(program, id, support, {symbol}, v)) continue;
    const size_t image = value_of_text.at(to_display(v));
    if (image != own->second) steps_into[image].push_back(own->second);
  }
  if (!tied) return map;
  if (!options.layer_norm) return std::nullopt;  // the pairs need ln_f's signed gains
  // Longest chains, depth first; a value met again on the chain being followed is a cycle.
  std::vector<int> level(info.values.size(), -1), state(info.values.size(), 0);  // 0 new, 1 open, 2 done
  bool cycle = false;
  std::function<int(size_t)> depth = [&](size_t v) {
    if (state[v] == 1) return cycle = true, 0;
    if (state[v] == 2) return level[v];
    state[v] = 1;
    int deepest = 0;
    for (size_t from : steps_into[v]) deepest = std::max(deepest, depth(from) + 1);
    state[v] = 2;
    return level[v] = deepest;
  };
  for (size_t v = 0; v < info.values.size(); ++v) depth(v);
  if (cycle || *std::max_element(level.begin(), level.end()) > kMostTiedLevels) return std::nullopt;
  for (size_t i = 0; i < info.values.size(); ++i) map.tied_levels.push_back(level[value_of_text.at(to_display(info.values[i]))]);
  return map;
}

std::string EmbeddedMap::why() const {
  if (over == Over::Positions) return "the position embedding: each position's row writes the map's value";
  if (over == Over::Pairs)
    return "the token and position embeddings: their rows write scores for each output value, whose sums the "
           "unembedding reads (found by a perceptron; tied tokens through ln_f's gains of +1 and -1)";
  if (tied_levels.empty()) return "the token embedding: each input token's row writes the map's value";
  return "the token embedding: each input token's row writes the map's value, and the tokens that are both an "
         "input and an output value pair it with their own through ln_f's gains of +1 and -1";
}

namespace {

// The rows and ln_f's gains of tied tokens (above). `entry_of(x)`: the dimension of F(x)'s value.
template <typename EntryOf>
void write_tied_rows(const LowerContext& ctx, const EmbeddedMap& map, const EntryOf& entry_of, Lowered& out) {
  const std::vector<int>& own = ctx.allocation.onehot.at(ctx.program.output);
  const std::vector<int>& partner = ctx.allocation.unembed;
  const int pad = ctx.allocation.pad;
  const int deepest = *std::max_element(map.tied_levels.begin(), map.tied_levels.end());
  std::vector<std::map<int, double>> rows(out.wte.size());
  for (size_t s = 0; s < ctx.options.vocab.size(); ++s)
    if (auto entry = entry_of(ctx.options.vocab[s])) {
      const size_t i = size_t(std::find(own.begin(), own.end(), entry->first) - own.begin());
      rows[size_t(out.input_ids[s])][own[i]] += 1.0;
      rows[size_t(out.input_ids[s])][partner[i]] += 1.0;
    }
  std::vector<uint8_t> written(out.wte.size(), 0);  // values printed alike: one token, one output part
  for (size_t i = 0; i < map.tied_levels.size(); ++i) {
    const size_t token = size_t(out.output_token_of_value[i]);
    if (written[token]++) continue;
    rows[token][partner[i]] -= double(1 + map.tied_levels[i]) / double(deepest + 2);
  }
  rows[0][pad] = 1.0;  // BOS: its logits are never read
  double widest = 0;   // the largest sigma of any row (an input row's is at most this)
  for (size_t t = 0; t < rows.size(); ++t) {
    double sum = 0, square = 0;
    for (const auto& [dim, w] : rows[t]) sum += w;
    const bool empty = rows[t].empty();  // an input where the map is undefined: pad alone
    if (t > 0) rows[t][pad] = empty ? 1.0 : -sum;
    out.wte[t].assign(rows[t].begin(), rows[t].end());
    for (const auto& [dim, w] : rows[t]) square += w * w;
    widest = std::max(widest, std::sqrt(square / ctx.width + 1e-5));
  }
  // The smallest gap between the right token's score and another's is 1/(L + 2)^2 before ln_f's
  // 1/sigma and g: g makes it at least 50 at every row.
  const double gap = 1.0 / double((deepest + 2) * (deepest + 2));
  set_paired_lnf_gains(ctx, own, partner, 50.0 * widest / gap, out);
}

// The rows and ln_f's gains of a map of the token and the position (pair_map above).
void write_pair_rows(const LowerContext& ctx, const EmbeddedMap& map, Lowered& out) {
  const std::vector<int>& own_by_value = ctx.allocation.onehot.at(ctx.program.output);
  const std::vector<int>& partner_by_value = ctx.allocation.unembed;
  const int pad = ctx.allocation.pad;
  // Output tokens in the order pair_map numbered them: the output's distinct dimensions.
  std::vector<int> own, partner, token_of_slot;
  for (size_t i = 0; i < own_by_value.size(); ++i)
    if (std::find(own.begin(), own.end(), own_by_value[i]) == own.end()) {
      own.push_back(own_by_value[i]);
      partner.push_back(partner_by_value[i]);
      token_of_slot.push_back(out.output_token_of_value[i]);
    }
  const size_t K = own.size();
  auto write_scores = [&](std::map<int, double>& row, const std::vector<int64_t>& scores) {
    for (size_t k = 0; k < K; ++k)
      if (scores[k] != 0) {
        row[own[k]] += double(scores[k]);
        row[partner[k]] += double(scores[k]);
      }
  };
  std::vector<std::map<int, double>> rows(out.wte.size());
  for (size_t s = 0; s < ctx.options.vocab.size(); ++s) write_scores(rows[size_t(out.input_ids[s])], map.symbol_scores[s]);
  for (size_t k = 0; k < K; ++k) rows[size_t(token_of_slot[k])][own[k]] += 1.0;  // its output part
  rows[0][pad] = 1.0;  // BOS: its logits are never read
  auto close = [&](std::map<int, double>& row) {  // a sum of 0, through pad
    double sum = 0;
    for (const auto& [dim, w] : row) sum += w;
    if (sum != 0) row[pad] = -sum;
  };
  for (size_t t = 1; t < rows.size(); ++t) close(rows[t]);
  std::vector<std::map<int, double>> positions(out.wpe.size());
  for (size_t p = 1; p < out.wpe.size(); ++p) {
    write_scores(positions[p], map.position_scores[p - 1]);
    close(positions[p]);
  }
  for (size_t t = 0; t < rows.size(); ++t) out.wte[t].assign(rows[t].begin(), rows[t].end());
  for (size_t p = 1; p < out.wpe.size(); ++p) out.wpe[p].insert(out.wpe[p].end(), positions[p].begin(), positions[p].end());
  // ln_f's gain: the least gap, over every (symbol, position), between the right token's logit and
  // any other's, after ln_f's 1/sigma (the rows sum to 0, so the mean is 0), is made 50.
  std::vector<double> sign(size_t(ctx.width), 0.0);
  for (size_t k = 0; k < K; ++k) sign[size_t(own[k])] = 1.0, sign[size_t(partner[k])] = -1.0;
  double least = INFINITY;
  std::vector<double> h(size_t(ctx.width));
  for (size_t s = 0; s < ctx.options.vocab.size(); ++s)
    for (size_t p = 1; p < out.wpe.size(); ++p) {
      std::fill(h.begin(), h.end(), 0.0);
      for (const auto& [dim, w] : out.wte[size_t(out.input_ids[s])]) h[size_t(dim)] += w;
      for (const auto& [dim, w] : out.wpe[p]) h[size_t(dim)] += w;
      double square = 0;
      for (double x : h) square += x * x;
      const double sigma = std::sqrt(square / ctx.width + 1e-5);
      const int right = token_of_slot[size_t(map.right_token[s][p - 1])];
      double right_logit = 0, rival = -INFINITY;
      for (size_t t = 0; t < rows.size(); ++t) {
        double logit = 0;
        for (const auto& [dim, w] : out.wte[t]) logit += sign[size_t(dim)] * h[size_t(dim)] * w;
        if (int(t) == right) right_logit = logit;
        else rival = std::max(rival, logit);
      }
      least = std::min(least, (right_logit - rival) / sigma);
    }
  if (!(least > 0)) throw std::logic_error("a pair map's scores leave a gap of " + std::to_string(least));
  set_paired_lnf_gains(ctx, own, partner, 50.0 / least, out);
}

}  // namespace

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
  if (map.over == EmbeddedMap::Over::Pairs) return write_pair_rows(ctx, map, out);
  const std::vector<Value>& symbols = ctx.options.vocab;
  if (!map.tied_levels.empty()) return write_tied_rows(ctx, map, entry_of, out);
  for (size_t s = 0; s < symbols.size(); ++s)
    if (auto entry = entry_of(symbols[s])) out.wte[size_t(out.input_ids[s])].push_back(*entry);
  // Output-only tokens (every output value here): their output dimension at 1 + e, as above.
  for (int token : out.output_token_of_value)
    for (auto& [dim, w] : out.wte[size_t(token)])
      if (dim != ctx.allocation.pad) w = 1.0 + kTokenAmplitude;
}

}  // namespace raspc::compiler
