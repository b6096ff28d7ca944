// Heads: select as a bilinear table, aggregate as a copy or a mean, selector_width through BOS.
//
// A selector is split into conjuncts (its top-level `and`s); each conjunct may combine (`and`,
// `or`, `not`) comparisons of one key s-op with one query s-op, and becomes a table over their
// values: a match scores G. Conjuncts add, so a key selected by all m conjuncts scores m*G and
// any other at most (m-1)*G. The table is factored on its smaller side: one Q/K dimension per
// query value (its row of the table on the key side) or per key value. Maps of a single s-op on
// either side are part of the table, so they cost nothing.
//
// Two more Q/K dimensions handle BOS. As a key, BOS scores exactly B for every query: (m-1/2)*G
// for an aggregate (it wins only when nothing is selected: the default) and m*G for a
// selector_width (it counts as one more match, so its weight is 1/(w+1)). As a query, BOS sees
// only itself. Its value is corrected to the default (aggregate) or 1 (selector_width).
#include <algorithm>
#include <cmath>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {
namespace {

struct Term {
  Functional query, key;
};

void split_conjuncts(const Program& program, NodeId sel, std::vector<NodeId>& out) {
  const Node& node = program.node(sel);
  if (node.kind == NodeKind::SelectAnd) {
    split_conjuncts(program, node.inputs[0], out);
    split_conjuncts(program, node.inputs[1], out);
  } else {
    out.push_back(sel);
  }
}

void collect_sides(const Program& program, NodeId sel, std::vector<NodeId>& keys, std::vector<NodeId>& queries) {
  const Node& node = program.node(sel);
  if (node.kind == NodeKind::Select) {
    auto add = [&](std::vector<NodeId>& list, NodeId id) {
      if (program.node(id).kind == NodeKind::Constant) return;
      if (std::find(list.begin(), list.end(), id) == list.end()) list.push_back(id);
    };
    add(keys, node.inputs[0]);
    add(queries, node.inputs[1]);
    return;
  }
  for (NodeId in : node.inputs) collect_sides(program, in, keys, queries);
}

Functional combine(const std::vector<std::pair<const Functional*, double>>& parts) {
  Functional f;
  for (const auto& [part, scale] : parts)
    if (scale != 0)
      for (const auto& [dim, w] : *part) f.push_back({dim, w * scale});
  return f;
}

// The score terms of a selector, and the number of conjuncts.
std::vector<Term> selector_terms(const LowerContext& ctx, NodeId selector, int& conjuncts) {
  const Program& program = ctx.program;
  std::vector<NodeId> parts;
  split_conjuncts(program, selector, parts);
  conjuncts = int(parts.size());
  std::vector<Term> terms;
  const double G = ctx.match_score;
  for (NodeId part : parts) {
    std::vector<NodeId> keys, queries;
    collect_sides(program, part, keys, queries);
    if (keys.size() > 1 || queries.size() > 1)
      fail_at(program.node(part).span,
              "this selector combines comparisons of different s-ops with `or` or `not`, which one attention "
              "head cannot score; combine them with `and`, or compare a single s-op made of both (a map of them)");
    NodeId key_node = keys.empty() ? -1 : keys[0];
    NodeId query_node = queries.empty() ? -1 : queries[0];
    CategoricalView constant_view{{Value::of_int(0)}, {ctx.unit(ctx.allocation.one)}};
    CategoricalView kview = key_node >= 0 ? ctx.categorical_view(key_node) : constant_view;
    CategoricalView qview = query_node >= 0 ? ctx.categorical_view(query_node) : constant_view;
    size_t nq = qview.values.size(), nk = kview.values.size();
    std::vector<uint8_t> table(nq * nk);
    size_t rows = 0, cols = 0;
    std::vector<uint8_t> row_used(nq, 0), col_used(nk, 0);
    for (size_t q = 0; q < nq; ++q)
      for (size_t k = 0; k < nk; ++k) {
        bool match = selector_holds(program, part, key_node, kview.values[k], query_node, qview.values[q]);
        table[q * nk + k] = match;
        if (match) row_used[q] = col_used[k] = 1;
      }
    for (uint8_t u : row_used) rows += u;
    for (uint8_t u : col_used) cols += u;
    if (rows <= cols) {
      for (size_t q = 0; q < nq; ++q) {
        if (!row_used[q]) continue;
        std::vector<std::pair<const Functional*, double>> key_parts;
        for (size_t k = 0; k < nk; ++k)
          if (table[q * nk + k]) key_parts.push_back({&kview.read[k], G});
        terms.push_back({qview.read[q], combine(key_parts)});
      }
    } else {
      for (size_t k = 0; k < nk; ++k) {
        if (!col_used[k]) continue;
        std::vector<std::pair<const Functional*, double>> query_parts;
        for (size_t q = 0; q < nq; ++q)
          if (table[q * nk + k]) query_parts.push_back({&qview.read[q], G});
        terms.push_back({combine(query_parts), kview.read[k]});
      }
    }
  }
  return terms;
}

}  // namespace

bool selector_holds(const Program& program, NodeId sel, NodeId key_node, const Value& key, NodeId query_node,
                    const Value& query) {
  const Node& node = program.node(sel);
  switch (node.kind) {
    case NodeKind::Select: {
      const Value& kv = node.inputs[0] == key_node ? key : program.node(node.inputs[0]).constant;
      const Value& qv = node.inputs[1] == query_node ? query : program.node(node.inputs[1]).constant;
      return compare_select(node.comparison, kv, qv, node.span);
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

std::pair<int, int> head_dimensions(const LowerContext& ctx, NodeId head) {
  const Node& node = ctx.program.node(head);
  int conjuncts = 0;
  int dqk = int(selector_terms(ctx, node.inputs[0], conjuncts).size()) + 2;
  int dv = 1;
  if (node.kind == NodeKind::Aggregate && ctx.info(head).encoding == Encoding::Categorical)
    dv = int(ctx.info(head).values.size());
  return {dqk, dv};
}

std::vector<LoweredHead> lower_heads(const LowerContext& ctx, const std::vector<NodeId>& heads,
                                     const std::vector<double>& bos_in, double gain) {
  const Program& program = ctx.program;
  const int C = ctx.width;
  const double G = ctx.match_score;
  std::vector<double> y = layer_norm(bos_in, gain, ctx.options.layer_norm);
  std::vector<LoweredHead> lowered;
  for (NodeId id : heads) {
    const Node& node = program.node(id);
    bool width = node.kind == NodeKind::SelectorWidth;
    int m = 0;
    std::vector<Term> terms = selector_terms(ctx, node.inputs[0], m);
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
    // BOS as a key: exactly B for every query.
    double B = width ? m * G : (m - 0.5) * G;
    std::vector<double> key_at_bos = read_through(head.wk, y);
    std::vector<std::pair<const Functional*, double>> correction_parts;
    Functional base = ctx.unit(ctx.allocation.one, B);
    correction_parts.push_back({&base, 1.0});
    for (int t = 0; t < T; ++t) correction_parts.push_back({&terms[size_t(t)].query, -key_at_bos[size_t(t)]});
    ctx.put_column(head.wq, T, combine(correction_parts));
    ctx.put_column(head.wk, T, ctx.bos_read(), 1.0 / r);
    // BOS as a query: only itself, by far.
    std::vector<double> query_at_bos = read_through(head.wq, y);
    double other = 0;
    for (int t = 0; t < T; ++t) {
      double key_size = 0;
      for (const auto& [dim, w] : terms[size_t(t)].key) key_size += std::fabs(w);
      other += std::fabs(query_at_bos[size_t(t)]) * key_size;
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
    if (width) {
      values.push_back({});
      bos_target.push_back(1.0);
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
      const Value& d = node.default_value;
      bos_target.push_back(d.is_bool() ? (d.boolean ? 1.0 : 0.0) : d.number.to_double());
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
