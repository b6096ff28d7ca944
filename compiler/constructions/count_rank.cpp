// The count rank, a construction: `select(h, h, op)` where h = selector_width(select(x, x, ==))
// counts, at each position, the positions holding its value of x (Tracr's histogram; double_hist
// compares two positions' counts).
//
// Read as a one-hot, h has n + 1 values, so the head comparing two of them is a table of (n + 1)^2
// scores and the model grows with n^2 (54.9M parameters at max length 1,024). But only the order of
// the counts matters to any comparison, and x has m values: with C_b the count of value b, the rank
// r(a) = #{b : C_b < C_a} is strictly increasing in C_a (C_a < C_c puts a itself among c's smaller
// counts), so `h_k op h_q` holds exactly where `r(x_k) op r(x_q)` does, for every op. The rank has m
// values whatever n is.
//
// The model: m heads take the mean of each `x == b` over every position, the share s_b = C_b / n
// (a head each, scoring every key alike); an MLP sums, for the position's own value a, the steps
// [s_a - s_b > 0] over the other values b; another MLP writes the rank's one-hot for the selector's
// head. The shares of one input share one denominator n, so
// s_a - s_b is 0 or at least 1/n >= 1/max_len away from it: a step at 1/(2 max_len) with the
// lookups' margins (lower_mlp.cpp), gated on x == a, is exact at every length. 2m(m - 1) units.
//
// Bidirectional only: a causal query's count covers its prefix, and two positions' counts are
// then not counts of one input.
//
// The whole construction is this file and its row in the pipeline's table: its class is an
// MlpConstruction that no other file names (the passes ask it for its values, its reads and its
// units through construction.hpp's virtual functions).
#include <algorithm>
#include <stdexcept>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {
namespace {

// The most values of x ranked: the rank's MLP has 2m(m - 1) units (480 at 16), and each share is a
// head (n_head m + 1 or more).
constexpr size_t kMaxRankedValues = 16;
// Counts are ranked from a maximum length of max(16, m(m + 1)) on: below it the one-hot of the
// count, n + 1 values in one head, is the smaller model. Measured on double_hist.rasp over m values
// (parameters, the count's one-hot against the rank): m = 2 crosses between 12 and 16 (31,316 against
// 28,410 at 16), 4 between 16 and 24, 8 between 64 and 72 (299,272 against 253,584 at 72), 16
// between 192 and 256 (3,515,704 against 2,623,616 at 256).
size_t rank_from_length(size_t m) { return std::max<size_t>(16, m * (m + 1)); }

// The rank of the count of x's value at each position among the counts of every value x can take,
// #{b : count(b) < count(x_i)}: inputs = {x, share_1, ..., share_m}, share_j the mean of
// `x == values[j]` over every position.
class CountRank final : public MlpConstruction {
 public:
  explicit CountRank(std::vector<Value> counted) : values(std::move(counted)) {}
  const std::vector<Value> values;  // x's values, in the order of the shares

  const char* kind_name() const override { return "count_rank"; }
  std::string key() const override {
    std::string k;
    for (const Value& v : values) k += value_key(v) + ";";
    return k;
  }
  std::string detail() const override { return "its count's rank, summed"; }
  std::vector<Value> evaluate(const std::vector<ConstructionInput>& inputs, int n) const override;

  void infer(SopInfo& out) const override {
    const size_t m = values.size();
    for (size_t r = 0; r < m; ++r) out.values.push_back(Value::of_int(int64_t(r)));
    out.encoding = Encoding::Numerical;
    out.why = "the rank of its value's count among the counts of " + std::to_string(m) + " values, 0.." +
              std::to_string(m - 1) + ": an MLP over their shares (the means of each value)";
  }
  // x's one-hot gates the steps; the shares are numbers.
  std::vector<ReadKind> reads(size_t inputs) const override {
    std::vector<ReadKind> r(inputs, ReadKind::Numeric);
    r[0] = ReadKind::OneHot;
    return r;
  }
  std::string purpose(const Node& node) const override {
    return "the rank of its value's count, from " + std::to_string(node.inputs.size() - 1) + " shares";
  }
  std::vector<MlpUnit> mlp_units(const LowerContext& ctx, NodeId id, double sum, double square, double gain,
                                 double& min_margin) const override;
};

// x, where `sel` is `select(h, h, op)` with h = selector_width(select(x, x, ==)) over a categorical x
// whose values are pairwise different under `==` (1 and True are equal there, and would count
// together), at a maximum length where the rank is the smaller; else -1.
NodeId ranked_source(const Program& program, const Inference& inference, const CompileOptions& options, NodeId sel) {
  const Node& compare = program.node(sel);
  if (compare.kind != NodeKind::Select || compare.inputs[0] != compare.inputs[1]) return -1;
  const Node& width = program.node(compare.inputs[0]);
  if (width.kind != NodeKind::SelectorWidth) return -1;
  const Node& same = program.node(width.inputs[0]);
  if (same.kind != NodeKind::Select || same.comparison != Comparison::Eq || same.inputs[0] != same.inputs[1])
    return -1;
  const NodeId x = same.inputs[0];
  const SopInfo& info = inference.info[size_t(x)];
  if (program.node(x).kind == NodeKind::Constant || !info.values_known || info.encoding != Encoding::Categorical ||
      info.values.size() < 2 || info.values.size() > kMaxRankedValues ||
      size_t(options.max_len) < rank_from_length(info.values.size()))
    return -1;
  try {
    for (size_t i = 0; i < info.values.size(); ++i)
      for (size_t j = i + 1; j < info.values.size(); ++j)
        if (compare_select(Comparison::Eq, info.values[i], info.values[j], same.span)) return -1;
  } catch (const UserError&) {
    return -1;
  }
  return x;
}

std::vector<Value> CountRank::evaluate(const std::vector<ConstructionInput>& inputs, int n) const {
  const std::vector<Value>& x = *inputs[0].sop;
  std::vector<Value> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    // The position's own share: that of its value among `values` (x holds no other value).
    size_t own = 0;
    while (own < values.size() && !same_value(values[own], x[size_t(i)])) ++own;
    if (own == values.size()) throw std::logic_error("count_rank: a value of x outside its value set");
    const Value& mine = (*inputs[1 + own].sop)[size_t(i)];
    int64_t rank = 0;
    for (size_t b = 0; b < values.size(); ++b) rank += value_less((*inputs[1 + b].sop)[size_t(i)], mine) ? 1 : 0;
    out[size_t(i)] = Value::of_int(rank);
  }
  return out;
}

std::vector<MlpUnit> CountRank::mlp_units(const LowerContext& ctx, NodeId id, double sum, double square, double gain,
                                          double& min_margin) const {
  const Node& node = ctx.program.node(id);
  const CategoricalView x = ctx.categorical_view(node.inputs[0]);
  const int written = ctx.allocation.numeric.at(id);
  // The shares sum to 1 and their squares to at most 1: LayerNorm scales every read by at least
  // what one more unit in the residual would.
  const double smallest_scale = read_scale(ctx, {1.0}, sum, square, gain);
  const double half_gap = 0.5 / double(ctx.options.max_len);
  const double slope = kStepReach / (half_gap * smallest_scale);
  // The gate outweighs the step's reach on its on side (s_a - s_b <= 1), as a lookup's does.
  const double gate = slope * (1.0 - half_gap) + 2.0 * kStepReach / smallest_scale;
  std::vector<MlpUnit> units;
  for (size_t a = 0; a < values.size(); ++a) {
    const auto own = std::find_if(x.values.begin(), x.values.end(),
                                  [&](const Value& v) { return same_value(v, values[a]); });
    if (own == x.values.end()) continue;  // a value no position holds here: its steps never gate on
    const Functional& holds = x.read[size_t(own - x.values.begin())];
    for (size_t b = 0; b < values.size(); ++b) {
      if (b == a) continue;
      // slope * (s_a - s_b - 1/(2 max_len)) + gate * ([x == a] - 1): on exactly where x holds a and
      // b's count is below a's.
      Functional in;
      for (const auto& [dim, w] : ctx.numeric_view(node.inputs[1 + a])) in.push_back({dim, slope * w});
      for (const auto& [dim, w] : ctx.numeric_view(node.inputs[1 + b])) in.push_back({dim, -slope * w});
      for (const auto& [dim, w] : holds) in.push_back({dim, gate * w});
      in.push_back({ctx.allocation.one, -slope * half_gap - gate});
      const std::string label = ctx.program.label(id) + "[" + to_display(values[b]) + "<" +
                                to_display(values[a]) + "]";
      units.push_back({in, kStepHalfWidth, {{written, 0.5 / kStepHalfWidth}}, label + "+"});
      units.push_back({in, -kStepHalfWidth, {{written, -0.5 / kStepHalfWidth}}, label + "-"});
    }
  }
  min_margin = std::min(min_margin, kStepMargin - 0.5);
  return units;
}

}  // namespace

bool count_ranks(Program& program, const Inference& inference, const CompileOptions& options) {
  if (options.mode != Mode::Bidirectional) return false;
  std::vector<NodeId> source(program.nodes.size(), -1);
  bool any = false;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    if (!inference.info[size_t(id)].needed) continue;
    source[size_t(id)] = ranked_source(program, inference, options, id);
    any = any || source[size_t(id)] >= 0;
  }
  if (!any) return false;
  program = rewrite_nodes(program, [&](NodeId id, Node& node, const std::vector<NodeId>& remap, Program& out) {
    if (source[size_t(id)] < 0) return NodeId(-1);
    const NodeId x = remap[size_t(source[size_t(id)])];
    const NodeId width = program.node(id).inputs[0];
    const Span where = program.node(width).span;
    // The names say what each node is of the user's count (`hist_rank`); an unnamed count leaves
    // them to its source, which is where they show.
    const std::string name = program.node(width).name;
    auto named = [&](const std::string& suffix) { return name.empty() ? std::string() : name + suffix; };
    const NodeMaker maker{out, where};
    const NodeId one = maker.constant(Value::of_int(1));
    const NodeId every = maker.make(NodeKind::Select, {one, one});  // full_s
    const std::vector<Value>& values = inference.info[size_t(source[size_t(id)])].values;
    std::vector<NodeId> rank_inputs{x};
    for (size_t j = 0; j < values.size(); ++j) {
      const NodeId is_value = maker.map(ElementOp::Eq, {x, maker.constant(values[j])});
      const NodeId indicator = maker.map(ElementOp::Indicator, {is_value});
      const NodeId share =
          maker.make(NodeKind::Aggregate, {every, indicator}, named("_share_" + std::to_string(j + 1)));
      out.nodes[size_t(share)].detail = "share of " + to_display(values[j]);
      out.nodes[size_t(share)].annotation = Encoding::Numerical;
      out.nodes[size_t(share)].default_value = Value::of_int(0);
      rank_inputs.push_back(share);
    }
    Node rank = construction_node(std::make_shared<CountRank>(values));
    rank.span = where;
    rank.name = named("_count_rank");
    rank.inputs = std::move(rank_inputs);
    const NodeId counted = push_node(out, std::move(rank));
    // The selector's head reads a one-hot: the rank's, written by a lookup of its own.
    const NodeId read = maker.map(ElementOp::Pos, {counted}, named("_rank"));
    out.nodes[size_t(read)].annotation = Encoding::Categorical;
    out.nodes[size_t(read)].detail = "its count's rank";
    node.inputs = {read, read};
    return NodeId(-1);
  });
  return true;
}

}  // namespace raspc::compiler
