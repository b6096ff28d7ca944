// Part of schedule and lower: two numeric reads of one lookup read as one, u1 + lambda*u2.
//
// An MLP discretises a numeric read with steps at the midpoints between the values it can hold
// (lower_mlp.cpp), and a step along one read cannot see another. Two selector widths of one block
// are two such reads: the stable sort's `w1 + w2` (split_widths.cpp), most_freq's key from a
// frequency and a has_focus. Along a line u1 + lambda*u2, though, the finitely many value pairs
// that occur land on points, and where pairs with different outputs land on different points,
// steps along the line discretise both reads at once, in their own block's MLP. Otherwise each
// width is made a one-hot first and the map waits for the next block's MLP: one block more than
// RASP counts. (One hidden layer represents any function of finitely many points so; the price is
// the gap between neighbouring points, which sets the steps' slope.)
//
// The gap bound: a selector width's 1/(w+1) is off by a relative error that its head's score
// errors set, G (about 40) times the rounding of the one-hot reads it scores. Over embeddings the
// scratch values come out within about 2e-6 (measured: 1.5e-6 for the stable sort at max length
// 12). In later blocks the keys are MLP outputs among more one-hots, and reads of sets of values
// (`key < key'`) sum many rounded entries: 1e-5 to 1e-4 (measured 8e-5 for most_freq's sort at
// max length 16). A half-gap of five times the error keeps every read on its side of every step:
// 1e-5 and 5e-4. The parts of a split width add up to at most the keys a query sees
// (joint_combinations), which keeps the points few: the stable sort of tokens projects up to max
// length 28, a sort of keys an MLP computed up to 11.
#include <algorithm>
#include <cmath>
#include <map>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

// Beyond this many points the gap is below the bound for any lambda (the points span a line of
// length at most 2 after normalising), so the search is not worth its time.
constexpr size_t kMostProjectedPoints = 1 << 14;

// The half-gap of one lambda, or a negative number where points with different outputs coincide.
double half_gap_at(const std::vector<ProjectedGroup>& groups, double lambda,
                   std::vector<std::pair<double, int>>& line) {
  double gap = 1e30;
  for (const ProjectedGroup& group : groups) {
    line.clear();
    for (const ProjectedPoint& p : group.points) line.push_back({p.u1 + lambda * p.u2, p.output});
    std::sort(line.begin(), line.end());
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

// What a lookup reads for one input value: 1/(w+1) for a selector width's scratch, the number
// itself for a numerical s-op.
double numeric_read_value(ReadKind read, const Value& v) {
  return read == ReadKind::Scratch ? 1.0 / (number_of(v) + 1.0) : number_of(v);
}

}  // namespace

bool projected_points(const Inference& inference, const std::vector<NodeId>& support,
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
    groups[it->second].points.push_back({numeric_read_value(reads[numeric[0]], assignment[numeric[0]]),
                                         numeric_read_value(reads[numeric[1]], assignment[numeric[1]]), output,
                                         assignment});
  }
  return true;
}

double min_projected_half_gap(const Program& program, const Inference& inference, const std::vector<NodeId>& support,
                              const std::vector<ReadKind>& reads) {
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
  for (size_t i = 0; i < support.size(); ++i) {
    if (reads[i] == ReadKind::Numeric) exact = false;
    if (reads[i] == ReadKind::Scratch) exact = exact && reads_embeddings(program.node(support[i]).inputs[0]);
  }
  return exact ? kMinProjectedHalfGap : kMinProjectedHalfGapAfterMlp;
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

std::optional<double> projection_for(const Program& program, const Inference& inference, NodeId node,
                                     const std::vector<NodeId>& support, const std::vector<ReadKind>& reads,
                                     int max_len) {
  std::map<Value, int, ValueLess> names;
  auto output_of = [&](const std::vector<Value>& assignment) {
    Value v;
    if (!evaluate_fused(program, node, support, assignment, v)) return -1;
    return names.emplace(v, int(names.size())).first->second;
  };
  std::vector<ProjectedGroup> groups;
  if (!projected_points(inference, support, reads, max_len, output_of, groups)) return std::nullopt;
  std::optional<ReadProjection> projection =
      project_reads(groups, min_projected_half_gap(program, inference, support, reads));
  if (!projection) return std::nullopt;
  return projection->lambda;
}

}  // namespace raspc::compiler
