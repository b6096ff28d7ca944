// MLPs: lookup tables over the input combinations that can occur, GELU-safe by margins.
//
// One job group reads some categorical inputs (one-hot) and at most one numeric input (a
// numerical s-op with a finite value set, or a selector width's 1/(w+1) scratch), or two read as
// one along a line (project_reads.cpp). For every combination c of the categorical values:
//   - a gate unit K*(sum of c's one-hot reads - (m-1)) is K when c holds and <= 0 otherwise (0
//     exactly when all but one input match, -K or less below that), and writes f(c)/K per unit;
//   - for a numeric input u with sorted (normalised) values u_1 < ... < u_p, f(c, u_b) at a base
//     level b comes from the gate and every change f(c, u_j) - f(c, u_{j-1}) from a step at the
//     midpoint t_j: (relu(z + H) - relu(z - H)) / 2H with z = +-k*(u - t_j) - K'*(m - reads of c)
//     and H = kStepHalfWidth, on for the values beyond t_j seen from b; the slope k puts
//     |z| >= H + 10 at every value that occurs, and K' shuts the step off for other combinations.
// Every pre-activation that can occur is 0 or at least 10 away from it, so GELU is ReLU there to
// float precision. Several numerical inputs without categorical ones must form an affine map,
// computed by one unit offset into GELU's linear regime.
//
// Over 500 lines: the gates, the steps, the reads through a sum and along a projected line all
// build the units of one job group against the same margins (kStepReach, the gate's K), and the
// proof that every pre-activation stays clear of 0 is the sum of them; split, the margins would be
// argued in several places.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {
namespace {

constexpr double kGate = 20.0;        // a gate's pre-activation when its combination holds
// A lookup over at most this many combinations is left as it is (one unit each).
constexpr size_t kSmallLookup = 8;

using Target = std::map<int, double>;  // residual dimension -> value written

void add_into(Target& into, const Target& t, double scale) {
  for (const auto& [dim, v] : t) into[dim] += v * scale;
}



struct Builder {
  const LowerContext& ctx;
  LoweredBlock& block;
  double& min_margin;
  UnitCount& count;
  std::vector<Functional> fc_columns;
  std::vector<double> fc_bias;
  std::vector<Target> proj_rows;
  std::vector<std::string> labels;
  Target proj_bias;

  void unit(Functional in, double bias, Target out, std::string label) {
    count.add();
    fc_columns.push_back(std::move(in));
    fc_bias.push_back(bias);
    proj_rows.push_back(std::move(out));
    labels.push_back(std::move(label));
  }
};

// What the job group writes for one assignment of its inputs' values.
struct GroupTarget {
  const LowerContext& ctx;
  const std::vector<const MlpJob*>& jobs;

  bool operator()(const std::vector<Value>& assignment, Target& out) const {
    bool any = false;
    for (const MlpJob* job : jobs) {
      NodeId node = job->node;
      const Node& n = ctx.program.node(node);
      Value v;
      if (counts_keys(n)) {
        v = assignment[0];
        if (job->erase_scratch) {
          out[ctx.allocation.scratch.at(node)] += -scratch_level(n, ctx.options.max_len, number_of(v));
          any = true;
          continue;
        }
      } else if (!evaluate_fused(ctx.program, node, job->inputs, assignment, v)) {
        continue;
      }
      any = true;
      if (ctx.inference.numbers.of(node) == NumberRole::WidthNumber) {
        const std::vector<double> group = ctx.number_group(number_of(v));
        const std::vector<int>& dims = ctx.allocation.number.at(node);
        for (size_t j = 0; j < dims.size(); ++j) out[dims[j]] += group[j];
      } else if (ctx.info(node).encoding == Encoding::Numerical) {
        out[ctx.allocation.numeric.at(node)] += number_of(v);
      } else {
        const std::vector<Value>& values = ctx.info(node).values;
        for (size_t i = 0; i < values.size(); ++i)
          if (same_value(values[i], v)) out[ctx.allocation.onehot.at(node)[i]] += 1.0;
      }
    }
    return any;
  }
};

std::string combination_label(const LowerContext& ctx, const std::vector<NodeId>& inputs,
                              const std::vector<Value>& values) {
  std::string s;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) s += ",";
    s += ctx.program.label(inputs[i]) + "=" + to_display(values[i]);
  }
  return s;
}

}  // namespace

double read_scale(const LowerContext& ctx, std::initializer_list<double> scratch, double sum, double square,
                  double gain) {
  if (!ctx.options.layer_norm) return 1.0;
  for (double s : scratch) sum += s, square += s * s;
  double c = ctx.width, mean = sum / c;
  double sigma = std::sqrt(square / c - mean * mean + 1e-5);
  return gain / sigma;
}

namespace {

// Where a lookup's numeric read ranges: its lowest and highest value and the smallest factor
// LayerNorm multiplies every read by at any of its values (the steps' slopes and gates are set
// from them).
struct ReadRange {
  double low = 0, high = 0, smallest_scale = 1e30;
  bool empty = true;
  void add(double read, double scale) {
    low = empty ? read : std::min(low, read);
    high = empty ? read : std::max(high, read);
    empty = false;
    smallest_scale = std::min(smallest_scale, scale);
  }
};

// What a lookup writes when its numeric read is at one level.
struct StepLevel {
  double read = 0;   // the level as the MLP reads it
  std::string name;  // for unit labels
  Target out;
  bool defined = true;  // false where the map is undefined (that input cannot occur)
};

// A step between levels j-1 and j of a lookup: where it sits along the read, how steeply it
// rises, and how far its pre-activation reaches on either side of it within the read's range.
struct Step {
  double threshold = 0, slope = 0;
  double above = 0, below = 0;  // slope * (high - threshold), slope * (threshold - low); 0 if no step
  Target rise;                  // level j's value minus level j-1's (empty: no step)
  bool changes() const { return !rise.empty(); }
};

// The level a lookup's steps start from, written by the gate; every other level's value is added
// by the steps between it and this one, each on for the reads on its far side. A step pair's two
// units cancel only to about their pre-activation's ulp, so a step on for reads 2,000 half-gaps
// away from it (a prefix mean's sign at max length 1,024) writes 1 +- 0.002, and a gate must
// outweigh the step's whole reach: a read error e of the gating one-hots moves it by gate * e.
// The base level is the one whose steps reach least far on their on sides (the first of those):
// a threshold near one end of the range points its step at that end (dyck1's `prev_imbalances >
// 0` is on below its step, 10.5 at most, instead of up to 20,000 above it).
size_t base_level(const std::vector<Step>& steps) {
  const size_t L = steps.size();  // steps[j] between levels j-1 and j; steps[0] unused
  std::vector<double> down(L, 0.0), up(L + 1, 0.0);
  for (size_t j = 1; j < L; ++j) down[j] = std::max(down[j - 1], steps[j].below);
  for (size_t j = L; j-- > 1;) up[j] = std::max(up[j + 1], steps[j].above);
  size_t best = 0;
  double least = 0;
  for (size_t p = 0; p < L; ++p) {
    const double reach = std::max(down[p], up[p + 1]);
    if (p == 0 || reach < least * (1 - 1e-9)) best = p, least = reach;
  }
  return best;
}

// One combination of the gating inputs (`matched`: their m one-hot reads summed, `label`) and, along
// `numeric_read`, the value written at each level (sorted by read, within `range`): the base
// level's (base_level) through a gate unit, every change through a step pair at the midpoint, on
// for the reads on the far side of it from the base. With m = 0 the gate is a bias.
//
// Each step has its own slope, from its own neighbours, the values nearest its midpoint: every
// value is at least kStepMargin from it, and steps between far-apart values stay gentle. What a
// step writes is rounded in float32 to about its pre-activation's ulp (the pair's two units
// cancel), and a later head multiplies that error by its match score; gentle steps keep it near
// 5e-7 instead of 1e-5 and more.
void emit_gated_steps(const LowerContext& ctx, Builder& builder, const Functional& matched, size_t m,
                      const std::string& label, const Functional& numeric_read, const std::string& numeric_name,
                      std::vector<StepLevel> levels, const ReadRange& range, const Span& where) {
  int first_defined = -1;
  for (size_t j = 0; j < levels.size(); ++j)
    if (levels[j].defined) {
      if (first_defined < 0) first_defined = int(j);
    } else if (first_defined >= 0) {
      levels[j].out = levels[j - 1].out;  // keep the neighbouring value
    }
  if (first_defined < 0) return;
  for (int j = first_defined - 1; j >= 0; --j) levels[size_t(j)].out = levels[size_t(first_defined)].out;

  std::vector<Step> steps(levels.size());
  for (size_t j = 1; j < levels.size(); ++j) {
    Step& step = steps[j];
    step.rise = levels[j].out;
    add_into(step.rise, levels[j - 1].out, -1.0);
    for (auto it = step.rise.begin(); it != step.rise.end();)
      it = std::fabs(it->second) < 1e-15 ? step.rise.erase(it) : std::next(it);
    if (!step.changes()) continue;
    step.threshold = 0.5 * (levels[j - 1].read + levels[j].read);
    double half = 0.5 * (levels[j].read - levels[j - 1].read);
    if (!(half > 0)) fail_at(where, "internal: two values with different outputs read alike in one lookup");
    step.slope = kStepReach / (half * range.smallest_scale);
    step.above = step.slope * std::max(0.0, range.high - step.threshold);
    step.below = step.slope * std::max(0.0, step.threshold - range.low);
  }

  const size_t pivot = base_level(steps);
  const Target& base = levels[pivot].out;
  if (!base.empty()) {
    if (m == 0) {
      add_into(builder.proj_bias, base, 1.0);
    } else {
      Functional in;
      for (const auto& [dim, w] : matched) in.push_back({dim, w * kGate});
      in.push_back({ctx.allocation.one, -kGate * double(m - 1)});
      Target scaled;
      add_into(scaled, base, 1.0 / kGate);
      builder.unit(std::move(in), 0.0, std::move(scaled), label);
      builder.min_margin = std::min(builder.min_margin, kGate);
    }
  }
  for (size_t j = 1; j < levels.size(); ++j) {
    const Step& step = steps[j];
    if (!step.changes()) continue;
    // Above the base a step adds the change upwards, on for reads above its midpoint; below the
    // base it adds the change downwards, on for reads below it. Off for every other combination:
    // the gate outweighs the step's reach on its on side.
    const bool upward = j > pivot;
    const size_t near = upward ? j - 1 : j;
    Target fall;
    add_into(fall, step.rise, -1.0);
    const Target& delta = upward ? step.rise : fall;
    const Target& undo = upward ? fall : step.rise;
    const double sign = upward ? 1.0 : -1.0;
    const double gate = (upward ? step.above : step.below) + 2.0 * kStepReach / range.smallest_scale;
    Functional in;
    for (const auto& [dim, w] : numeric_read) in.push_back({dim, sign * w * step.slope});
    in.push_back({ctx.allocation.one, -sign * step.slope * step.threshold - gate * double(m)});
    for (const auto& [dim, w] : matched) in.push_back({dim, w * gate});
    std::string name = label + (label.empty() ? "" : ",") + numeric_name + (upward ? ">" : "<") + levels[near].name;
    Target rise_part, fall_part;
    add_into(rise_part, delta, 0.5 / kStepHalfWidth);
    add_into(fall_part, undo, 0.5 / kStepHalfWidth);
    builder.unit(in, kStepHalfWidth, std::move(rise_part), name + "+");
    builder.unit(in, -kStepHalfWidth, std::move(fall_part), name + "-");
    builder.min_margin = std::min(builder.min_margin, kStepMargin - 0.5);
  }
}

// What a lookup over one-hot inputs writes for each of its combinations, once.
struct TableOutputs {
  std::vector<Target> out;
  std::vector<uint8_t> defined;

  TableOutputs(const GroupTarget& target, const std::vector<CategoricalView>& views,
               const std::vector<JointCombination>& combinations)
      : out(combinations.size()), defined(combinations.size()) {
    std::vector<Value> assignment(views.size());
    for (size_t c = 0; c < combinations.size(); ++c) {
      for (size_t i = 0; i < views.size(); ++i) assignment[i] = views[i].values[combinations[c].digits[i]];
      defined[c] = target(assignment, out[c]);
    }
  }
  bool same(size_t a, size_t b) const {
    if (defined[a] != defined[b] || out[a].size() != out[b].size()) return false;
    for (auto x = out[a].begin(), y = out[b].begin(); x != out[a].end(); ++x, ++y)
      if (x->first != y->first || std::fabs(x->second - y->second) > 1e-12) return false;
    return true;
  }
};

// A lookup over one-hot inputs only where some inputs often do not matter once others are known
// (`shown = filler if seen_before else tokens`: once seen, every token gives the filler; a counting
// sort's `v1 if below_1 else (v2 if below_2 else ...)`: each step decides, whatever the later ones
// hold): the combinations split on one input at a time, and a set of them that writes one output
// is one unit gated on the inputs split on so far. Each combination falls in exactly one such set,
// so exactly one unit is on, as in a unit per combination. The input split on is the one whose
// parts need fewest units a level down (then the one that settles most parts). False (nothing emitted) when no split saves a unit.
bool lower_as_decision_tree(const LowerContext& ctx, const GroupTarget& target, const std::vector<NodeId>& inputs,
                            const std::vector<CategoricalView>& views,
                            const std::vector<JointCombination>& combinations, const Span& where, Builder& builder) {
  const size_t n = inputs.size();
  if (n < 2) return false;
  const TableOutputs table(target, views, combinations);
  auto uniform = [&](const std::vector<size_t>& members) {
    for (size_t c : members)
      if (!table.same(c, members[0])) return false;
    return true;
  };
  using Parts = std::map<size_t, std::vector<size_t>>;  // a digit of the input split on -> combinations
  auto split = [&](const std::vector<size_t>& members, size_t input) {
    Parts parts;
    for (size_t c : members) parts[combinations[c].digits[input]].push_back(c);
    return parts;
  };
  // The leaves: sets of combinations, each with the inputs it was split on (all n where none helped).
  struct Leaf {
    std::vector<size_t> members;
    std::vector<uint8_t> decided;
  };
  std::vector<Leaf> leaves;
  std::function<void(std::vector<size_t>, std::vector<uint8_t>)> grow = [&](std::vector<size_t> members,
                                                                             std::vector<uint8_t> decided) {
    if (uniform(members)) return leaves.push_back({std::move(members), std::move(decided)});
    // Fewest units a level down, then most parts settled there (their units read fewer inputs).
    size_t best = n, fewest = members.size(), most_settled = 0;
    for (size_t f = 0; f < n; ++f) {
      if (decided[f]) continue;
      size_t units = 0, settled = 0;
      for (const auto& [digit, part] : split(members, f)) {
        const bool one = uniform(part);
        units += one ? 1 : part.size();
        settled += one;
      }
      if (units < fewest || (units == fewest && best < n && settled > most_settled))
        fewest = units, best = f, most_settled = settled;
    }
    if (best == n) {
      for (size_t c : members) leaves.push_back({{c}, std::vector<uint8_t>(n, 1)});
      return;
    }
    decided[best] = 1;
    for (auto& [digit, part] : split(members, best)) grow(std::move(part), decided);
  };
  std::vector<size_t> all(combinations.size());
  for (size_t c = 0; c < all.size(); ++c) all[c] = c;
  grow(all, std::vector<uint8_t>(n, 0));
  if (leaves.size() >= combinations.size()) return false;

  for (const Leaf& leaf : leaves) {
    const size_t c = leaf.members[0];
    Functional matched;
    std::vector<NodeId> read;
    std::vector<Value> shown;
    for (size_t i = 0; i < n; ++i) {
      if (!leaf.decided[i]) continue;
      const size_t digit = combinations[c].digits[i];
      read.push_back(inputs[i]);
      shown.push_back(views[i].values[digit]);
      for (const auto& entry : views[i].read[digit]) matched.push_back(entry);
    }
    StepLevel level;
    level.out = table.out[c];
    level.defined = table.defined[c];
    emit_gated_steps(ctx, builder, matched, read.size(), combination_label(ctx, read, shown), {}, "", {level},
                     ReadRange{}, where);
  }
  return true;
}

// A lookup over categorical inputs some of which, numbers all, enter only through a signed sum
// (`indices + length - p`, `w1 + w2`, `indices > p`): the sum is read linearly, so the other inputs'
// combinations gate steps along it, instead of a unit per combination of them all. False (nothing
// emitted) when no sum of two or three inputs makes fewer units.
bool lower_through_sum(const LowerContext& ctx, const GroupTarget& target, const std::vector<NodeId>& inputs,
                       const std::vector<CategoricalView>& views, const std::vector<JointCombination>& combinations,
                       Builder& builder) {
  const size_t n = inputs.size();
  std::optional<TableOutputs> table;  // built at the first comparison: most lookups have no sum
  auto same = [&](size_t a, size_t b) {
    if (!table) table.emplace(target, views, combinations);
    return table->same(a, b);
  };
  std::vector<const std::vector<Value>*> values;
  for (const CategoricalView& view : views) values.push_back(&view.values);
  const std::optional<SumRead> best = find_sum_read(values, combinations, same);
  if (!best) return false;
  if (!table) table.emplace(target, views, combinations);

  Functional read;
  std::string name;
  for (size_t j = 0; j < best->members.size(); ++j) {
    size_t i = best->members[j];
    for (const auto& [dim, w] : ctx.numeric_view(inputs[i])) read.push_back({dim, w * best->signs[j]});
    name += (j == 0 ? "" : best->signs[j] > 0 ? "+" : "-") + ctx.program.label(inputs[i]);
  }
  ReadRange range;
  for (const auto& [rest, levels] : best->levels)
    for (const auto& [u, c] : levels) range.add(u, 1.0);

  std::vector<NodeId> gating;
  for (size_t i = 0, j = 0; i < n; ++i)
    if (j < best->members.size() && best->members[j] == i) ++j;
    else gating.push_back(inputs[i]);
  for (const auto& [rest, levels] : best->levels) {
    Functional matched;
    std::vector<Value> shown;
    for (size_t i = 0, j = 0, r = 0; i < n; ++i) {
      if (j < best->members.size() && best->members[j] == i) { ++j; continue; }
      shown.push_back(views[i].values[rest[r]]);
      for (const auto& entry : views[i].read[rest[r++]]) matched.push_back(entry);
    }
    std::vector<StepLevel> steps;
    for (const auto& [u, c] : levels) {
      std::ostringstream text;
      text << u;
      steps.push_back({u, text.str(), table->out[c], bool(table->defined[c])});
    }
    emit_gated_steps(ctx, builder, matched, gating.size(), combination_label(ctx, gating, shown), read, name,
                     std::move(steps), range, ctx.program.node(inputs[best->members[0]]).span);
  }
  return true;
}

// A lookup reading two numeric inputs along u1 + lambda*u2 (project_reads.cpp): every combination
// of the one-hot inputs gates steps along that one read, at the midpoints between neighbouring
// points whose outputs differ.
void lower_projected(const LowerContext& ctx, const GroupTarget& target, const MlpJob& job, double sum, double square,
                     double gain, Builder& builder) {
  const std::vector<NodeId>& inputs = job.inputs;
  std::map<Target, int> names;
  std::vector<Target> outputs;
  auto output_of = [&](const std::vector<Value>& assignment) {
    Target out;
    if (!target(assignment, out)) return -1;
    auto [it, fresh] = names.emplace(std::move(out), int(outputs.size()));
    if (fresh) outputs.push_back(it->first);
    return it->second;
  };
  // The schedule chose the line from this map's outputs; the group's (several maps of the same
  // inputs) must keep their points as far apart.
  const double lambda = job.projected_lambda;
  std::vector<ProjectedGroup> groups;
  if (!projected_points(ctx.program, ctx.inference, inputs, job.reads, ctx.options.max_len, output_of, groups) ||
      projected_half_gap(groups, lambda) <
          min_projected_half_gap(ctx.program, ctx.inference, inputs, job.reads, ctx.options.max_len))
    fail_at(ctx.program.node(job.node).span,
            "internal: the schedule's line does not keep this lookup's values apart");

  std::vector<size_t> numeric, onehot;
  for (size_t i = 0; i < inputs.size(); ++i) (job.reads[i] == ReadKind::OneHot ? onehot : numeric).push_back(i);
  auto read_of = [&](size_t i) {
    return job.reads[i] == ReadKind::Scratch ? ctx.unit(ctx.allocation.scratch.at(inputs[i])) : ctx.numeric_view(inputs[i]);
  };
  Functional read = read_of(numeric[0]);
  for (const auto& [dim, w] : read_of(numeric[1])) read.push_back({dim, w * lambda});
  std::ostringstream name;
  name << ctx.program.label(inputs[numeric[0]]) << "+" << lambda << "*" << ctx.program.label(inputs[numeric[1]]);
  auto scale_at = [&](const ProjectedPoint& p) {
    return read_scale(ctx, {job.reads[numeric[0]] == ReadKind::Scratch ? p.u1 : 0.0,
                            job.reads[numeric[1]] == ReadKind::Scratch ? p.u2 : 0.0},
                      sum, square, gain);
  };

  // The points of every group along the line.
  ReadRange range;
  std::vector<std::vector<StepLevel>> lines(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<ProjectedPoint>& points = groups[g].points;
    std::sort(points.begin(), points.end(), [&](const ProjectedPoint& a, const ProjectedPoint& b) {
      return a.u1 + lambda * a.u2 < b.u1 + lambda * b.u2;
    });
    for (size_t j = 0; j < points.size(); ++j) {
      const ProjectedPoint& p = points[j];
      double t = p.u1 + lambda * p.u2;
      range.add(t, scale_at(p));
      lines[g].push_back({t,
                          "(" + to_display(p.assignment[numeric[0]]) + "," + to_display(p.assignment[numeric[1]]) + ")",
                          outputs[size_t(p.output)], true});
    }
  }

  std::vector<NodeId> onehot_inputs;
  std::vector<CategoricalView> views;
  for (size_t i : onehot) onehot_inputs.push_back(inputs[i]), views.push_back(ctx.categorical_view(inputs[i]));
  for (size_t g = 0; g < groups.size(); ++g) {
    Functional matched;
    std::vector<Value> shown;
    for (size_t a = 0; a < onehot.size(); ++a) {
      size_t digit = groups[g].onehot_digits[a];
      shown.push_back(views[a].values[digit]);
      for (const auto& entry : views[a].read[digit]) matched.push_back(entry);
    }
    emit_gated_steps(ctx, builder, matched, onehot.size(), combination_label(ctx, onehot_inputs, shown), read,
                     name.str(), std::move(lines[g]), range, ctx.program.node(job.node).span);
  }
}

// The values a selector width's scratch dimension holds, by the width's value: scratch_level; a
// width step's, its own (constructions/width_step.cpp).
std::vector<std::pair<Value, double>> scratch_levels(const LowerContext& ctx, NodeId width) {
  if (is_construction(ctx.program.node(width), WidthHeadKind::WidthStep))
    return static_cast<const WidthStep&>(*ctx.program.node(width).construction).scratch_levels(ctx.options.max_len);
  std::vector<std::pair<Value, double>> levels;
  for (const Value& v : ctx.info(width).values)
    levels.push_back({v, scratch_level(ctx.program.node(width), ctx.options.max_len, number_of(v))});
  return levels;
}

// A selector width's eraser when nothing else reads its scratch value as a one-hot (a projected
// read): one unit in GELU's linear regime writes -u, instead of a step per width. LayerNorm scales
// the read by s, within about 2e-6 of 1 beside the anchor, so (1 - s)(u + offset), a few 1e-5 at
// most, stays in the scratch dimension, which nothing reads again.
void erase_scratch_linearly(const LowerContext& ctx, NodeId width, double sum, double square, double gain,
                            Builder& builder) {
  double smallest_scale = 1e30;
  for (const auto& [value, read] : scratch_levels(ctx, width))
    smallest_scale = std::min(smallest_scale, read_scale(ctx, {read}, sum, square, gain));
  const int dim = ctx.allocation.scratch.at(width);
  const double offset = kStepMargin / smallest_scale;
  builder.unit({{dim, 1.0}, {ctx.allocation.one, offset}}, 0.0, Target{{dim, -1.0}},
               ctx.program.label(width) + "[erase]");
  builder.proj_bias[dim] += offset;
  builder.min_margin = std::min(builder.min_margin, kStepMargin);
}

void lower_group(const LowerContext& ctx, const std::vector<const MlpJob*>& jobs, double sum, double square,
                 double gain, Builder& builder) {
  const MlpJob& first = *jobs.front();
  const std::vector<NodeId>& inputs = first.inputs;
  GroupTarget target{ctx, jobs};
  const Span& where = ctx.program.node(first.node).span;

  if (first.projected()) return lower_projected(ctx, target, first, sum, square, gain, builder);
  if (const MlpConstruction* c = mlp_construction_of(ctx.program.node(first.node))) {
    for (MlpUnit& u : c->mlp_units(ctx, first.node, sum, square, gain, builder.min_margin))
      builder.unit(std::move(u.in), u.bias, std::move(u.out), std::move(u.label));
    return;
  }
  if (jobs.size() == 1 && first.erase_scratch) return erase_scratch_linearly(ctx, first.node, sum, square, gain, builder);

  std::vector<size_t> categorical, numeric;
  for (size_t i = 0; i < inputs.size(); ++i)
    (first.reads[i] == ReadKind::OneHot ? categorical : numeric).push_back(i);

  if (numeric.size() > 1 || (numeric.size() == 1 && !ctx.info(inputs[numeric[0]]).values_known &&
                             first.reads[numeric[0]] == ReadKind::Numeric)) {
    // Affine maps of numerical s-ops: a*x + c, checked on the corners and the midpoint.
    if (!categorical.empty() || ctx.info(first.node).encoding != Encoding::Numerical || jobs.size() != 1)
      fail_at(where, "this map combines numerical s-ops (or one with too many values) with other inputs; one MLP "
                     "can only compute an affine function of several numerical s-ops: make some categorical");
    std::vector<Value> base(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) base[i] = Value::of_int(0);
    auto eval = [&](const std::vector<Value>& a, double& out) {
      Value v;
      if (!evaluate_fused(ctx.program, first.node, inputs, a, v) || v.is_string()) return false;
      out = number_of(v);
      return true;
    };
    double c0 = 0;
    std::vector<double> slope(inputs.size());
    bool affine = eval(base, c0);
    for (size_t i = 0; i < inputs.size() && affine; ++i) {
      std::vector<Value> a = base;
      a[i] = Value::of_int(1);
      double f1 = 0;
      affine = eval(a, f1);
      slope[i] = f1 - c0;
    }
    for (int trial = 0; trial < 4 && affine; ++trial) {
      std::vector<Value> a(inputs.size());
      double expect = c0;
      for (size_t i = 0; i < inputs.size(); ++i) {
        int64_t x = (trial + 2) * int64_t(i + 3) - 5;
        a[i] = Value::of_int(x);
        expect += slope[i] * double(x);
      }
      double got = 0;
      affine = eval(a, got) && std::fabs(got - expect) <= 1e-9 * (1 + std::fabs(expect));
    }
    if (!affine)
      fail_at(where, "this map of several numerical s-ops is not affine, so one MLP cannot compute it exactly; "
                     "make an input categorical with categorical(...)");
    Functional in;
    double bound = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (const auto& [dim, w] : ctx.numeric_view(inputs[i])) in.push_back({dim, w * slope[i]});
      const SopInfo& info = ctx.info(inputs[i]);
      bound += std::fabs(slope[i]) * std::max(std::fabs(info.lo), std::fabs(info.hi));
    }
    double offset = 10.0 + 2.0 * bound;
    int dim = ctx.allocation.numeric.at(first.node);
    builder.unit(in, offset, Target{{dim, 1.0}}, ctx.program.label(first.node) + "[affine]");
    builder.proj_bias[dim] += c0 - offset;
    builder.min_margin = std::min(builder.min_margin, offset - bound);
    return;
  }

  // Categorical combinations: those that can occur together at some position.
  std::vector<CategoricalView> views;
  std::vector<NodeId> categorical_inputs;
  for (size_t i : categorical) {
    views.push_back(ctx.categorical_view(inputs[i]));
    categorical_inputs.push_back(inputs[i]);
  }
  std::vector<JointCombination> combinations;
  if (!joint_combinations(ctx.inference, categorical_inputs, ctx.options.max_len, kCombinationLimit, combinations))
    fail_at(where, "this map's inputs have more than " + std::to_string(kCombinationLimit) +
                       " value combinations, too many for a lookup table; use fewer or smaller inputs");
  const size_t m = categorical.size();

  // The numeric input, if any: (value, normalised read) sorted by the read.
  struct Level {
    Value value;
    double read;   // the value as written to the residual
    double scale;  // what LayerNorm multiplies every read by when the input holds it
  };
  std::vector<Level> levels;
  Functional numeric_read;
  ReadRange range;
  if (!numeric.empty()) {
    size_t i = numeric[0];
    NodeId id = inputs[i];
    if (first.reads[i] == ReadKind::Scratch) {
      numeric_read = ctx.unit(ctx.allocation.scratch.at(id));
      for (const auto& [value, read] : scratch_levels(ctx, id))
        levels.push_back({value, read, read_scale(ctx, {read}, sum, square, gain)});
    } else {
      numeric_read = ctx.numeric_view(id);
      // Any number of values: a step only where the map's value changes between two of them
      // (emit_gated_steps), and the budget counts those steps before this builds them.
      for (const Value& v : ctx.info(id).values) levels.push_back({v, number_of(v), 1.0});
    }
    std::sort(levels.begin(), levels.end(), [](const Level& a, const Level& b) { return a.read < b.read; });
    // Every read (the one dimension's too) is scaled alike, so the sign of u - t is exact.
    for (const Level& l : levels) range.add(l.read, l.scale);
  }

  if (numeric.empty() && lower_through_sum(ctx, target, inputs, views, combinations, builder)) return;
  if (numeric.empty() && lower_as_decision_tree(ctx, target, inputs, views, combinations, where, builder)) return;

  std::vector<Value> assignment(inputs.size());
  for (const JointCombination& combination : combinations) {
    const std::vector<size_t>& digit = combination.digits;
    Functional matched;  // sum of the combination's one-hot reads
    std::vector<Value> labelled_values;
    for (size_t a = 0; a < m; ++a) {
      assignment[categorical[a]] = views[a].values[digit[a]];
      labelled_values.push_back(views[a].values[digit[a]]);
      for (const auto& entry : views[a].read[digit[a]]) matched.push_back(entry);
    }
    std::string label = combination_label(ctx, categorical_inputs, labelled_values);
    std::vector<StepLevel> steps;
    if (levels.empty()) {
      steps.emplace_back();
      steps[0].defined = target(assignment, steps[0].out);
      emit_gated_steps(ctx, builder, matched, m, label, {}, "", std::move(steps), range, where);
      continue;
    }
    size_t ni = numeric[0];
    // Only the numeric values that can occur beside this combination get steps: the levels the
    // numeric input holds at the combination's positions.
    const SopInfo& numeric_info = ctx.info(inputs[ni]);
    std::vector<Value> possible;
    bool narrowed = !combination.positions.empty() && !numeric_info.by_position.empty();
    if (narrowed) {
      for (int p : combination.positions) {
        const std::vector<Value>& at = numeric_info.by_position[size_t(p)];
        possible.insert(possible.end(), at.begin(), at.end());
      }
      std::sort(possible.begin(), possible.end(), ValueLess{});
    }
    for (const Level& l : levels) {
      if (narrowed && !std::binary_search(possible.begin(), possible.end(), l.value, ValueLess{})) continue;
      assignment[ni] = l.value;
      StepLevel step;
      step.read = l.read;
      step.name = to_display(l.value);
      step.defined = target(assignment, step.out);
      steps.push_back(std::move(step));
    }
    emit_gated_steps(ctx, builder, matched, m, label, numeric_read, ctx.program.label(inputs[ni]), std::move(steps),
                     range, where);
  }
}

}  // namespace

std::optional<SumRead> find_sum_read(const std::vector<const std::vector<Value>*>& values,
                                     const std::vector<JointCombination>& combinations,
                                     const std::function<bool(size_t, size_t)>& same_output) {
  const size_t n = values.size();
  if (n < 2 || combinations.size() <= kSmallLookup) return std::nullopt;
  std::vector<size_t> numbers;  // inputs whose values are all numbers
  for (size_t i = 0; i < n && numbers.size() < 6; ++i) {
    bool all = true;
    for (const Value& v : *values[i]) all = all && (v.is_number() || v.is_bool());
    if (all) numbers.push_back(i);
  }
  if (numbers.size() < 2) return std::nullopt;
  auto try_sum = [&](SumRead& sum) {
    for (size_t c = 0; c < combinations.size(); ++c) {
      std::vector<size_t> rest;
      double u = 0;
      for (size_t i = 0, k = 0; i < n; ++i) {
        const size_t digit = combinations[c].digits[i];
        if (k < sum.members.size() && sum.members[k] == i) u += sum.signs[k++] * number_of((*values[i])[digit]);
        else rest.push_back(digit);
      }
      auto [it, fresh] = sum.levels[rest].emplace(u, c);
      if (!fresh && !same_output(it->second, c)) return false;
      sum.count += fresh;
    }
    return true;
  };
  std::optional<SumRead> best;
  const size_t k = numbers.size();
  for (size_t mask = 1; mask < (size_t(1) << k); ++mask) {
    int bits = __builtin_popcountll(mask);
    if (bits < 2 || bits > 3) continue;
    for (size_t signs = 0; signs < (size_t(1) << (bits - 1)); ++signs) {
      SumRead sum;
      int b = 0;
      for (size_t j = 0; j < k; ++j)
        if ((mask >> j) & 1) {
          sum.members.push_back(numbers[j]);
          sum.signs.push_back(b > 0 && ((signs >> (b - 1)) & 1) ? -1.0 : 1.0);
          ++b;
        }
      if (try_sum(sum) && sum.units() < combinations.size() && (!best || sum.units() < best->units()))
        best = std::move(sum);
    }
  }
  return best;
}

void lower_mlp(const LowerContext& ctx, const std::vector<MlpJob>& jobs, double nominal_sum, double nominal_square,
               double gain, LoweredBlock& block, double& min_margin, UnitCount& count) {
  Builder builder{ctx, block, min_margin, count, {}, {}, {}, {}, {}};
  count.in_block = 0;
  // Jobs reading the same inputs the same way share their units (a selector width's one-hot
  // and its eraser, two maps of the same s-ops).
  // In groups of their own: a width step's eraser, linear (what it holds is not a function of its
  // value), and a construction whose units are its own (MlpConstruction).
  auto alone = [&](const MlpJob& job) {
    const Node& node = ctx.program.node(job.node);
    return (job.erase_scratch && is_construction(node, WidthHeadKind::WidthStep)) ||
           mlp_construction_of(node) != nullptr;
  };
  std::vector<std::vector<const MlpJob*>> groups;
  for (const MlpJob& job : jobs) {
    bool placed = false;
    for (auto& group : groups)
      if (!alone(job) && !alone(*group.front()) && group.front()->inputs == job.inputs &&
          group.front()->reads == job.reads && group.front()->projected_lambda == job.projected_lambda) {
        group.push_back(&job);
        placed = true;
        break;
      }
    if (!placed) groups.push_back({&job});
  }
  for (const auto& group : groups) {
    count.making = group.front()->node;
    lower_group(ctx, group, nominal_sum, nominal_square, gain, builder);
  }
  count.widest = std::max(count.widest, count.in_block);

  const int C = ctx.width, I = int(builder.fc_columns.size());
  block.fc = Matrix(C, I);
  block.fc_bias = builder.fc_bias;
  block.proj = Matrix(I, C);
  block.proj_bias.assign(size_t(C), 0.0);
  block.unit_labels = builder.labels;
  for (int u = 0; u < I; ++u) {
    ctx.put_column(block.fc, u, builder.fc_columns[size_t(u)]);
    for (const auto& [dim, v] : builder.proj_rows[size_t(u)]) block.proj.at(u, dim) += v;
  }
  for (const auto& [dim, v] : builder.proj_bias) block.proj_bias[size_t(dim)] += v;
}

}  // namespace raspc::compiler
