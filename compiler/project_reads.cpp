// Part of schedule and lower: two numeric reads of one lookup read as one, u1 + lambda*u2.
//
// An MLP discretises a numeric read with steps at the midpoints between the values it can hold
// (lower_mlp.cpp), and a step along one read cannot see another. Two selector widths of one block
// are two such reads: the stable sort's `w1 + w2` (constructions/width_part.cpp), most_freq's key from a
// frequency and a has_focus. Along a line u1 + lambda*u2, though, the finitely many value pairs
// that occur land on points, and where pairs with different outputs land on different points,
// steps along the line discretise both reads at once, in their own block's MLP. Otherwise each
// width is made a one-hot first and the map waits for the next block's MLP: one block more than
// RASP counts. (One hidden layer represents any function of finitely many points so; the price is
// the gap between neighbouring points, which sets the steps' slope.)
//
// The gap bound: a selector width's head weighs its selected keys with a relative error that its
// score errors set, and moves a scratch value u by up to about e * 4u(1-u). Under LayerNorm a
// Q or K column that reads one-hots cancels the residual's mean through the `zero` dimension
// (allocate.cpp): one rounded term of about G times the mean (a few 1e-3 of a unit read) for
// every row it reads, up to n for a table over positions. Where the keys are one-hots an MLP
// wrote by steps, each entry also carries its steps' rounding (a step's two units cancel to
// float32's rounding of their pre-activation, over 2H: lower_internal.hpp). The scores multiply
// both by G, a part's ln(n+1) + 8 (width_match_score).
// Measured (bench/split_width_errors.py, 200 to 500 inputs a length; test_constructions/width_part.cpp;
// bench/HISTORY.md, "Tenth round"), e over embeddings (the causal stable sort of tokens): 4.4e-6
// at 64, 1.1e-5 at 128, 2.2e-5 at 224, 5.1e-5 at 264, 5.4e-5 at 280 (6.1e-5 at 352); over an
// MLP's one-hots (most_freq): at most 9.4e-6 to 48, then 1.1e-5 to 5.6e-5 up to 288 without a
// trend, in spikes at single lengths (5.5e-5 at 80, 5.3e-5 at 128, 5.6e-5 at 216; 1.5e-4 at
// 320). The compiler takes e = 8e-6 + 2.5e-7 n over embeddings and 8.5e-5 over one-hots, 1.3
// times the largest measured or more up to the lengths they allow, and keeps a half-gap of five
// times e * 4u(1-u): every read stays on its side of every step.
//
// The parts of a split width add up to at most the keys a query sees (joint_combinations), which
// keeps the points few, and their scratch is nearly linear in w (scratch_level), which keeps sums
// apart: most_freq's w1 + w2 projects up to max length 257, where 1/(w+1) stopped at 11, and the
// causal stable sort of tokens up to 280, where it stopped at 28.
#include <algorithm>
#include <cmath>
#include <map>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

// Beyond this many points the gap is below the bound for any lambda (a split width's sum at max
// length 256 has 32,896), so the search is not worth its time.
constexpr size_t kMostProjectedPoints = 1 << 16;

// A group's points along u1 + lambda*u2, in order, with their outputs.
void sort_along(const ProjectedGroup& group, double lambda, std::vector<std::pair<double, int>>& line) {
  line.clear();
  for (const ProjectedPoint& p : group.points) line.push_back({p.u1 + lambda * p.u2, p.output});
  std::sort(line.begin(), line.end());
}

// The half-gap of one lambda, or a negative number where points with different outputs coincide.
double half_gap_at(const std::vector<ProjectedGroup>& groups, double lambda,
                   std::vector<std::pair<double, int>>& line) {
  double gap = 1e30;
  for (const ProjectedGroup& group : groups) {
    sort_along(group, lambda, line);
    // Runs of coincident points must agree; the gap is between runs whose outputs differ.
    size_t run = 0;
    for (size_t j = 1; j < line.size(); ++j) {
      double d = line[j].first - line[j - 1].first;
      if (d <= 1e-12 * (1.0 + std::fabs(line[j].first))) {
        if (line[j].second != line[run].second) return -1;
        continue;
      }
      if (line[j].second != line[run].second) gap = std::min(gap, 0.5 * d);
      run = j;
    }
  }
  return gap / std::max(1.0, lambda);
}

// What a lookup reads for one input value: a selector width's scratch level, the number itself for
// a numerical s-op.
double numeric_read_value(const Node& node, int max_len, ReadKind read, const Value& v) {
  return read == ReadKind::Scratch ? scratch_level(node, max_len, number_of(v)) : number_of(v);
}

}  // namespace

bool projected_points(const Program& program, const Inference& inference, const std::vector<NodeId>& support,
                      const std::vector<ReadKind>& reads, int max_len,
                      const std::function<int(const std::vector<Value>&)>& output_of,
                      std::vector<ProjectedGroup>& groups) {
  groups.clear();
  std::vector<size_t> numeric;
  for (size_t i = 0; i < support.size(); ++i)
    if (reads[i] != ReadKind::OneHot) numeric.push_back(i);
  if (numeric.size() != 2) return false;
  for (NodeId s : support)
    if (!inference.info[size_t(s)].values_known) return false;
  std::vector<JointCombination> combinations;
  if (!joint_combinations(inference, support, max_len, kMostProjectedPoints, combinations)) return false;
  std::map<std::vector<size_t>, size_t> group_of;
  std::vector<Value> assignment(support.size());
  for (const JointCombination& c : combinations) {
    std::vector<size_t> onehot_digits;
    for (size_t i = 0; i < support.size(); ++i) {
      assignment[i] = inference.info[size_t(support[i])].values[c.digits[i]];
      if (reads[i] == ReadKind::OneHot) onehot_digits.push_back(c.digits[i]);
    }
    int output = output_of(assignment);
    if (output < 0) continue;
    auto [it, fresh] = group_of.emplace(onehot_digits, groups.size());
    if (fresh) groups.push_back({onehot_digits, {}});
    auto read = [&](size_t i) {
      return numeric_read_value(program.node(support[i]), max_len, reads[i], assignment[i]);
    };
    groups[it->second].points.push_back({read(numeric[0]), read(numeric[1]), output, assignment});
  }
  return true;
}

double min_projected_half_gap(const Program& program, const Inference& inference, const std::vector<NodeId>& support,
                              const std::vector<ReadKind>& reads, int max_len) {
  std::function<bool(NodeId)> reads_embeddings = [&](NodeId sel) {
    const Node& node = program.node(sel);
    if (node.kind != NodeKind::Select) {
      for (NodeId in : node.inputs)
        if (!reads_embeddings(in)) return false;
      return true;
    }
    for (NodeId side : {node.inputs[0], node.inputs[1]}) {
      NodeId source = comparison_source(program, inference, side);
      if (source >= 0 && program.node(source).kind != NodeKind::Tokens && program.node(source).kind != NodeKind::Indices)
        return false;
    }
    return true;
  };
  bool exact = true;
  double spread = 0;  // the largest 4u(1-u) of a scratch read
  for (size_t i = 0; i < support.size(); ++i) {
    if (reads[i] == ReadKind::Numeric) exact = false;
    if (reads[i] != ReadKind::Scratch) continue;
    exact = exact && reads_embeddings(program.node(support[i]).inputs[0]);
    for (const Value& v : inference.info[size_t(support[i])].values) {
      const double u = scratch_level(program.node(support[i]), max_len, number_of(v));
      spread = std::max(spread, 4.0 * u * (1.0 - u));
    }
  }
  return min_projected_half_gap(!exact, max_len) * (spread > 0 ? spread : 1.0);
}

double min_projected_half_gap(bool after_mlp, int max_len) {
  const double n = max_len;
  return 5.0 * (after_mlp ? 8.5e-5 : 8e-6 + 2.5e-7 * n);
}

std::optional<ReadProjection> project_reads(const std::vector<ProjectedGroup>& groups, double min_half_gap) {
  size_t points = 0;
  for (const ProjectedGroup& g : groups) points += g.points.size();
  if (points > kMostProjectedPoints) return std::nullopt;
  std::vector<std::pair<double, int>> line;
  ReadProjection best;
  best.half_gap = -1;
  auto consider = [&](double lambda) {
    double gap = half_gap_at(groups, lambda, line);
    if (gap > best.half_gap) best = {lambda, gap};
  };
  // A coarse sweep over six decades, lambda = 1 exactly (symmetric maps such as w1 + w2 put
  // mirrored pairs on one point), then a finer one around the best.
  constexpr int kCoarse = 240;
  const double lo = std::log(1e-3), hi = std::log(1e3), step = (hi - lo) / kCoarse;
  for (int s = 0; s <= kCoarse; ++s) consider(std::exp(lo + step * s));
  consider(1.0);
  const double centre = std::log(best.lambda);
  for (int s = -20; s <= 20; ++s) consider(std::exp(centre + step * s / 20.0));
  if (best.half_gap < min_half_gap) return std::nullopt;
  return best;
}

double projected_half_gap(const std::vector<ProjectedGroup>& groups, double lambda) {
  std::vector<std::pair<double, int>> line;
  return half_gap_at(groups, lambda, line);
}

namespace {

// The points of the lookup of `node`, named by the value it computes there.
bool lookup_points(const Program& program, const Inference& inference, NodeId node, const std::vector<NodeId>& support,
                   const std::vector<ReadKind>& reads, int max_len, std::vector<ProjectedGroup>& groups) {
  std::map<Value, int, ValueLess> names;
  auto output_of = [&](const std::vector<Value>& assignment) {
    Value v;
    if (!evaluate_fused(program, node, support, assignment, v)) return -1;
    return names.emplace(v, int(names.size())).first->second;
  };
  return projected_points(program, inference, support, reads, max_len, output_of, groups);
}

}  // namespace

std::optional<double> projection_for(const Program& program, const Inference& inference, NodeId node,
                                     const std::vector<NodeId>& support, const std::vector<ReadKind>& reads,
                                     int max_len) {
  std::vector<ProjectedGroup> groups;
  if (!lookup_points(program, inference, node, support, reads, max_len, groups)) return std::nullopt;
  std::optional<ReadProjection> projection =
      project_reads(groups, min_projected_half_gap(program, inference, support, reads, max_len));
  if (!projection) return std::nullopt;
  return projection->lambda;
}

}  // namespace raspc::compiler
