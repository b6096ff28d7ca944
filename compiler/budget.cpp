// The compile budget: the model's size estimated from the schedule and the allocation, before
// lowering builds (and the verification runs) anything that large; refused above
// CompileOptions::max_parameters, at the s-op that contributes most.
//
// The residual width is exact (the allocation's, padded as the lowering pads it so that a block's
// heads, of equal width, each hold their Q/K and V dimensions: most_freq at max length 64 has 388
// dimensions where its allocation has fewer, and without the padding was estimated at 1,448,352
// parameters for a model of 2,461,100); MLP units
// are estimated per job from what lower_mlp.cpp enumerates: a gate per combination of the one-hot
// inputs that can occur, and two units per step of a numeric read (a width's at every width, any
// other's where the map's value changes, counted by evaluating it). The lookups that read sums or
// leave an input free (lower_mlp.cpp) make fewer units. An estimate: the summary gives the real
// count.
//
// The verification time is estimated as a cost per input (the interpreter's evaluation and the
// bookkeeping) plus the FLOPs of every input's verification forward over the model's nonzero
// blocks (runtime/verification_backend.*, memos aside) at an effective rate. Both constants were
// fitted on the quiet 2-core AMD EPYC of 2026-12-02 to reverse, sort and long_addition at max
// length 64 and checked on hist, sort_unique, shuffle_dyck2 and shuffle_dyck (bench/HISTORY.md,
// "Fourth round"): the memos make most models' products cheaper than counted, so it leans high,
// 2-2.5 times on small models, 10 times on shuffle_dyck at 1,024. A different machine, or another
// load on this one, shifts them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "compiler/ir.hpp"
#include "compiler/lower_internal.hpp"
#include "runtime/verification_backend.hpp"
#include "support/number_text.hpp"

namespace raspc::compiler {
namespace {

// The most evaluations spent counting a lookup's steps; past them the rest of its combinations
// count a step at every numeric value they can hold (more than the real count, never less).
constexpr long kStepCountLimit = 4'000'000;

// The steps (two units each) of a lookup with one numeric read, as lower_mlp.cpp makes them: for
// each combination of its one-hot inputs, one where the map's value changes along the numeric
// input's values that occur beside that combination. Counted by evaluating the map, since a
// guess either way is wrong by orders of magnitude: dyck2's `level` at max length 256 steps
// 130,000 times, a prefix mean's sign once.
double numeric_steps(const Program& program, const Inference& inference, const MlpJob& job, size_t numeric,
                     const std::vector<size_t>& onehot, const std::vector<JointCombination>& combinations) {
  const SopInfo& levels_info = inference.info[size_t(job.inputs[numeric])];
  if (!levels_info.values_known) return double(std::max<size_t>(1, combinations.size()));
  auto by_number = [](const Value& a, const Value& b) { return number_of(a) < number_of(b); };
  std::vector<Value> sorted = levels_info.values;
  std::sort(sorted.begin(), sorted.end(), by_number);
  std::vector<Value> assignment(job.inputs.size());
  double steps = 0;
  long evaluations = 0;
  for (const JointCombination& c : combinations) {
    for (size_t a = 0; a < onehot.size(); ++a)
      assignment[onehot[a]] = inference.info[size_t(job.inputs[onehot[a]])].values[c.digits[a]];
    std::vector<Value> here;
    if (!c.positions.empty() && !levels_info.by_position.empty()) {
      for (int p : c.positions) {
        const std::vector<Value>& at = levels_info.by_position[size_t(p)];
        here.insert(here.end(), at.begin(), at.end());
      }
      std::sort(here.begin(), here.end(), by_number);
      here.erase(std::unique(here.begin(), here.end(),
                             [](const Value& a, const Value& b) { return number_of(a) == number_of(b); }),
                 here.end());
    }
    const std::vector<Value>& levels = here.empty() ? sorted : here;
    if (evaluations > kStepCountLimit) {
      steps += double(levels.size());
      continue;
    }
    Value previous;
    bool have = false;
    for (const Value& v : levels) {
      assignment[numeric] = v;
      Value out;
      ++evaluations;
      if (!evaluate_fused(program, job.node, job.inputs, assignment, out)) continue;
      if (have && !same_value(out, previous)) ++steps;
      previous = std::move(out);
      have = true;
    }
  }
  return std::max(1.0, steps);
}

// The units of a lookup over one-hot inputs that lower_mlp.cpp reads through a signed sum of some
// of them (find_sum_read), the same search on the map's own values; none where there is no such sum.
std::optional<double> units_through_sum(const Program& program, const Inference& inference, const MlpJob& job,
                                        const std::vector<JointCombination>& combinations) {
  std::vector<const std::vector<Value>*> values;
  for (NodeId in : job.inputs) values.push_back(&inference.info[size_t(in)].values);
  const MapValues map = evaluate_on(program, inference, job.node, job.inputs, combinations);
  const std::optional<SumRead> sum =
      find_sum_read(values, combinations, [&](size_t a, size_t b) { return map.same(a, b); });
  if (!sum) return std::nullopt;
  return double(sum->units());
}

double estimate_units(const Program& program, const Inference& inference, const MlpJob& job, int max_len) {
  if (job.erase_scratch) return 1;
  if (job.projected())
    if (std::optional<size_t> units = projected_units(program, inference, job, max_len)) return double(*units);
  double levels = 1;
  std::vector<NodeId> onehots;
  std::vector<size_t> onehot_slots, numeric_slots;
  for (size_t i = 0; i < job.inputs.size(); ++i) {
    if (job.reads[i] == ReadKind::OneHot) {
      onehots.push_back(job.inputs[i]);
      onehot_slots.push_back(i);
      continue;
    }
    numeric_slots.push_back(i);
    // A lookup reading a width's 1/(w+1) steps at most at every width (another numeric read is
    // counted below, or once).
    const SopInfo& width = inference.info[size_t(job.inputs[i])];
    size_t steps = job.reads[i] == ReadKind::Scratch && width.values_known ? std::max<size_t>(1, width.values.size()) : 1;
    levels *= 2.0 * double(steps);
  }
  const bool counted = numeric_slots.size() == 1 && job.reads[numeric_slots[0]] == ReadKind::Numeric && !job.projected();
  double combinations = 1;
  for (NodeId id : onehots) combinations *= double(std::max<size_t>(1, inference.info[size_t(id)].values.size()));
  if (combinations <= 4096 && !counted) return combinations * levels;
  // The combinations that can occur together, as the lookup will enumerate them.
  std::vector<JointCombination> occurring;
  const bool listed = joint_combinations(inference, onehots, max_len, kCombinationLimit, occurring);
  if (combinations > 4096) combinations = listed ? double(occurring.size()) : double(kCombinationLimit);
  // A gate a combination, and two units a step.
  if (counted && listed)
    return combinations + 2.0 * numeric_steps(program, inference, job, numeric_slots[0], onehot_slots, occurring);
  if (listed && numeric_slots.empty()) {
    // A table the lowering may read through a sum of its inputs (lower_mlp.cpp): its units.
    if (std::optional<double> units = units_through_sum(program, inference, job, occurring)) return *units;
  }
  return combinations * levels;
}

}  // namespace

size_t estimate_parameters(const Program& program, const Inference& inference, const Schedule& schedule,
                           const Allocation& allocation, const CompileOptions& options, NodeId* dominant) {
  LowerContext ctx{program, inference, schedule, allocation, options};
  ctx.match_score = selection_match_score(options.max_len);
  const int width = padded_width(ctx);
  const double C = width;
  std::vector<double> units_of(program.nodes.size(), 0.0);
  double widest = 0;
  for (const std::vector<MlpJob>& jobs : schedule.mlps) {
    double units = 0;
    for (const MlpJob& job : jobs) {
      double u = estimate_units(program, inference, job, options.max_len);
      units_of[size_t(job.node)] += u;
      units += u;
    }
    widest = std::max(widest, units);
  }
  ModelConfig config;
  config.n_layer = std::max(1, schedule.blocks);
  config.n_embd = std::max(1, width);
  config.n_head = 1;
  config.n_inner = int(std::min(widest, 2e9));
  config.n_positions = options.max_len + 1;
  size_t vocab = options.vocab.size() + 1;
  if (program.output >= 0) vocab += inference.info[size_t(program.output)].values.size();
  config.vocab_size = int(vocab);
  size_t total = parameter_count(config);
  if (dominant) {
    // A residual dimension costs a row of every matrix that reads or writes the residual.
    const double per_dimension = double(total) / C;
    const double per_unit = 2.0 * C * config.n_layer;
    double largest = -1;
    for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
      double dims = 0;
      if (auto it = allocation.onehot.find(id); it != allocation.onehot.end()) dims += double(it->second.size());
      if (auto it = allocation.tokens.find(id); it != allocation.tokens.end()) dims += double(it->second.size());
      double cost = dims * per_dimension + units_of[size_t(id)] * per_unit;
      if (cost > largest) largest = cost, *dominant = id;
    }
  }
  return total;
}

void check_budget(const Program& program, const Inference& inference, const Schedule& schedule,
                  const Allocation& allocation, const CompileOptions& options) {
  if (options.max_parameters == 0) return;
  NodeId dominant = -1;
  size_t total = estimate_parameters(program, inference, schedule, allocation, options, &dominant);
  if (total <= options.max_parameters) return;
  std::string what;
  if (dominant >= 0) {
    size_t dims = allocation.onehot.count(dominant) ? allocation.onehot.at(dominant).size() : 0;
    what = "; most of it is " + program.describe(dominant) + ": " + with_commas(double(dims)) +
           " residual dimensions and the MLP units that make it";
  }
  std::string message = "the model would have about " + with_commas(double(total)) +
                        " parameters, more than --max-parameters " + with_commas(double(options.max_parameters)) +
                        what + "; raise --max-parameters, or use a smaller --max-len or vocabulary";
  const Span* where = dominant >= 0 && program.node(dominant).span.file ? &program.node(dominant).span : nullptr;
  if (where) fail_at(*where, message);
  fail_file("raspc compile", message);
}

std::string dump_budget(const Program& program, const Inference& inference, const Schedule& schedule,
                        const Allocation& allocation, const CompileOptions& options) {
  NodeId dominant = -1;
  const size_t total = estimate_parameters(program, inference, schedule, allocation, options, &dominant);
  std::string out = "# budget: about " + with_commas(double(total)) + " parameters estimated before lowering (" +
                    (options.max_parameters ? "--max-parameters " + with_commas(double(options.max_parameters))
                                            : std::string("no limit")) +
                    ")\n";
  if (dominant >= 0) out += "most of it: " + program.describe(dominant) + "\n";
  return out;
}

constexpr double kVerificationSecondsPerInput = 3e-6;
constexpr double kVerificationFlopsPerSecond = 6e10;

VerificationEstimate estimate_verification(const VerificationBackend& forward, const CompileOptions& options) {
  VerificationEstimate out;
  const VerificationLengths lengths = verification_lengths(options);
  out.seconds_by_length.assign(size_t(lengths.verified_len) + 1, 0.0);
  for (int n = 1; n <= lengths.verified_len; ++n) {
    const double inputs = lengths.inputs_at(n), flops = forward.sequence_flops(n + 1);  // BOS included
    out.seconds_by_length[size_t(n)] = kVerificationSecondsPerInput + flops / kVerificationFlopsPerSecond;
    out.inputs += inputs;
    out.flops += inputs * flops;
    out.seconds += inputs * out.seconds_by_length[size_t(n)];
  }
  return out;
}

VerificationEstimate estimate_verification(const Model& model, const CompileOptions& options) {
  if (!options.verify) return {};
  return estimate_verification(VerificationBackend(model), options);
}

}  // namespace raspc::compiler
