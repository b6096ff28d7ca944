// Text forms of the passes' results, for `raspc compile --dump-after=PASS` and `--explain`.
#include <cmath>
#include <sstream>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

std::string value_list(const std::vector<Value>& values, size_t shown = 12) {
  std::string s = "{";
  for (size_t i = 0; i < values.size() && i < shown; ++i) s += (i ? ", " : "") + to_display(values[i]);
  if (values.size() > shown) s += ", ... (" + std::to_string(values.size()) + " values)";
  return s + "}";
}

std::string encoding_name(Encoding e) {
  return e == Encoding::Numerical ? "numerical" : e == Encoding::Categorical ? "categorical" : "-";
}

}  // namespace

const char* node_kind_name(const Node& node) {
  switch (node.kind) {
    case NodeKind::Tokens: return "tokens";
    case NodeKind::Indices: return "indices";
    case NodeKind::Constant: return "constant";
    case NodeKind::Elementwise: return "map";
    case NodeKind::Aggregate: return "aggregate";
    case NodeKind::SelectorWidth: return "selector_width";
    case NodeKind::Select: return "select";
    case NodeKind::SelectAnd: return "and";
    case NodeKind::SelectOr: return "or";
    case NodeKind::SelectNot: return "not";
    case NodeKind::Construction: return node.construction->kind_name();
  }
  return "?";
}

const char* schema_kind(const Node& node) {
  // A width step or part is a head that counts keys, as a selector_width's is.
  if (construction_of(node) != nullptr && counts_keys(node)) return "selector_width";
  return node_kind_name(node);
}

std::string dump_program(const Program& program, const std::string& title) {
  std::ostringstream out;
  out << "# " << title << ": " << program.nodes.size() << " nodes, output " << program.label(program.output) << "\n";
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    const Node& node = program.node(id);
    out << "%" << id << " " << program.label(id) << " = " << node_kind_name(node);
    if (node.kind == NodeKind::Constant) out << " " << to_source(node.constant);
    out << "(";
    for (size_t i = 0; i < node.inputs.size(); ++i) out << (i ? ", " : "") << "%" << node.inputs[i];
    out << ")\n";
  }
  return out.str();
}

std::string dump_inference(const Program& program, const Inference& inference) {
  std::ostringstream out;
  out << "# infer: value sets and encodings\n";
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    const SopInfo& info = inference.info[size_t(id)];
    const Node& node = program.node(id);
    if (!info.needed) continue;
    out << "%" << id << " " << program.label(id) << ": ";
    if (node.is_selector()) {
      out << "selector" << (info.at_most_one ? " (selects at most one key)" : "") << "\n";
      continue;
    }
    out << encoding_name(info.encoding) << " ";
    if (info.values_known) out << value_list(info.values);
    else out << "[" << info.lo << ", " << info.hi << "] (too many values to list)";
    out << "\n";
  }
  return out.str();
}

std::string dump_schedule(const Program& program, const Schedule& schedule) {
  std::ostringstream out;
  out << "# schedule: " << schedule.blocks << " block" << (schedule.blocks == 1 ? "" : "s") << "\n";
  for (int b = 1; b <= schedule.blocks; ++b) {
    out << "block " << b - 1 << "\n  attention:";  // 0-based, as the model's layers are
    if (schedule.heads[size_t(b - 1)].empty()) out << " (none)";
    for (NodeId h : schedule.heads[size_t(b - 1)]) out << " " << program.label(h);
    out << "\n  mlp:";
    if (schedule.mlps[size_t(b - 1)].empty()) out << " (none)";
    for (const MlpJob& job : schedule.mlps[size_t(b - 1)]) {
      out << " " << (job.erase_scratch ? "erase " : "") << program.label(job.node) << "(";
      for (size_t i = 0; i < job.inputs.size(); ++i) {
        out << (i ? ", " : "") << program.label(job.inputs[i]);
        if (job.reads[i] == ReadKind::Scratch)
          out << (is_construction(program.node(job.inputs[i]), WidthHeadKind::WidthStep)   ? " as BOS's weight"
                  : is_construction(program.node(job.inputs[i]), WidthHeadKind::WidthPart) ? " as w/(w+Z)"
                                                                                              : " as 1/(w+1)");
        if (job.reads[i] == ReadKind::Numeric) out << " numeric";
      }
      out << ")" << (job.projected() ? " projected" : "");
    }
    out << "\n";
  }
  return out.str();
}

std::string dump_allocation(const Allocation& allocation) {
  std::ostringstream out;
  out << "# allocate: " << allocation.width() << " residual dimensions\n";
  for (int d = 0; d < allocation.width(); ++d) out << d << "\t" << allocation.labels[size_t(d)] << "\n";
  return out.str();
}

std::string dump_lowered(const Lowered& lowered, const Allocation& allocation) {
  std::ostringstream out;
  out << "# lower: " << lowered.blocks.size() << " blocks, n_embd " << lowered.width << "\n";
  auto label = [&](int d) { return d < allocation.width() ? allocation.labels[size_t(d)] : "pad" + std::to_string(d); };
  auto show = [&](const char* name, const Matrix& m) {
    out << "    " << name << " (" << m.rows << "x" << m.cols << "):";
    for (int r = 0; r < m.rows; ++r)
      for (int c = 0; c < m.cols; ++c)
        if (std::fabs(m.at(r, c)) > 1e-12) out << " [" << label(r) << "," << c << "]=" << m.at(r, c);
    out << "\n";
  };
  for (size_t b = 0; b < lowered.blocks.size(); ++b) {
    const LoweredBlock& block = lowered.blocks[b];
    out << "block " << b << ": ln_1 gain " << block.ln1_gain << ", ln_2 gain " << block.ln2_gain << "\n";
    for (size_t h = 0; h < block.heads.size(); ++h) {
      out << "  head " << h << "\n";
      show("W_Q", block.heads[h].wq);
      show("W_K", block.heads[h].wk);
      show("W_V", block.heads[h].wv);
    }
    out << "  mlp: " << block.unit_labels.size() << " units\n";
    for (size_t u = 0; u < block.unit_labels.size(); ++u)
      out << "    unit " << u << ": " << block.unit_labels[u] << " (bias " << block.fc_bias[u] << ")\n";
  }
  if (lowered.lnf_gains.empty()) {
    out << "ln_f gain " << lowered.lnf_gain << "\n";
  } else {  // an embedded map with tied tokens: a gain per dimension
    out << "ln_f gains";
    for (size_t c = 0; c < lowered.lnf_gains.size(); ++c)
      if (lowered.lnf_gains[c] != 0) out << " [" << label(int(c)) << "]=" << lowered.lnf_gains[c];
    out << "\n";
  }
  return out.str();
}

// An s-op's label (the name its residual dimensions carry), and, where the program did not name
// it, what it is in the source: "selector_width#18_1 (`sort(shown, key)` at most_freq.rasp:20:10,
// part 1 of 2)".
namespace {
std::string shown_name(const Program& program, NodeId id) {
  const std::string label = program.label(id), source = program.source_of(id);
  return program.named_in_source(id) || source == "`" + label + "`" ? label : label + " (" + source + ")";
}
}  // namespace

std::string explain(const Program& program, const Inference& inference, const Schedule& schedule) {
  std::ostringstream out;
  // Maps without dimensions of their own are read by heads (a select's side, an aggregate's
  // values: folded into the weights) or by other maps (fused into their lookup).
  std::vector<uint8_t> read_by_head(program.nodes.size(), 0);
  for (const Node& node : program.nodes)
    if (node.kind == NodeKind::Select || node.kind == NodeKind::Aggregate)
      for (NodeId in : node.inputs) read_by_head[size_t(in)] = 1;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    const SopInfo& info = inference.info[size_t(id)];
    const Node& node = program.node(id);
    if (info.needed && node.kind == NodeKind::Select && !inference.numbers.why[size_t(id)].empty()) {
      out << shown_name(program, id) << ": selector, " << inference.numbers.why[size_t(id)] << "\n";
      continue;
    }
    if (!info.needed || node.is_selector() || node.kind == NodeKind::Constant) continue;
    std::string why = info.why;
    if (node.kind == NodeKind::Elementwise && node.op == ElementOp::Tuple)
      why = "a selector combines comparisons of these s-ops with `or` or `not`, and one head scores it over their " +
            std::to_string(info.values.size()) + " combinations: one dimension each";
    out << shown_name(program, id) << ": " << encoding_name(info.encoding) << ", because " << why << "; ";
    if (!schedule.why[size_t(id)].empty()) out << schedule.why[size_t(id)];
    else if (node.kind == NodeKind::Elementwise && read_by_head[size_t(id)])
      out << "folded into the weights of the heads that read it";
    else if (node.kind == NodeKind::Elementwise && schedule.embedded)
      out << "fused into the embedding's table of the map that reads it";
    else if (node.kind == NodeKind::Elementwise)
      out << "fused into the lookup table of the map that reads it";
    out << "\n";
  }
  return out.str();
}

std::string explain_rewritten(const Program& source, const std::vector<std::pair<std::string, std::string>>& away) {
  std::ostringstream out;
  for (const auto& [name, pass] : away) {
    const NodeId id = source.find(name);
    if (id < 0) continue;
    out << shown_name(source, id) << ": not in the model: the " << pass
        << " pass computes what reads it without it (docs/compiler.md says what each pass does)\n";
  }
  return out.str();
}

}  // namespace raspc::compiler
