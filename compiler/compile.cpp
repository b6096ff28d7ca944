// The driver: runs the passes in order, hands over the dump of the one --dump-after names as soon
// as that pass finishes (a later pass may still refuse), and fills the compile report stored in
// the model's metadata.
#include "compiler/compile.hpp"

#include <algorithm>
#include <chrono>

#include "compiler/ir.hpp"

namespace raspc {

const std::vector<std::string>& compiler_pass_names() {
  static const std::vector<std::string> names{"infer", "simplify", "schedule", "allocate",
                                              "lower", "assemble", "verify"};
  return names;
}

namespace {

// An output that is not computed by a head or an MLP (tokens, indices, a constant) gets an
// identity lookup table, so it has output dimensions of its own for the tied unembedding.
NodeId add_output_copy(Program& program, const compiler::Inference& inference) {
  NodeId out = program.output;
  const Node& source = program.node(out);
  Node copy;
  copy.kind = NodeKind::Elementwise;
  copy.op = ElementOp::LookupTable;
  copy.span = source.span;
  copy.name = source.name.empty() ? "output" : source.name;
  copy.inputs = {out};
  copy.table_keys = inference.info[size_t(out)].values;
  copy.table_values = copy.table_keys;
  program.nodes.push_back(std::move(copy));
  program.output = NodeId(program.nodes.size() - 1);
  return program.output;
}

nlohmann::json report_json(const CompileReport& r) {
  nlohmann::json j;
  j["layers"] = r.layers;
  j["heads"] = r.heads;
  j["n_embd"] = r.n_embd;
  j["n_inner"] = r.n_inner;
  j["parameters"] = r.parameters;
  j["inputs_checked"] = r.inputs_checked;
  j["mismatches"] = r.mismatches;
  j["undefined_inputs"] = r.undefined_inputs;
  j["verified_len"] = r.verified_len;
  j["exhaustive"] = r.exhaustive;
  if (r.numerical_selector_margin > 0) {
    j["numerical_selector_margin"] = r.numerical_selector_margin;
    j["numerical_selector_rounding"] = r.numerical_selector_rounding;
  }
  if (r.numerical_output) j["worst_numerical_error"] = r.worst_numerical_error;
  else j["min_logit_margin"] = r.min_logit_margin;
  return j;
}

}  // namespace

CompileResult compile_program(const Program& input_program, const CompileOptions& options) {
  using namespace compiler;
  auto start = std::chrono::steady_clock::now();
  CompileResult result;
  const std::string& dump_after = options.dump_after;
  auto wants = [&](const char* pass) { return dump_after == pass; };
  auto deliver = [&](std::string dump) {
    result.dump = std::move(dump);
    if (options.on_dump) options.on_dump(result.dump);
  };

  // Value sets are inferred on the simplified program: merging means there is what lets the
  // Dyck programs' balances be one numerical s-op, and refusals would otherwise come too early.
  Program program =
      width_steps(merge_means(simplify(options.mode == Mode::Causal ? causal_prefixes(input_program) : input_program)));
  Inference inference = infer(program, options);
  Program counted = count_sorts(program, inference, options);
  if (counted.nodes.size() != program.nodes.size()) {
    program = width_steps(counted);
    inference = infer(program, options);
  }
  Program pruned = prune_map_inputs(program, inference, options);
  if (pruned.nodes.size() != program.nodes.size()) {
    program = std::move(pruned);
    inference = infer(program, options);
  }
  Program split = split_disjoint_widths(program, inference);
  if (split.nodes.size() != program.nodes.size()) {
    program = std::move(split);
    inference = infer(program, options);
  }
  // After the split: a disjoint `or` costs two heads there, where a tuple would cost an MLP too.
  // The rewrite may leave the node count as it was (the selectors it replaces are dropped); the
  // tuples it adds always show it.
  auto tuples = [](const Program& p) {
    return std::count_if(p.nodes.begin(), p.nodes.end(), [](const Node& n) {
      return n.kind == NodeKind::Elementwise && n.op == ElementOp::Tuple;
    });
  };
  Program paired = pair_selector_sides(program, inference);
  if (tuples(paired) != tuples(program)) {
    program = std::move(paired);
    inference = infer(program, options);
  }
  NodeKind out_kind = program.node(program.output).kind;
  if (out_kind != NodeKind::Elementwise && out_kind != NodeKind::Aggregate && out_kind != NodeKind::SelectorWidth) {
    add_output_copy(program, inference);
    inference = infer(program, options);
  }
  if (wants("infer")) deliver(dump_inference(program, inference));
  if (wants("simplify")) deliver(dump_program(program) + dump_inference(program, inference));

  // From here on the program stays as it is: the passes below may keep what they fuse.
  FusedCacheScope keep_map_values(program);
  Schedule placed = schedule(program, inference, options);
  if (wants("schedule")) deliver(dump_schedule(program, placed));
  if (options.explain) {
    result.explanation = explain(program, inference, placed);
    if (options.on_explanation) options.on_explanation(result.explanation);
  }

  Allocation allocation = allocate(program, inference, placed, options);
  if (wants("allocate")) deliver(dump_allocation(allocation));

  check_budget(program, inference, placed, allocation, options);
  Lowered lowered = lower(program, inference, placed, allocation, options);
  if (wants("lower")) deliver(dump_lowered(lowered, allocation));

  result.model = assemble(program, inference, allocation, lowered, options);
  const nlohmann::json placement = placement_metadata(program, inference, placed, allocation, lowered, options.max_len);
  result.model.metadata["sops"] = placement["sops"];
  result.model.metadata["heads"] = placement["heads"];
  CompileReport& report = result.report;
  const ModelConfig& config = result.model.config;
  report.config = config;
  report.layers = config.n_layer;
  report.heads = config.n_head;
  report.n_embd = config.n_embd;
  report.n_inner = config.n_inner;
  report.parameters = parameter_count(config);
  report.numerical_output = inference.info[size_t(program.output)].encoding == Encoding::Numerical;
  for (const auto& [id, plan] : inference.numbers.selects) {
    NumericMargin m = numeric_select_margin(plan, options.max_len);
    if (report.numerical_selector_margin == 0 || m.margin < report.numerical_selector_margin)
      report.numerical_selector_margin = m.margin;
    report.numerical_selector_rounding = std::max(report.numerical_selector_rounding, m.rounding);
  }
  const VerificationEstimate to_verify = estimate_verification(result.model, options);
  report.estimated_verify_inputs = to_verify.inputs;
  report.estimated_verify_seconds = to_verify.seconds;
  report.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (wants("assemble")) {
    nlohmann::json cfg = {{"n_layer", config.n_layer}, {"n_head", config.n_head}, {"n_embd", config.n_embd},
                          {"n_inner", config.n_inner}, {"n_positions", config.n_positions},
                          {"vocab", result.model.vocab}, {"residual_labels", result.model.residual_labels}};
    deliver(cfg.dump(2) + "\n");
  }
  if (options.on_assembled) options.on_assembled(report);

  if (options.verify) verify(input_program, program, inference, placed, allocation, result.model, options, report);
  if (wants("verify")) deliver(report_json(report).dump(2) + "\n");
  result.model.metadata["compile"] = report_json(report);
  return result;
}

void check_compile_limits(int max_len, int verify_len, long samples, const OptionNames& names) {
  if (max_len < 1 || max_len > kMaxCompileLength)
    fail_file(names.max_len, "must be between 1 and " + std::to_string(kMaxCompileLength) + ", not " + std::to_string(max_len));
  if (verify_len < 0) fail_file(names.verify_len, "must be at least 1");
  if (verify_len > max_len)
    fail_file(names.verify_len, "is " + std::to_string(verify_len) + ", above " + names.max_len + " " +
                                    std::to_string(max_len) + ": the model takes no longer inputs to verify");
  if (samples < 0 || samples > kMaxSamples)
    fail_file(names.samples, "must be from 0 to " + std::to_string(kMaxSamples) + ", not " + std::to_string(samples));
}

}  // namespace raspc
