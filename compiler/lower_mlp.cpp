// MLPs: lookup tables over the input combinations that can occur, GELU-safe by margins.
//
// One job group reads some categorical inputs (one-hot) and at most one numeric input (a
// numerical s-op with a finite value set, or a selector width's 1/(w+1) scratch). For every
// combination c of the categorical values:
//   - a gate unit K*(sum of c's one-hot reads - (m-1)) is K when c holds and <= 0 otherwise (0
//     exactly when all but one input match, -K or less below that), and writes f(c)/K per unit;
//   - for a numeric input u with sorted (normalised) values u_1 < ... < u_p, f(c, u_1) comes from
//     the gate and every change f(c, u_j) - f(c, u_{j-1}) from a step at the midpoint t_j:
//     relu(z + 1/2) - relu(z - 1/2) with z = k*(u - t_j) - K'*(m - reads of c); the slope k puts
//     |z| >= 10.5 at every value that occurs, and K' shuts the step off for other combinations.
// Every pre-activation that can occur is 0 or at least 10 away from it, so GELU is ReLU there to
// float precision. Several numerical inputs without categorical ones must form an affine map,
// computed by one unit offset into GELU's linear regime.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {
namespace {

constexpr double kGate = 20.0;        // a gate's pre-activation when its combination holds
constexpr double kStepMargin = 10.5;  // |k (u - t)| at the nearest value, at least
// A lookup over at most this many combinations is left as it is (one unit each).
constexpr size_t kSmallLookup = 8;

using Target = std::map<int, double>;  // residual dimension -> value written

void add_into(Target& into, const Target& t, double scale) {
  for (const auto& [dim, v] : t) into[dim] += v * scale;
}

bool same_value(const Value& a, const Value& b) { return !value_less(a, b) && !value_less(b, a); }

double number_of(const Value& v) { return v.is_bool() ? (v.boolean ? 1.0 : 0.0) : v.number.to_double(); }

struct Builder {
  const LowerContext& ctx;
  LoweredBlock& block;
  double& min_margin;
  std::vector<Functional> fc_columns;
  std::vector<double> fc_bias;
  std::vector<Target> proj_rows;
  std::vector<std::string> labels;
  Target proj_bias;

  void unit(Functional in, double bias, Target out, std::string label) {
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
      if (n.kind == NodeKind::SelectorWidth) {
        v = assignment[0];
        if (job->erase_scratch) {
          out[ctx.allocation.scratch.at(node)] += -1.0 / (number_of(v) + 1.0);
          any = true;
          continue;
        }
      } else if (!evaluate_fused(ctx.program, node, job->inputs, assignment, v)) {
        continue;
      }
      any = true;
      if (ctx.info(node).encoding == Encoding::Numerical) {
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

// How ln_2 scales every read when a selector width's scratch holds s (everything else nominal).
double read_scale(const LowerContext& ctx, double s, double sum, double square, double gain) {
  if (!ctx.options.layer_norm) return 1.0;
  double c = ctx.width, mean = (sum + s) / c;
  double sigma = std::sqrt((square + s * s) / c - mean * mean + 1e-5);
  return gain / sigma;
}

// The slope of the steps along a numeric read, and the gate that shuts them off for the other
// combinations, from the read's levels (sorted, distinct; `scales[j]` is what LayerNorm multiplies
// every read by at level j): every scaled distance to a midpoint is at least kStepMargin.
struct StepScale {
  double slope = 1.0, gate = 0.0;
};

StepScale step_scale(const std::vector<double>& reads, const std::vector<double>& scales, const Span& where) {
  double gap = 1e30, extent = 0, smallest_scale = 1e30;
  for (size_t j = 1; j < reads.size(); ++j) {
    double half = 0.5 * (reads[j] - reads[j - 1]);
    if (!(half > 0)) fail_at(where, "internal: equal values in a numerical input's value set");
    gap = std::min(gap, half * std::min(scales[j], scales[j - 1]));
  }
  for (size_t j = 0; j < reads.size(); ++j)
    extent = std::max(extent, std::fabs(reads[j])), smallest_scale = std::min(smallest_scale, scales[j]);
  StepScale out;
  if (reads.size() > 1) out.slope = kStepMargin / gap;
  out.gate = out.slope * 2.0 * extent + 2.0 * kStepMargin / smallest_scale;
  return out;
}

// What a lookup writes when its numeric read is at one level.
struct StepLevel {
  double read = 0;   // the level as the MLP reads it
  std::string name;  // for unit labels
  Target out;
  bool defined = true;  // false where the map is undefined (that input cannot occur)
};

// One combination of the gating inputs (`matched`: their m one-hot reads summed, `label`) and, along
// `numeric_read`, the value written at each level (sorted by read): the first level's through a
// gate unit, every change through a step pair at the midpoint. With m = 0 the gate is a bias.
void emit_gated_steps(const LowerContext& ctx, Builder& builder, const Functional& matched, size_t m,
                      const std::string& label, const Functional& numeric_read, const std::string& numeric_name,
                      std::vector<StepLevel> levels, double slope, double gate) {
  int first_defined = -1;
  for (size_t j = 0; j < levels.size(); ++j)
    if (levels[j].defined) {
      if (first_defined < 0) first_defined = int(j);
    } else if (first_defined >= 0) {
      levels[j].out = levels[j - 1].out;  // keep the neighbouring value
    }
  if (first_defined < 0) return;
  for (int j = first_defined - 1; j >= 0; --j) levels[size_t(j)].out = levels[size_t(first_defined)].out;

  const Target& base = levels[0].out;
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
    Target delta = levels[j].out;
    add_into(delta, levels[j - 1].out, -1.0);
    for (auto it = delta.begin(); it != delta.end();)
      it = std::fabs(it->second) < 1e-15 ? delta.erase(it) : std::next(it);
    if (delta.empty()) continue;
    double threshold = 0.5 * (levels[j - 1].read + levels[j].read);
    Functional in;
    for (const auto& [dim, w] : numeric_read) in.push_back({dim, w * slope});
    in.push_back({ctx.allocation.one, -slope * threshold - gate * double(m)});
    for (const auto& [dim, w] : matched) in.push_back({dim, w * gate});
    std::string step = label + (label.empty() ? "" : ",") + numeric_name + ">" + levels[j - 1].name;
    Target minus;
    add_into(minus, delta, -1.0);
    builder.unit(in, 0.5, delta, step + "+");
    builder.unit(in, -0.5, minus, step + "-");
    builder.min_margin = std::min(builder.min_margin, kStepMargin - 0.5);
  }
}

// A lookup over categorical inputs some of which, numbers all, enter only through a signed sum
// (`indices + length - p`, `w1 + w2`, `indices > p`): the sum is read linearly, so the other inputs'
// combinations gate steps along it, instead of a unit per combination of them all. False (nothing
// emitted) when no sum of two or three inputs makes fewer units.
bool lower_through_sum(const LowerContext& ctx, const GroupTarget& target, const std::vector<NodeId>& inputs,
                       const std::vector<CategoricalView>& views, const std::vector<JointCombination>& combinations,
                       Builder& builder) {
  const size_t n = inputs.size();
  if (n < 2 || combinations.size() <= kSmallLookup) return false;
  std::vector<size_t> numbers;  // inputs whose values are all numbers
  for (size_t i = 0; i < n && numbers.size() < 6; ++i) {
    bool all = true;
    for (const Value& v : views[i].values) all = all && (v.is_number() || v.is_bool());
    if (all) numbers.push_back(i);
  }
  if (numbers.size() < 2) return false;

  // Every combination's output, once.
  std::vector<Target> outs(combinations.size());
  std::vector<uint8_t> defined(combinations.size());
  std::vector<Value> assignment(n);
  for (size_t c = 0; c < combinations.size(); ++c) {
    for (size_t i = 0; i < n; ++i) assignment[i] = views[i].values[combinations[c].digits[i]];
    defined[c] = target(assignment, outs[c]);
  }
  auto same = [&](size_t a, size_t b) {
    if (defined[a] != defined[b] || outs[a].size() != outs[b].size()) return false;
    for (auto x = outs[a].begin(), y = outs[b].begin(); x != outs[a].end(); ++x, ++y)
      if (x->first != y->first || std::fabs(x->second - y->second) > 1e-12) return false;
    return true;
  };

  struct Sum {
    std::vector<size_t> members;
    std::vector<double> signs;
    // by the other inputs' digits: sum -> a combination that has it
    std::map<std::vector<size_t>, std::map<double, size_t>> levels;
    size_t count = 0;  // (other inputs, sum) pairs
    // A gate per combination of the other inputs and a step pair per further sum.
    size_t units() const { return 2 * count - levels.size(); }
  };
  auto value_of = [&](size_t i, size_t digit) { return number_of(views[i].values[digit]); };
  auto try_sum = [&](Sum& sum) {
    for (size_t c = 0; c < combinations.size(); ++c) {
      std::vector<size_t> rest;
      double u = 0;
      for (size_t i = 0, k = 0; i < n; ++i) {
        if (k < sum.members.size() && sum.members[k] == i) u += sum.signs[k++] * value_of(i, combinations[c].digits[i]);
        else rest.push_back(combinations[c].digits[i]);
      }
      auto [it, fresh] = sum.levels[rest].emplace(u, c);
      if (!fresh && !same(it->second, c)) return false;
      sum.count += fresh;
    }
    return true;
  };
  std::optional<Sum> best;
  const size_t k = numbers.size();
  for (size_t mask = 1; mask < (size_t(1) << k); ++mask) {
    int bits = __builtin_popcountll(mask);
    if (bits < 2 || bits > 3) continue;
    for (size_t signs = 0; signs < (size_t(1) << (bits - 1)); ++signs) {
      Sum sum;
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
  if (!best) return false;

  Functional read;
  std::string name;
  for (size_t j = 0; j < best->members.size(); ++j) {
    size_t i = best->members[j];
    for (const auto& [dim, w] : ctx.numeric_view(inputs[i])) read.push_back({dim, w * best->signs[j]});
    name += (j == 0 ? "" : best->signs[j] > 0 ? "+" : "-") + ctx.program.label(inputs[i]);
  }
  // One slope for every gating combination: from every sum that occurs.
  std::set<double> all;
  for (const auto& [rest, levels] : best->levels)
    for (const auto& [u, c] : levels) all.insert(u);
  const StepScale scale = step_scale(std::vector<double>(all.begin(), all.end()), std::vector<double>(all.size(), 1.0),
                                     ctx.program.node(inputs[best->members[0]]).span);

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
      steps.push_back({u, text.str(), outs[c], bool(defined[c])});
    }
    emit_gated_steps(ctx, builder, matched, gating.size(), combination_label(ctx, gating, shown), read, name,
                     std::move(steps), scale.slope, scale.gate);
  }
  return true;
}

void lower_group(const LowerContext& ctx, const std::vector<const MlpJob*>& jobs, double sum, double square,
                 double gain, Builder& builder) {
  const MlpJob& first = *jobs.front();
  const std::vector<NodeId>& inputs = first.inputs;
  GroupTarget target{ctx, jobs};
  const Span& where = ctx.program.node(first.node).span;

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
  double slope = 0, gate = 0;
  if (!numeric.empty()) {
    size_t i = numeric[0];
    NodeId id = inputs[i];
    if (first.reads[i] == ReadKind::Scratch) {
      numeric_read = ctx.unit(ctx.allocation.scratch.at(id));
      for (const Value& v : ctx.info(id).values) {
        double w = number_of(v);
        levels.push_back({v, 1.0 / (w + 1), read_scale(ctx, 1.0 / (w + 1), sum, square, gain)});
      }
    } else {
      numeric_read = ctx.numeric_view(id);
      for (const Value& v : ctx.info(id).values) levels.push_back({v, number_of(v), 1.0});
      if (levels.size() > kValueSetLimit)
        fail_at(ctx.program.node(id).span, "this numerical s-op takes " + std::to_string(levels.size()) +
                                               " values, more than the " + std::to_string(kValueSetLimit) +
                                               " thresholds a map of it may use");
    }
    std::sort(levels.begin(), levels.end(), [](const Level& a, const Level& b) { return a.read < b.read; });
    // Every read (the one dimension's too) is scaled alike, so the sign of u - t is exact.
    std::vector<double> reads, scales;
    for (const Level& l : levels) reads.push_back(l.read), scales.push_back(l.scale);
    const StepScale scale = step_scale(reads, scales, where);
    slope = scale.slope;
    gate = scale.gate;
  }

  if (numeric.empty() && lower_through_sum(ctx, target, inputs, views, combinations, builder)) return;

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
      emit_gated_steps(ctx, builder, matched, m, label, {}, "", std::move(steps), 0, 0);
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
                     slope, gate);
  }
}

}  // namespace

void lower_mlp(const LowerContext& ctx, const std::vector<MlpJob>& jobs, double nominal_sum, double nominal_square,
               double gain, LoweredBlock& block, double& min_margin) {
  Builder builder{ctx, block, min_margin, {}, {}, {}, {}, {}};
  // Jobs reading the same inputs the same way share their units (a selector width's one-hot
  // and its eraser, two maps of the same s-ops).
  std::vector<std::vector<const MlpJob*>> groups;
  for (const MlpJob& job : jobs) {
    bool placed = false;
    for (auto& group : groups)
      if (group.front()->inputs == job.inputs && group.front()->reads == job.reads) {
        group.push_back(&job);
        placed = true;
        break;
      }
    if (!placed) groups.push_back({&job});
  }
  for (const auto& group : groups) lower_group(ctx, group, nominal_sum, nominal_square, gain, builder);

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
