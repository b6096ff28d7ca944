// The pipeline's table and the driver that runs it. A pass is one row: a rewrite of the program
// (the first twelve), the value sets, or a step from the program to the model. The driver infers
// value sets where a row reads them and a rewrite has changed the program since, and hands over
// the dump of the row --dump-after names as soon as that row finishes (a later pass may still
// refuse, and that is when the dump is wanted most).
#include "compiler/pipeline.hpp"

#include <algorithm>
#include <exception>
#include <set>

#include "runtime/model_report.hpp"
#include "runtime/safetensors.hpp"

namespace raspc::compiler {

CompileState::CompileState(const Program& source_program, const CompileOptions& compile_options)
    : source(source_program), options(compile_options), program(source_program),
      started(std::chrono::steady_clock::now()) {}

namespace {

std::string program_dump(const CompileState& s, const std::string& pass) { return dump_program(s.program, pass); }

// The value sets, inferred again where a rewrite has changed the program since they were.
void infer_if_changed(CompileState& s) {
  if (s.values_current) return;
  s.inference = infer(s.program, s.options);
  s.values_current = true;
}

// The top-level names of the s-ops the output reads (directly or not), but tokens and indices,
// which the embeddings hold whatever reads them.
std::set<std::string> computed_names(const Program& p) {
  std::vector<uint8_t> read(p.nodes.size(), 0);
  if (p.output >= 0) read[size_t(p.output)] = 1;
  for (NodeId id = p.output; id >= 0; --id)
    if (read[size_t(id)])
      for (NodeId in : p.node(id).inputs) read[size_t(in)] = 1;
  std::set<std::string> names;
  for (const auto& [name, id] : p.named)
    if (id >= 0 && read[size_t(id)] && !p.node(id).is_selector() && p.node(id).kind != NodeKind::Constant &&
        p.node(id).kind != NodeKind::Tokens && p.node(id).kind != NodeKind::Indices)
      names.insert(name);
  return names;
}

bool run_schedule(CompileState& s) {
  // From here on the program stays as it is: the passes below may keep what they fuse.
  s.fused_cache = std::make_unique<FusedCacheScope>(s.program);
  s.schedule = schedule(s.program, s.inference, s.options);
  if (s.options.explain) {
    s.result.explanation = explain(s.program, s.inference, s.schedule) + explain_rewritten(s.source, s.rewritten_away);
    if (s.options.on_explanation) s.options.on_explanation(s.result.explanation);
  }
  return false;
}

// Infers value sets itself (its row does not ask the driver to): a key tie-broken by the position
// takes |x| n values, more than a model holds at long lengths, and the strict inference would
// refuse the program before the rewrite that removes the key could run. So where it refuses, the
// rewrite reads value sets listed past that limit; where nothing changes, the next pass infers
// again and gives the refusal as before.
bool run_tiebreak_keys(CompileState& s) {
  std::exception_ptr refused;
  try {
    infer_if_changed(s);
    return tiebreak_keys(s.program, s.inference, s.options);
  } catch (const UserError&) {
    refused = std::current_exception();
  }
  Inference listed;
  try {
    listed = infer(s.program, s.options, /*past_model_limit=*/true);
  } catch (const UserError&) {
    std::rethrow_exception(refused);  // refused for another reason: that refusal, as before
  }
  return tiebreak_keys(s.program, listed, s.options);
}

bool run_assemble(CompileState& s) {
  Model& model = s.result.model;
  model = assemble(s.program, s.inference, s.allocation, s.lowered, s.options);
  const nlohmann::json placement =
      placement_metadata(s.program, s.inference, s.schedule, s.allocation, s.lowered, s.options.max_len);
  model.metadata["sops"] = placement["sops"];
  model.metadata["heads"] = placement["heads"];
  CompileReport& report = s.result.report;
  const ModelConfig& config = model.config;
  report.config = config;
  report.layers = config.n_layer;
  report.heads = config.n_layer == 0 ? 0 : config.n_head;  // a model of no blocks keeps n_head 1 for its config
  report.n_embd = config.n_embd;
  report.n_inner = config.n_inner;
  report.parameters = parameter_count(config);
  report.numerical_output = s.inference.info[size_t(s.program.output)].encoding == Encoding::Numerical;
  for (const auto& [id, plan] : s.inference.numbers.selects) {
    NumericMargin m = numeric_select_margin(plan, s.options.max_len);
    if (report.numerical_selector_margin == 0 || m.margin < report.numerical_selector_margin)
      report.numerical_selector_margin = m.margin;
    report.numerical_selector_rounding = std::max(report.numerical_selector_rounding, m.rounding);
  }
  const VerificationEstimate to_verify = estimate_verification(model, s.options);
  report.estimated_verify_inputs = to_verify.inputs;
  if (s.options.verify) {
    // The inputs are split evenly over the threads (compiler/verify.cpp): two threads took 0.52-0.60
    // of one thread's wall time on every program of programs/ (bench/RESULTS.md).
    report.verify_threads = int(verification_threads(s.options));
    report.estimated_verify_seconds = to_verify.seconds / report.verify_threads;
  }
  report.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s.started).count();
  if (s.options.on_assembled) s.options.on_assembled(report);
  return false;
}

std::string assemble_dump(const CompileState& s, const std::string&) {
  const Model& model = s.result.model;
  nlohmann::json cfg = config_to_json(model.config);
  cfg["vocab"] = model.vocab;
  cfg["residual_labels"] = model.residual_labels;
  return cfg.dump(2) + "\n";
}

}  // namespace

// The rewrites of constructions whose only caller is their row below (compiler/constructions/: a
// construction is its file and its row).
// `select(h, h, op)` over the counts h of a categorical x's values compares their ranks
// (constructions/count_rank.cpp). Bidirectional only; unchanged when nothing applies.
bool count_ranks(Program& program, const Inference& inference, const CompileOptions& options);

const std::vector<Pass>& pipeline() {
  // The rewrites come first and in this order: value sets are inferred on the simplified program
  // (merging means there is what lets the Dyck programs' balances be one numerical s-op, and
  // refusals would otherwise come too early); width steps before inference, which would list the
  // (index, width) pairs they compare; the rewrites that read value sets after them; a disjoint
  // `or` split into parts before pairing, since there it costs two heads where a tuple would cost
  // an MLP too.
  static const std::vector<Pass> passes{
      {"causal_prefixes", "a causal program (bidirectional ones pass unchanged)",
       "no `select(indices, indices, <=)`: each is `select(1, 1, ==)`, which reads no s-op", false,
       [](CompileState& s) { return s.options.mode == Mode::Causal && causal_prefixes(s.program); }, program_dump},
      {"simplify", "a program: s-ops and selectors in an order where each reads only earlier ones",
       "equal nodes merged, maps of constants folded, nothing the output does not need", false,
       [](CompileState& s) { return simplify(s.program); }, program_dump},
      {"merge_means", "a simplified program",
       "no sum or difference of two means over one selector (nor of numbers or one factor times each), no "
       "numerical product of a number and a mean that nothing else reads", false,
       [](CompileState& s) { return merge_means(s.program); }, program_dump},
      {"width_steps", "a simplified program",
       "every `indices < selector_width(s)` (and `>`, `>=`, `<=` forms) is a width step: one head and one MLP step",
       false, [](CompileState& s) { return width_steps(s.program); }, program_dump},
      {"width_predicates", "a simplified program",
       "no selector compares a selector width with a constant: it compares the width's predicate (a map) with True",
       false, [](CompileState& s) { return width_predicates(s.program); }, program_dump},
      {"tiebreak_keys", "value sets (listed past the 2,048 values a model holds)",
       "a selector comparing a key made of a categorical x and the position, ordered by x and then the position "
       "(Tracr's `x + i * eps`), compares x's order and then the positions, as the library's stable sort does",
       false, run_tiebreak_keys, program_dump},
      {"count_sorts", "value sets; a bidirectional program (causal ones pass unchanged)",
       "a stable sort whose values are a function of its categorical key is a counting sort of width steps, and so is "
       "Tracr's unique sort of number values from a maximum length of nine per key value", true,
       [](CompileState& s) { return count_sorts(s.program, s.inference, s.options); }, program_dump},
      {"count_ranks", "value sets; a bidirectional program (causal ones pass unchanged)",
       "a selector comparing two positions' counts of the m values of a categorical x (`select(h, h, op)`, h = "
       "`selector_width(select(x, x, ==))`) compares the counts' ranks, m values where h has n + 1, from a maximum "
       "length of max(16, m(m + 1))",
       true,
       [](CompileState& s) { return count_ranks(s.program, s.inference, s.options); }, program_dump},
      {"prune_inputs", "value sets",
       "a map too large to list that ignores one of its inputs wherever they occur reads a constant there", true,
       [](CompileState& s) { return prune_map_inputs(s.program, s.inference, s.options); }, program_dump},
      {"split_widths", "value sets",
       "a width over an `or` of disjoint selectors that compare different s-ops is the sum of its parts' widths",
       true, [](CompileState& s) { return split_disjoint_widths(s.program, s.inference); }, program_dump},
      {"pair_selectors", "value sets; widths split",
       "every selector conjunct reads at most one s-op on each side (a tuple where it read several)", true,
       [](CompileState& s) { return pair_selector_sides(s.program, s.inference); }, program_dump},
      {"output_copy", "value sets",
       "the output has dimensions of its own, written by a head, an MLP or the embeddings (an identity lookup where it "
       "was tokens, indices or a constant)",
       true, [](CompileState& s) { return copy_output(s.program, s.inference); }, program_dump},
      {"infer", "the rewritten program",
       "the exact value set and the encoding of every s-op, and which selectors are numerical", true,
       [](CompileState&) { return false; },
       [](const CompileState& s, const std::string&) { return dump_inference(s.program, s.inference); }},
      {"schedule", "value sets",
       "every head and MLP placed in a block; an output that is a map of the tokens, of the positions, or of both where "
       "the embeddings can write it, placed in the embeddings",
       true, run_schedule,
       [](const CompileState& s, const std::string&) { return dump_schedule(s.program, s.schedule); }},
      {"allocate", "a schedule", "the residual dimensions, each with a label", true,
       [](CompileState& s) {
         s.allocation = allocate(s.program, s.inference, s.schedule, s.options);
         return false;
       },
       [](const CompileState& s, const std::string&) { return dump_allocation(s.allocation); }},
      {"budget", "an allocation", "the model's parameters but its MLP units are within --max-parameters", true,
       [](CompileState& s) {
         check_budget(s.program, s.inference, s.schedule, s.allocation, s.options);
         return false;
       },
       [](const CompileState& s, const std::string&) { return dump_budget(s.program, s.inference, s.schedule, s.allocation, s.options); }},
      {"lower", "a schedule, an allocation and the budget",
       "every head (W_Q, W_K, W_V, W_O) and MLP as matrices over the residual dimensions, its units counted "
       "against --max-parameters as they are built", true,
       [](CompileState& s) {
         s.lowered = lower(s.program, s.inference, s.schedule, s.allocation, s.options);
         return false;
       },
       [](const CompileState& s, const std::string&) { return dump_lowered(s.lowered, s.allocation); }},
      {"assemble", "lowered blocks", "GPT-2's parameters (Hugging Face names), padded and scaled; the report's shape",
       true, run_assemble, assemble_dump},
      {"verify", "a model", "the model agrees with the interpreter of the program as written (unless --no-verify)",
       true,
       [](CompileState& s) {
         if (s.options.verify) {
           verify(s.source, s.program, s.inference, s.schedule, s.allocation, s.result.model, s.options,
                  s.result.report);
           s.result.report.verified = true;
         }
         return false;
       },
       [](const CompileState& s, const std::string&) { return report_json(s.result.report).dump(2) + "\n"; }},
  };
  return passes;
}

bool run_pass(CompileState& state, const Pass& pass) {
  if (pass.reads_values) infer_if_changed(state);
  const bool changed = pass.run(state);
  if (changed) state.values_current = false;
  return changed;
}

void run_passes(CompileState& state, const std::string& last) {
  // Only --explain reads which rewrite left a named s-op out (a name that comes back leaves the list).
  const bool explain = state.options.explain;
  std::set<std::string> computed = explain ? computed_names(state.program) : std::set<std::string>{};
  for (const Pass& pass : pipeline()) {
    if (run_pass(state, pass) && explain) {
      std::set<std::string> now = computed_names(state.program);
      for (const std::string& name : computed)
        if (!now.count(name)) state.rewritten_away.emplace_back(name, pass.name);
      std::erase_if(state.rewritten_away, [&](const auto& entry) { return now.count(entry.first) > 0; });
      computed = std::move(now);
    }
    if (pass.name == state.options.dump_after) {
      state.result.dump = pass.dump(state, pass.name);
      if (state.options.on_dump) state.options.on_dump(state.result.dump);
    }
    if (pass.name == last) return;
  }
}

}  // namespace raspc::compiler

namespace raspc {

const std::vector<std::string>& compiler_pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const compiler::Pass& pass : compiler::pipeline()) out.push_back(pass.name);
    return out;
  }();
  return names;
}

CompileResult compile_program(const Program& program, const CompileOptions& options) {
  compiler::CompileState state(program, options);
  compiler::run_passes(state);
  state.result.model.metadata["compile"] = stored_report(report_json(state.result.report));
  return std::move(state.result);
}

}  // namespace raspc
