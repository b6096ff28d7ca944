// Heads: select as a bilinear table, aggregate as a copy or a mean, selector_width through BOS.
//
// A selector is split into conjuncts (its top-level `and`s); each conjunct may combine (`and`,
// `or`, `not`) comparisons of one key s-op with one query s-op, and becomes a table over their
// values: a match scores G. Conjuncts add, so a key selected by all m conjuncts scores m*G and
// any other at most (m-1)*G. The table is factored on its smaller side: one Q/K dimension per
// query value (its row of the table on the key side) or per key value. Maps of a single s-op on
// either side are part of the table, so they cost nothing. A conjunct over several s-ops on one
// side reaches here as comparisons of maps of one tuple of them (pair_selectors.cpp).
//
// Two more Q/K dimensions handle BOS. As a key, BOS scores exactly B for every query: (m-1/2)*G
// for an aggregate (it wins only when nothing is selected: the default) and m*G for a
// selector_width (it counts as one more match, so its weight is 1/(w+1)), m*G + ln Z for a split
// width's part (it counts as Z matches, scratch_level; its G is ln(n+1) + 8, less than half a
// selection's: width_match_score). As a query, BOS sees only itself. Its value is corrected to the default
// (aggregate) or 1 (selector_width; a part's value is 1 at every other position and 0 at BOS, the
// selected keys' weight).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {
namespace {

// The s-ops whose one-hots a conjunct's comparisons read, on the key and on the query side.
void collect_sources(const Program& program, const Inference& inference, NodeId sel, std::vector<NodeId>& keys,
                     std::vector<NodeId>& queries) {
  const Node& node = program.node(sel);
  if (node.kind == NodeKind::Select) {
    auto add = [&](std::vector<NodeId>& list, NodeId side) {
      NodeId source = comparison_source(program, inference, side);
      if (source >= 0 && std::find(list.begin(), list.end(), source) == list.end()) list.push_back(source);
    };
    add(keys, node.inputs[0]);
    add(queries, node.inputs[1]);
    return;
  }
  for (NodeId in : node.inputs) collect_sources(program, inference, in, keys, queries);
}

// What a comparison's side holds where its source holds `value`; false where its map is undefined.
bool side_value(const Program& program, NodeId side, NodeId source, const Value& value, Value& out) {
  if (side == source) return out = value, true;
  const Node& node = program.node(side);
  if (node.kind == NodeKind::Constant) return out = node.constant, true;
  return evaluate_fused(program, side, {source}, {value}, out);
}

// A conjunct's selection table over its sources' values, by [q * keys.size() + k]. A tuple's
// table is large (its values are the combinations of several s-ops), so every comparison's sides
// are evaluated once per value, not once per pair.
std::vector<uint8_t> conjunct_table(const Program& program, NodeId part, NodeId key_node,
                                    const std::vector<Value>& keys, NodeId query_node,
                                    const std::vector<Value>& queries) {
  struct Leaf {
    const Node* select;
    std::vector<Value> key, query;
    std::vector<uint8_t> key_defined, query_defined;
  };
  std::vector<Leaf> leaves;
  std::vector<int> leaf_of(program.nodes.size(), -1);
  std::vector<NodeId> stack{part};
  while (!stack.empty()) {
    NodeId id = stack.back();
    stack.pop_back();
    const Node& node = program.node(id);
    if (node.kind != NodeKind::Select) {
      for (NodeId in : node.inputs) stack.push_back(in);
      continue;
    }
    if (leaf_of[size_t(id)] >= 0) continue;
    leaf_of[size_t(id)] = int(leaves.size());
    Leaf leaf{&node, std::vector<Value>(keys.size()), std::vector<Value>(queries.size()),
              std::vector<uint8_t>(keys.size()), std::vector<uint8_t>(queries.size())};
    for (size_t k = 0; k < keys.size(); ++k)
      leaf.key_defined[k] = side_value(program, node.inputs[0], key_node, keys[k], leaf.key[k]);
    for (size_t q = 0; q < queries.size(); ++q)
      leaf.query_defined[q] = side_value(program, node.inputs[1], query_node, queries[q], leaf.query[q]);
    leaves.push_back(std::move(leaf));
  }
  auto holds = [&](auto&& self, NodeId sel, size_t q, size_t k) -> bool {
    const Node& node = program.node(sel);
    switch (node.kind) {
      case NodeKind::Select: {
        const Leaf& leaf = leaves[size_t(leaf_of[size_t(sel)])];
        return leaf.key_defined[k] && leaf.query_defined[q] &&
               compare_select(node.comparison, leaf.key[k], leaf.query[q], node.span);
      }
      case NodeKind::SelectAnd: return self(self, node.inputs[0], q, k) && self(self, node.inputs[1], q, k);
      case NodeKind::SelectOr: return self(self, node.inputs[0], q, k) || self(self, node.inputs[1], q, k);
      case NodeKind::SelectNot: return !self(self, node.inputs[0], q, k);
      default: return false;
    }
  };
  std::vector<uint8_t> table(queries.size() * keys.size());
  for (size_t q = 0; q < queries.size(); ++q)
    for (size_t k = 0; k < keys.size(); ++k) table[q * keys.size() + k] = holds(holds, part, q, k);
  return table;
}

Functional combine(const std::vector<std::pair<const Functional*, double>>& parts) {
  Functional f;
  for (const auto& [part, scale] : parts)
    if (scale != 0)
      for (const auto& [dim, w] : *part) f.push_back({dim, w * scale});
  return f;
}

// `scale` where the s-op of `view` holds one of the values marked in `subset`, else 0. A one-hot
// sums to 1 at every real position, so a large subset is read as `one` minus the rest: under
// LayerNorm every entry of a read costs float32 precision against the large common mean, and a
// tuple's subsets can be large.
Functional indicator_of(const LowerContext& ctx, const CategoricalView& view, const std::vector<uint8_t>& subset,
                        double scale) {
  size_t in = 0, entries_in = 0, entries_out = 0;
  for (size_t v = 0; v < subset.size(); ++v) {
    in += subset[v];
    (subset[v] ? entries_in : entries_out) += view.read[v].size();
  }
  bool complement = in < subset.size() && entries_out + 1 < entries_in;
  Functional base = ctx.unit(ctx.allocation.one);
  std::vector<std::pair<const Functional*, double>> parts;
  if (complement) parts.push_back({&base, scale});
  for (size_t v = 0; v < subset.size(); ++v)
    if (bool(subset[v]) != complement) parts.push_back({&view.read[v], complement ? -scale : scale});
  return combine(parts);
}

}  // namespace

std::vector<Term> selector_terms(const LowerContext& ctx, NodeId selector, double G, NodeId skip, int& conjuncts) {
  const Program& program = ctx.program;
  std::vector<NodeId> parts;
  flatten_selector(program, selector, NodeKind::SelectAnd, parts);
  parts.erase(std::remove(parts.begin(), parts.end(), skip), parts.end());
  conjuncts = int(parts.size());
  std::vector<Term> terms;
  for (NodeId part : parts) {
    std::vector<NodeId> keys, queries;
    collect_sources(program, ctx.inference, part, keys, queries);
    if (keys.size() > 1 || queries.size() > 1)
      fail_at(program.node(part).span, "internal: this selector compares several s-ops on one side, which "
                                       "pair_selector_sides should have made one tuple");
    NodeId key_node = keys.empty() ? -1 : keys[0];
    NodeId query_node = queries.empty() ? -1 : queries[0];
    CategoricalView constant_view{{Value::of_int(0)}, {ctx.unit(ctx.allocation.one)}};
    CategoricalView kview = key_node >= 0 ? ctx.categorical_view(key_node) : constant_view;
    CategoricalView qview = query_node >= 0 ? ctx.categorical_view(query_node) : constant_view;
    size_t nq = qview.values.size(), nk = kview.values.size();
    std::vector<uint8_t> table = conjunct_table(program, part, key_node, kview.values, query_node, qview.values);
    // Query values with the same row of the table share one term (a map folded into the query
    // side, or a tuple, makes many such), likewise key values with the same column; the table is
    // factored on the side with fewer distinct ones.
    std::map<std::string, size_t> row_index, col_index;  // pattern (a byte per value) -> group
    std::vector<std::string> rows, cols;
    std::vector<int> row_of(nq, -1), col_of(nk, -1);
    auto group = [](std::string pattern, std::map<std::string, size_t>& index, std::vector<std::string>& patterns) {
      if (pattern.find('\1') == std::string::npos) return -1;
      auto [it, added] = index.emplace(pattern, patterns.size());
      if (added) patterns.push_back(std::move(pattern));
      return int(it->second);
    };
    for (size_t q = 0; q < nq; ++q) {
      std::string row(nk, '\0');
      for (size_t k = 0; k < nk; ++k) row[k] = char(table[q * nk + k]);
      row_of[q] = group(std::move(row), row_index, rows);
    }
    for (size_t k = 0; k < nk; ++k) {
      std::string column(nq, '\0');
      for (size_t q = 0; q < nq; ++q) column[q] = char(table[q * nk + k]);
      col_of[k] = group(std::move(column), col_index, cols);
    }
    if (rows.size() <= cols.size()) {
      for (size_t g = 0; g < rows.size(); ++g) {
        std::vector<uint8_t> in_group(nq);
        for (size_t q = 0; q < nq; ++q) in_group[q] = row_of[q] == int(g);
        std::vector<uint8_t> matched(rows[g].begin(), rows[g].end());
        terms.push_back({indicator_of(ctx, qview, in_group, 1.0), indicator_of(ctx, kview, matched, G)});
      }
    } else {
      for (size_t g = 0; g < cols.size(); ++g) {
        std::vector<uint8_t> in_group(nk);
        for (size_t k = 0; k < nk; ++k) in_group[k] = col_of[k] == int(g);
        std::vector<uint8_t> matched(cols[g].begin(), cols[g].end());
        terms.push_back({indicator_of(ctx, qview, matched, G), indicator_of(ctx, kview, in_group, 1.0)});
      }
    }
  }
  return terms;
}

void flatten_selector(const Program& program, NodeId selector, NodeKind kind, std::vector<NodeId>& out) {
  const Node& node = program.node(selector);
  if (node.kind != kind) return out.push_back(selector);
  for (NodeId in : node.inputs) flatten_selector(program, in, kind, out);
}

bool selector_holds(const Program& program, NodeId sel, NodeId key_node, const Value& key, NodeId query_node,
                    const Value& query) {
  const Node& node = program.node(sel);
  switch (node.kind) {
    case NodeKind::Select: {
      Value kv, qv;
      return side_value(program, node.inputs[0], key_node, key, kv) &&
             side_value(program, node.inputs[1], query_node, query, qv) &&
             compare_select(node.comparison, kv, qv, node.span);
    }
    case NodeKind::SelectAnd:
      return selector_holds(program, node.inputs[0], key_node, key, query_node, query) &&
             selector_holds(program, node.inputs[1], key_node, key, query_node, query);
    case NodeKind::SelectOr:
      return selector_holds(program, node.inputs[0], key_node, key, query_node, query) ||
             selector_holds(program, node.inputs[1], key_node, key, query_node, query);
    case NodeKind::SelectNot: return !selector_holds(program, node.inputs[0], key_node, key, query_node, query);
    default: return false;
  }
}

NodeId comparison_source(const Program& program, const Inference& inference, NodeId side) {
  const Node& node = program.node(side);
  if (node.kind == NodeKind::Constant) return -1;
  const NodeId folded = folded_map_source(program, inference, side);
  return folded >= 0 ? folded : side;  // a map that does not fold is materialised
}

NodeId folded_map_source(const Program& program, const Inference& inference, NodeId map) {
  if (program.node(map).kind != NodeKind::Elementwise || inference.written_from_scratch(map)) return -1;
  std::vector<NodeId> support = support_of(program, map, &inference.cut);
  if (support.size() == 1 && inference.info[size_t(support[0])].encoding == Encoding::Categorical) return support[0];
  return -1;
}

Functional scaled(const Functional& f, double s) {
  Functional out;
  for (const auto& [dim, w] : f) out.push_back({dim, w * s});
  return out;
}

namespace {

// `part` tells the heads of one node apart: a prefix mean has two (0 and 1), every other node one.
HeadScores head_scores(const LowerContext& ctx, NodeId id, int part) {
  if (is_prefix_mean(ctx.program, ctx.inference.numbers, id)) return prefix_mean_scores(ctx, part);
  if (std::optional<HeadScores> numerical = numerical_selector_scores(ctx, id)) return *numerical;
  const Node& node = ctx.program.node(id);
  const int one = ctx.allocation.one;
  int m = 0;
  const double G = width_match_score(node, ctx.match_score);
  std::vector<Term> terms = selector_terms(ctx, node.inputs[0], G, -1, m);
  // BOS as a key: exactly B for every query; for a split width's part ln Z more, so that it weighs
  // as Z selected keys (scratch_level; Z is 1, ln Z 0, for every other head).
  double B = (counts_keys(node) ? m * G : (m - 0.5) * G) + std::log(width_bos_weight(node, ctx.options.max_len));
  if (is_construction(node, WidthHeadKind::WidthStep))
    return {terms, static_cast<const WidthStep&>(*node.construction).bos_score(ctx, B), {}};
  return {terms, ctx.unit(one, B), {}};
}

// A read of 1 at every position but BOS. The input one-hot sums to kTokenAmplitude at every input
// position and is 0 at BOS, so BOS reads exactly 0: its value needs no correction, whose float32
// rounding, about 1e-7 times BOS's weight of nearly 1, is an error that does not shrink with u
// (measured: the causal stable sort's parts' largest error at max length 256 fell from 2.5e-7
// to 1.2e-7 of a gap of 3.8e-6). `one`, corrected at BOS, where the program reads no tokens.
Functional every_token_but_bos(const LowerContext& ctx) {
  const auto& tokens = ctx.allocation.tokens;
  if (tokens.empty() || tokens.begin()->second.size() != ctx.options.vocab.size()) return ctx.unit(ctx.allocation.one);
  Functional read;
  for (int dim : tokens.begin()->second) read.push_back({dim, 1.0 / kTokenAmplitude});
  return read;
}

}  // namespace

std::pair<int, int> head_dimensions(const LowerContext& ctx, NodeId head) {
  const Node& node = ctx.program.node(head);
  int dqk = int(head_scores(ctx, head, 0).terms.size()) + 2;
  if (is_prefix_mean(ctx.program, ctx.inference.numbers, head))
    dqk = std::max(dqk, int(head_scores(ctx, head, 1).terms.size()) + 2);
  int dv = 1;
  if (ctx.inference.numbers.of(head) == NumberRole::LastIndex) dv = 6;
  else if (node.kind == NodeKind::Aggregate && ctx.info(head).encoding == Encoding::Categorical)
    dv = int(ctx.info(head).values.size());
  return {dqk, dv};
}

std::vector<LoweredHead> lower_heads(const LowerContext& ctx, const std::vector<NodeId>& heads,
                                     const std::vector<double>& bos_in, double gain) {
  const Program& program = ctx.program;
  const int C = ctx.width;
  std::vector<double> y = layer_norm(bos_in, gain, ctx.options.layer_norm);
  std::vector<LoweredHead> lowered;
  for (size_t h = 0; h < heads.size(); ++h) {
    const NodeId id = heads[h];
    const Node& node = program.node(id);
    bool width = counts_keys(node);
    const int part = int(std::count(heads.begin(), heads.begin() + std::ptrdiff_t(h), id));
    HeadScores scores = head_scores(ctx, id, part);
    std::vector<Term>& terms = scores.terms;
    int T = int(terms.size());
    LoweredHead head;
    head.node = id;
    head.wq = Matrix(C, T + 2);
    head.wk = Matrix(C, T + 2);
    for (int t = 0; t < T; ++t) {
      ctx.put_column(head.wq, t, terms[size_t(t)].query);
      ctx.put_column(head.wk, t, terms[size_t(t)].key);
    }
    // How BOS's `bos` dimension reads after LayerNorm (1 without it).
    Matrix probe(C, 1);
    ctx.put_column(probe, 0, ctx.bos_read());
    double r = read_through(probe, y)[0];
    // BOS as a key: exactly scores.bos_score for every query.
    double B = 0;
    for (const auto& [dim, w] : scores.bos_score) B += std::fabs(w);
    std::vector<double> key_at_bos = read_through(head.wk, y);
    double virtual_key = 0;  // how far BOS read as a key may reach
    if (!scores.bos_key.empty()) {
      // What the key sides read at BOS, moved to bos_key by reads of the `bos` dimension, which is 0
      // at every other position: BOS then scores through the terms like a key, with no correction.
      for (int t = 0; t < T; ++t) {
        const double target = scores.bos_key[size_t(t)];
        ctx.put_column(head.wk, t, ctx.bos_read(), (target - key_at_bos[size_t(t)]) / r);
        virtual_key += std::fabs(target);
      }
    } else {
      std::vector<std::pair<const Functional*, double>> correction_parts;
      correction_parts.push_back({&scores.bos_score, 1.0});
      for (int t = 0; t < T; ++t) correction_parts.push_back({&terms[size_t(t)].query, -key_at_bos[size_t(t)]});
      ctx.put_column(head.wq, T, combine(correction_parts));
    }
    ctx.put_column(head.wk, T, ctx.bos_read(), 1.0 / r);
    // BOS as a query: only itself, by far.
    std::vector<double> query_at_bos = read_through(head.wq, y);
    double other = 0;
    for (int t = 0; t < T; ++t) {
      double key_size = 0;
      for (const auto& [dim, w] : terms[size_t(t)].key) key_size += std::fabs(w);
      other += std::fabs(query_at_bos[size_t(t)]) * (key_size + virtual_key);
    }
    other += std::fabs(query_at_bos[size_t(T)]) + B;
    double H = (10.0 * other + 100.0) / (r * r);
    ctx.put_column(head.wq, T + 1, ctx.bos_read());
    ctx.put_column(head.wk, T + 1, ctx.bos_read(), H);

    // Values and outputs.
    std::vector<Functional> values;
    std::vector<double> bos_target;
    std::vector<int> out_dims;
    const SopInfo& info = ctx.info(id);
    if (ctx.inference.numbers.of(id) == NumberRole::LastIndex) {
      const NodeId indices = ctx.indices_number();
      std::vector<double> centre = ctx.number_group(ctx.inference.numbers.centre);
      for (size_t j = 0; j < centre.size(); ++j) {
        values.push_back(ctx.unit(ctx.allocation.number.at(indices)[j]));
        bos_target.push_back(centre[j]);
        out_dims.push_back(ctx.allocation.number.at(id)[j]);
      }
    } else if (width) {
      // BOS's weight, or (a split width's part) the selected keys' (scratch_level).
      const bool selected_weight = is_construction(node, WidthHeadKind::WidthPart);
      values.push_back(selected_weight ? every_token_but_bos(ctx) : Functional{});
      bos_target.push_back(selected_weight ? 0.0 : 1.0);
      out_dims.push_back(ctx.allocation.scratch.at(id));
    } else if (info.encoding == Encoding::Categorical) {
      NodeId source = node.inputs[1];
      if (ctx.info(source).encoding == Encoding::Numerical)
        fail_at(node.span, "a categorical aggregate cannot copy a numerical s-op; drop categorical() or make the "
                           "value categorical");
      CategoricalView view = ctx.categorical_view(source);
      for (size_t o = 0; o < info.values.size(); ++o) {
        std::vector<std::pair<const Functional*, double>> parts;
        for (size_t u = 0; u < view.values.size(); ++u)
          if (!value_less(view.values[u], info.values[o]) && !value_less(info.values[o], view.values[u]))
            parts.push_back({&view.read[u], 1.0});
        values.push_back(combine(parts));
        bool is_default = !value_less(node.default_value, info.values[o]) &&
                          !value_less(info.values[o], node.default_value);
        bos_target.push_back(is_default ? 1.0 : 0.0);
        out_dims.push_back(ctx.allocation.onehot.at(id)[o]);
      }
    } else {
      values.push_back(ctx.numeric_view(node.inputs[1]));
      // A prefix mean's BOS weighs as the other part's keys and must add nothing (every query selects
      // its own key, so the default is never taken).
      const Value& d = node.default_value;
      bos_target.push_back(is_prefix_mean(ctx.program, ctx.inference.numbers, id) ? 0.0 : number_of(d));
      out_dims.push_back(ctx.allocation.numeric.at(id));
    }
    int dv = int(values.size());
    head.wv = Matrix(C, dv);
    head.wo = Matrix(dv, C);
    for (int j = 0; j < dv; ++j) ctx.put_column(head.wv, j, values[size_t(j)]);
    std::vector<double> value_at_bos = read_through(head.wv, y);
    for (int j = 0; j < dv; ++j) {
      ctx.put_column(head.wv, j, ctx.bos_read(), (bos_target[size_t(j)] - value_at_bos[size_t(j)]) / r);
      head.wo.at(j, out_dims[size_t(j)]) = 1.0;
    }
    lowered.push_back(std::move(head));
  }
  return lowered;
}

}  // namespace raspc::compiler
