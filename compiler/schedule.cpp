// The schedule pass: place every head (aggregate, selector_width) and every MLP job (a fused
// elementwise subgraph, a selector width's discretisation) in a block.
//
// Time runs 0 (embeddings), then 2b-1 after block b's attention and 2b after its MLP. A head in
// block b reads what is ready by 2b-2; an MLP in block b reads what is ready by 2b-1. Maps that
// only feed a head are folded into its weights and cost nothing; a chain of maps between two
// attention layers is one MLP; a selector width's MLP is fused with the maps that read it, so
// `length - indices - 1` is ready one MLP after `length`'s head. That is RASP's own accounting:
// the blocks equal the layers of language/analyse.hpp.
#include <algorithm>

#include "compiler/ir.hpp"
#include "runtime/residual_trace.hpp"

namespace raspc::compiler {
namespace {

class Scheduler {
 public:
  Scheduler(const Program& program, const Inference& inference, const CompileOptions& options)
      : program_(program), inference_(inference), options_(options) {
    size_t n = program.nodes.size();
    s_.block_of.assign(n, -1);
    s_.ready.assign(n, 0);
    s_.materialised.assign(n, 0);
    s_.why.assign(n, "");
    onehot_needed_.assign(n, 0);
  }

  Schedule run() {
    s_.output_from_scratch = scratch_output(program_, inference_, options_);
    mark_materialised();
    s_.embedded = embedded_map(program_, inference_, options_);
    for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id) {
      if (!inference_.info[size_t(id)].needed) continue;
      const Node& node = program_.node(id);
      switch (node.kind) {
        case NodeKind::Tokens:
        case NodeKind::Indices:
          s_.block_of[id] = 0;
          s_.materialised[id] = 1;
          s_.why[id] = "embedding";
          break;
        case NodeKind::Construction:
          if (const MlpConstruction* c = mlp_construction_of(node)) {
            place_mlp_construction(id, *c);
            break;
          }
          if (!counts_keys(node)) break;
          [[fallthrough]];
        case NodeKind::SelectorWidth:
          if (role(id) == NumberRole::CausalLength) {
            s_.block_of[id] = 0;
            s_.why[id] = "indices + 1, read from indices' number group";
            break;
          }
          place_head(id);
          break;
        case NodeKind::Aggregate: place_head(id); break;
        case NodeKind::Elementwise:
          if (s_.embedded && id == program_.output) place_embedded(id);
          else if (s_.materialised[id]) place_map(id);
          break;
        default: break;
      }
    }
    // Selector widths: the MLP of their block discretises 1/(w+1) into the one-hot where it is
    // read as one, and (under LayerNorm) erases the scratch value so later LayerNorms see only
    // one-hot values.
    for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id) {
      if (!inference_.info[size_t(id)].needed || !counts_keys(program_.node(id))) continue;
      // `length` as a number: no scratch value, no MLP; a width read as a number: its MLP writes
      // the number group instead of the one-hot.
      if (role(id) != NumberRole::None && role(id) != NumberRole::WidthNumber) continue;
      int b = s_.block_of[id];
      if (onehot_needed_[id]) {
        s_.materialised[id] = 1;
        s_.ready[id] = 2 * b;  // a map placed after the head may have asked for the one-hot
        add_job(b, MlpJob{id, {id}, {ReadKind::Scratch}, false});
      }
      // The output read from its scratch keeps it to the end: nothing after it reads the residual.
      if (id == program_.output && s_.output_from_scratch) {
        s_.why[id] += "; " + scratch_output_why();
        continue;
      }
      if (options_.layer_norm) add_job(b, MlpJob{id, {id}, {ReadKind::Scratch}, true});
    }
    // Only an embedded output leaves the model without blocks.
    if (!s_.embedded) s_.blocks = std::max(1, s_.blocks);
    s_.heads.resize(size_t(s_.blocks));
    s_.mlps.resize(size_t(s_.blocks));
    return std::move(s_);
  }

 private:
  const Program& program_;
  const Inference& inference_;
  const CompileOptions& options_;
  Schedule s_;
  std::vector<uint8_t> onehot_needed_;  // selector widths read as one-hot values

  Encoding encoding(NodeId id) const { return inference_.info[size_t(id)].encoding; }
  NumberRole role(NodeId id) const { return inference_.numbers.of(id); }

  void mark_materialised() {
    NodeId out = program_.output;
    if (program_.node(out).kind == NodeKind::Elementwise) s_.materialised[out] = 1;
    // Tuples (pair_selectors.cpp) exist to be read by heads as one-hots: always an MLP of their own.
    for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id) {
      const Node& node = program_.node(id);
      bool tuple = node.kind == NodeKind::Elementwise && node.op == ElementOp::Tuple;
      // A map of widths read as a number by numerical selectors: its MLP writes its number group.
      bool number = role(id) == NumberRole::WidthNumber && node.kind == NodeKind::Elementwise;
      if ((inference_.cut[size_t(id)] || tuple || number) && inference_.info[size_t(id)].needed) s_.materialised[id] = 1;
    }
    if (counts_keys(program_.node(out)) && !s_.output_from_scratch) onehot_needed_[out] = 1;
    // A width read as a number is written by its MLP as well (its number group where the one-hot
    // would be), so it is ready, like a one-hot, after that MLP.
    for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id)
      if (role(id) == NumberRole::WidthNumber && inference_.info[size_t(id)].needed) onehot_needed_[id] = 1;
    for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id) {
      if (!inference_.info[size_t(id)].needed) continue;
      const Node& node = program_.node(id);
      if (node.kind == NodeKind::Aggregate) {
        s_.materialised[id] = 1;
        mark_head_side(node.inputs[1]);
      } else if (const MlpConstruction* c = mlp_construction_of(node)) {
        s_.materialised[id] = 1;
        const std::vector<ReadKind> reads = c->reads(node.inputs.size());
        for (size_t i = 0; i < reads.size(); ++i)
          if (reads[i] == ReadKind::OneHot) mark_head_side(node.inputs[i]);  // read as a head would
      } else if (node.kind == NodeKind::Select && role(id) != NumberRole::Select) {
        mark_head_side(node.inputs[0]);
        mark_head_side(node.inputs[1]);
      }
    }
  }

  // A head reads `side`: a map of one categorical s-op folds into its weights (that s-op's one-hot
  // is read instead), any other map is materialised.
  void mark_head_side(NodeId side) {
    const Node& node = program_.node(side);
    if (counts_keys(node)) onehot_needed_[side] = 1;
    if (node.kind != NodeKind::Elementwise) return;
    if (const NodeId source = folded_map_source(program_, inference_, side); source >= 0) {
      if (counts_keys(program_.node(source))) onehot_needed_[source] = 1;
    } else {
      s_.materialised[side] = 1;
    }
  }

  // When a head can read `side`'s value (one-hot or numeric dimension).
  int head_ready(NodeId side) const {
    const Node& node = program_.node(side);
    switch (node.kind) {
      case NodeKind::Constant: return 0;
      case NodeKind::Construction:
        if (!counts_keys(node)) return s_.ready[side];
        [[fallthrough]];
      case NodeKind::SelectorWidth:
        return role(side) != NumberRole::None && role(side) != NumberRole::WidthNumber ? s_.ready[side]
                                                                                      : 2 * s_.block_of[side];
      case NodeKind::Elementwise:
        if (!s_.materialised[side]) {
          int t = 0;
          for (NodeId s : support_of(program_, side, &inference_.cut)) t = std::max(t, head_ready(s));
          return t;
        }
        return s_.ready[side];
      default: return s_.ready[side];
    }
  }

  void selector_sides(NodeId sel, std::vector<NodeId>& sides) const {
    const Node& node = program_.node(sel);
    if (node.kind == NodeKind::Select) {
      sides.push_back(node.inputs[0]);
      sides.push_back(node.inputs[1]);
    } else {
      for (NodeId in : node.inputs) selector_sides(in, sides);
    }
  }

  void place_head(NodeId id) {
    const Node& node = program_.node(id);
    std::vector<NodeId> sides;
    selector_sides(node.inputs[0], sides);
    if (node.kind == NodeKind::Aggregate) sides.push_back(node.inputs[1]);
    int t = 0;
    for (NodeId side : sides) t = std::max(t, head_ready(side));
    int b = (t + 1) / 2 + 1;
    s_.block_of[id] = b;
    s_.ready[id] = counts_keys(node) && onehot_needed_[id] ? 2 * b : 2 * b - 1;
    s_.blocks = std::max(s_.blocks, b);
    if (s_.heads.size() < size_t(b)) s_.heads.resize(size_t(b));
    s_.heads[size_t(b - 1)].push_back(id);
    // A mean over a prefix of the position's digits is two heads (constructions/prefix_mean.cpp).
    const bool two = is_prefix_mean(program_, inference_.numbers, id);
    if (two) s_.heads[size_t(b - 1)].push_back(id);
    s_.why[id] = std::string(two ? "two heads" : "a head") + ", blocks." + std::to_string(b - 1) +
                 ".attn: its inputs are ready " +
                 (t == 0 ? std::string("at the embeddings") : "after " + describe_time(t));
  }

  void place_embedded(NodeId id) {
    s_.block_of[id] = 0;
    s_.ready[id] = 0;
    s_.materialised[id] = 1;
    s_.why[id] = s_.embedded->why();
  }

  // Time t is residual stage t: "blocks.0.attn", named as TransformerLens names the modules.
  static std::string describe_time(int t) { return stage_description(t); }

  void place_map(NodeId id) {
    std::vector<NodeId> support = support_of(program_, id, &inference_.cut);
    std::vector<ReadKind> reads(support.size(), ReadKind::OneHot);
    auto time_of = [&](size_t i) {
      NodeId s = support[i];
      if (reads[i] == ReadKind::Scratch) return 2 * s_.block_of[s] - 1;
      if (counts_keys(program_.node(s))) return 2 * s_.block_of[s];
      return s_.ready[s];
    };
    int numeric_reads = 0;
    for (size_t i = 0; i < support.size(); ++i) {
      NodeId s = support[i];
      // A width step holds BOS's weight, not 1/(w+1): only its own MLP reads that.
      if (holds_count(program_.node(s)))
        reads[i] = ReadKind::Scratch, ++numeric_reads;
      else if (encoding(s) == Encoding::Numerical) reads[i] = ReadKind::Numeric, ++numeric_reads;
    }
    // One MLP discretises one numeric input, or two of them along one line where a selector
    // width is among them (project_reads.cpp); otherwise selector widths are read as one-hots.
    std::optional<double> line;
    if (numeric_reads == 2 && std::count(reads.begin(), reads.end(), ReadKind::Scratch) > 0 &&
        same_block_scratch(support, reads))
      line = projection_for(program_, inference_, id, support, reads, options_.max_len);
    bool projected = line.has_value();
    if (numeric_reads > 1 && !projected)
      for (size_t i = 0; i < support.size(); ++i)
        if (reads[i] == ReadKind::Scratch) reads[i] = ReadKind::OneHot;
    int t = 0;
    for (size_t i = 0; i < support.size(); ++i) t = std::max(t, time_of(i));
    int b = t / 2 + 1;
    // A scratch value lives only in its own block: later blocks read the one-hot.
    for (size_t i = 0; i < support.size(); ++i)
      if (reads[i] == ReadKind::Scratch && s_.block_of[support[i]] != b) reads[i] = ReadKind::OneHot, projected = false;
    t = 0;
    for (size_t i = 0; i < support.size(); ++i) t = std::max(t, time_of(i));
    b = t / 2 + 1;
    for (size_t i = 0; i < support.size(); ++i)
      if (reads[i] == ReadKind::OneHot && counts_keys(program_.node(support[i])))
        onehot_needed_[support[i]] = 1;
    s_.block_of[id] = b;
    s_.ready[id] = 2 * b;
    s_.blocks = std::max(s_.blocks, b);
    add_job(b, MlpJob{id, support, reads, false, projected ? *line : 0.0});
    s_.why[id] = "an MLP, blocks." + std::to_string(b - 1) + ".mlp (a lookup over " + std::to_string(support.size()) +
                 " input" + (support.size() == 1 ? "" : "s") +
                 (projected ? ", two of them read along one line" : "") + "): its inputs are ready " +
                 (t == 0 ? std::string("at the embeddings") : "after " + describe_time(t));
    if (inference_.written_from_scratch(id))
      s_.why[id] += " (a map of a long width, written from its 1/(w+1) so that the width needs no one-hot for it)";
  }

  // A construction with an MLP of its own (constructions/construction.hpp): that MLP, in the first
  // block after its inputs are ready (a one-hot read as a head reads it).
  void place_mlp_construction(NodeId id, const MlpConstruction& construction) {
    const Node& node = program_.node(id);
    const std::vector<ReadKind> reads = construction.reads(node.inputs.size());
    int t = 0;
    for (size_t i = 0; i < node.inputs.size(); ++i)
      t = std::max(t, reads[i] == ReadKind::OneHot ? head_ready(node.inputs[i]) : s_.ready[node.inputs[i]]);
    const int b = t / 2 + 1;
    s_.block_of[id] = b;
    s_.ready[id] = 2 * b;
    add_job(b, MlpJob{id, node.inputs, reads, false});
    s_.why[id] = "an MLP, blocks." + std::to_string(b - 1) + ".mlp (" + construction.purpose(node) +
                 "): its inputs are ready after " + describe_time(t);
  }

  // The numeric reads that are selector widths' scratch values are all in one block (a scratch
  // value lives only in its own block, so only then can one MLP read them all).
  bool same_block_scratch(const std::vector<NodeId>& support, const std::vector<ReadKind>& reads) const {
    int block = -1;
    for (size_t i = 0; i < support.size(); ++i) {
      if (reads[i] != ReadKind::Scratch) continue;
      if (block >= 0 && s_.block_of[support[i]] != block) return false;
      block = s_.block_of[support[i]];
    }
    return true;
  }

  void add_job(int b, MlpJob job) {
    if (s_.mlps.size() < size_t(b)) s_.mlps.resize(size_t(b));
    s_.mlps[size_t(b - 1)].push_back(std::move(job));
    s_.blocks = std::max(s_.blocks, b);
  }
};

}  // namespace

Schedule schedule(const Program& program, const Inference& inference, const CompileOptions& options) {
  return Scheduler(program, inference, options).run();
}

}  // namespace raspc::compiler
