// The compile budget: a model's parameters against CompileOptions::max_parameters, refused at the
// s-op that contributes most before anything that large is built or verified.
//
// A model's size is base + n * per_unit, n the MLP units of its widest block: the residual width
// (padded as the lowering pads it for the heads), the blocks, the vocabulary and the positions are
// known once the residual is allocated, so check_budget refuses there where the base alone is too
// large. The units are the lowering's own: lower_mlp counts each unit it builds (UnitCount), and
// the one that passes the limit stops it, so the budget and the model cannot disagree, and an
// oversized model costs only the units within the limit.
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
#include <limits>
#include <map>

#include "compiler/ir.hpp"
#include "compiler/lower_internal.hpp"
#include "runtime/verification_backend.hpp"
#include "support/number_text.hpp"

namespace raspc::compiler {

size_t ModelSize::most_units(size_t limit) const {
  if (limit == 0 || per_unit == 0) return std::numeric_limits<size_t>::max();
  if (parameters(1) > limit) return 0;
  return (limit - base) / per_unit;
}

ModelSize model_size(int width, int blocks, int vocab_size, int max_len) {
  ModelConfig config;
  config.n_layer = blocks;
  config.n_embd = std::max(1, width);
  config.n_head = 1;  // GPT-2's parameter count does not depend on it
  config.n_positions = max_len + 1;
  config.vocab_size = vocab_size;
  ModelSize size;
  size.blocks = blocks;
  config.n_inner = 1;
  const size_t one = parameter_count(config);
  config.n_inner = 2;
  size.per_unit = blocks > 0 ? parameter_count(config) - one : 0;
  size.base = one - size.per_unit;
  size.per_dimension = double(size.base) / double(config.n_embd);
  return size;
}

ModelSize planned_size(const Program& program, const Inference& inference, const Schedule& schedule,
                       const Allocation& allocation, const CompileOptions& options) {
  LowerContext ctx{program, inference, schedule, allocation, options};
  ctx.match_score = selection_match_score(options.max_len);
  Lowered vocabulary;
  build_vocabulary(program, inference, options, vocabulary);
  return model_size(padded_width(ctx), schedule.blocks, int(vocabulary.vocab.size()), options.max_len);
}

namespace {

// The s-op that contributes most: a residual dimension costs a row of every matrix that reads or
// writes the residual, an MLP unit a column of its block's two.
NodeId dominant_sop(const Program& program, const Allocation& allocation, const ModelSize& size,
                    const std::map<NodeId, size_t>& units, size_t& dims_of, size_t& units_of) {
  NodeId dominant = -1;
  double largest = -1;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    size_t dims = 0;
    if (auto it = allocation.onehot.find(id); it != allocation.onehot.end()) dims += it->second.size();
    if (auto it = allocation.tokens.find(id); it != allocation.tokens.end()) dims += it->second.size();
    const auto made = units.find(id);
    const size_t count = made == units.end() ? 0 : made->second;
    const double cost = double(dims) * size.per_dimension + double(count) * double(size.per_unit);
    if (cost > largest) largest = cost, dominant = id, dims_of = dims, units_of = count;
  }
  return dominant;
}

// Before lowering (`block` < 0): the model without its MLP units, `total`, is already too large.
// In it: block `block`'s MLP units have just passed the limit, `units` those counted so far.
[[noreturn]] void refuse(const Program& program, const Allocation& allocation, const ModelSize& size, size_t total,
                         int block, const std::map<NodeId, size_t>& units, const CompileOptions& options) {
  size_t dims = 0, count = 0;
  const NodeId dominant = dominant_sop(program, allocation, size, units, dims, count);
  std::string what;
  if (dominant >= 0) {
    what = "; most of it is " + program.describe(dominant) + ": " + with_commas(double(dims)) + " residual dimension" +
           (dims == 1 ? "" : "s");
    if (count > 0) what += " and " + with_commas(double(count)) + " MLP unit" + (count == 1 ? "" : "s") + " so far";
  }
  const std::string limit = "--max-parameters " + with_commas(double(options.max_parameters));
  std::string message =
      block < 0 ? "the model would have at least " + with_commas(double(total)) +
                      " parameters before its MLP units, more than " + limit
                : "the model would have more parameters than " + limit + ": blocks." + std::to_string(block) +
                      ".mlp passes it";
  message += what + "; raise --max-parameters, or use a smaller --max-len or vocabulary";
  const Span* where = dominant >= 0 && program.node(dominant).span.file ? &program.node(dominant).span : nullptr;
  if (where) fail_at(*where, message);
  fail_file("raspc compile", message);
}

}  // namespace

void check_budget(const Program& program, const Inference& inference, const Schedule& schedule,
                  const Allocation& allocation, const CompileOptions& options) {
  if (options.max_parameters == 0) return;
  const ModelSize size = planned_size(program, inference, schedule, allocation, options);
  if (size.parameters(0) <= options.max_parameters) return;
  refuse(program, allocation, size, size.parameters(0), -1, {}, options);
}

void refuse_over_budget(const Program& program, const Allocation& allocation, const ModelSize& size,
                        const UnitCount& count, const CompileOptions& options) {
  refuse(program, allocation, size, size.parameters(count.widest), count.block, count.by_node, options);
}

std::string dump_budget(const Program& program, const Inference& inference, const Schedule& schedule,
                        const Allocation& allocation, const CompileOptions& options) {
  const ModelSize size = planned_size(program, inference, schedule, allocation, options);
  return "# budget: " + with_commas(double(size.parameters(0))) + " parameters before the MLP units, " +
         with_commas(double(size.per_unit)) + " more for each unit of the widest block (" +
         (options.max_parameters ? "--max-parameters " + with_commas(double(options.max_parameters))
                                 : std::string("no limit")) +
         "; the lowering counts the units as it builds them)\n";
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
