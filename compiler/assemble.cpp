// The assemble pass: the lowered matrices into GPT-2's parameters (Hugging Face layout).
//
// Heads are laid side by side, each in its own d_head slice of Q, K and V (padded with zeros);
// the runtime divides scores by sqrt(d_head), so W_Q is multiplied by it here. LayerNorms get a
// uniform gain and zero bias (lower.cpp explains why that makes them harmless). MLPs narrower
// than the widest are padded with units whose weights are zero (GELU(0) = 0).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>
#include <utility>

#include "compiler/ir.hpp"
#include "runtime/model_output.hpp"

namespace raspc::compiler {
namespace {

// The values a numerical output can take, as the interpreter displays them, sorted by number, for
// metadata["output"]["values"]: the runtime prints the one a reading stands for (1/3, not
// 0.333336). Empty when the list would not be sound or is too long to store:
//  - the value set is not known exactly (an affine map without a finite set): nothing to snap to;
//  - it has more than kValueSetLimit values: the list lives in the file's JSON header;
//  - two adjacent values a < b are within 2 * kNumericalOutputTolerance * max(1, |a|, |b|) of each
//    other (1/23 and 1/22 in a mean over 23 positions): a reading the verification accepts for one
//    could then be as near the other, and no single value is the one it stands for. With the gap
//    wider than that, a reading within the tolerance of v is nearer v than any other value, so
//    "the nearest value, if within the tolerance" never names a value other than the proven one.
std::vector<std::string> snappable_values(const SopInfo& info) {
  if (!info.values_known || info.values.empty() || info.values.size() > kValueSetLimit) return {};
  std::vector<std::pair<double, std::string>> numbers;
  for (const Value& v : info.values) {
    if (v.is_string()) return {};
    numbers.emplace_back(number_of(v), to_display(v));
  }
  // value_less puts numbers before bools, so 1 and True may both be present and far apart.
  std::stable_sort(numbers.begin(), numbers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> display;
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (i > 0) {
      const double a = numbers[i - 1].first, b = numbers[i].first;
      const double scale = std::max({1.0, std::fabs(a), std::fabs(b)});
      if (!(b - a > 2 * kNumericalOutputTolerance * scale)) return {};
    }
    display.push_back(numbers[i].second);
  }
  return display;
}

// "hist.rasp:5:8" for a node's expression, the whole source line it starts on, and its own text.
nlohmann::json source_of(const Span& span) {
  if (!span.valid()) return nullptr;
  const SourceExcerpt excerpt = excerpt_of(span);
  // The file's own name: where it was compiled from says nothing to a reader of the model.
  const std::string file = std::filesystem::path(excerpt.file).filename().string();
  return {{"at", file + ":" + std::to_string(excerpt.at.line) + ":" + std::to_string(excerpt.at.column)},
          {"line", excerpt.line},
          {"text", excerpt.text}};
}


}  // namespace

Model assemble(const Program& program, const Inference& inference, const Allocation& allocation,
               const Lowered& lowered, const CompileOptions& options) {
  Model model;
  ModelConfig& config = model.config;
  config.n_layer = int(lowered.blocks.size());
  int n_head = 1, n_inner = 0;
  for (const LoweredBlock& block : lowered.blocks) {
    n_head = std::max(n_head, int(block.heads.size()));
    n_inner = std::max(n_inner, int(block.unit_labels.size()));
  }
  const int C = lowered.width;
  config.n_head = n_head;
  config.n_embd = C;
  // An attention-only program still gets a 1-unit MLP of zeros (exact: GELU(0) * 0 = 0): HF's GPT-2
  // crashes on n_inner 0 and llama.cpp's gpt2 graph needs an MLP, and the counts say so honestly.
  if (config.n_layer > 0) n_inner = std::max(n_inner, 1);
  config.n_inner = n_inner;
  config.n_positions = options.max_len + 1;
  config.vocab_size = int(lowered.vocab.size());
  // A model of no blocks, or of blocks without heads (maps only), reads no other position: it runs
  // alike with a causal mask and without, so it says causal, and every runtime (llm.c's, which
  // always masks, and the KV-cache decoder) takes it.
  bool heads = false;
  for (const LoweredBlock& block : lowered.blocks) heads = heads || !block.heads.empty();
  config.causal = options.mode == Mode::Causal || !heads;
  config.layer_norm = options.layer_norm;
  config.activation = options.activation;
  model.allocate();
  const int d = C / n_head;
  const double q_scale = std::sqrt(double(d));
  // Cancellations in the lowering leave values like 1e-16 where the weight is 0.
  auto clean = [](double v) { return std::fabs(v) < 1e-9 ? 0.0f : float(v); };

  auto* w = &model.w;
  for (size_t t = 0; t < lowered.wte.size(); ++t)
    for (const auto& [dim, v] : lowered.wte[t]) w->wte[t * C + size_t(dim)] += float(v);
  for (size_t p = 0; p < lowered.wpe.size(); ++p)
    for (const auto& [dim, v] : lowered.wpe[p]) w->wpe[p * C + size_t(dim)] += float(v);

  for (int l = 0; l < config.n_layer; ++l) {
    const LoweredBlock& block = lowered.blocks[size_t(l)];
    LayerWeights& L = w->layers[size_t(l)];
    if (config.layer_norm) {
      std::fill(L.ln_1_w, L.ln_1_w + C, float(block.ln1_gain));
      std::fill(L.ln_2_w, L.ln_2_w + C, float(block.ln2_gain));
    }
    for (size_t h = 0; h < block.heads.size(); ++h) {
      const LoweredHead& head = block.heads[h];
      const int base = int(h) * d;
      for (int r = 0; r < C; ++r) {
        float* row = L.attn_w + size_t(r) * 3 * C;
        for (int j = 0; j < head.wq.cols; ++j) row[base + j] = clean(head.wq.at(r, j) * q_scale);
        for (int j = 0; j < head.wk.cols; ++j) row[C + base + j] = clean(head.wk.at(r, j));
        for (int j = 0; j < head.wv.cols; ++j) row[2 * C + base + j] = clean(head.wv.at(r, j));
      }
      for (int j = 0; j < head.wo.rows; ++j)
        for (int c = 0; c < C; ++c) L.attn_proj_w[size_t(base + j) * C + c] = clean(head.wo.at(j, c));
    }
    if (n_inner > 0) {
      const int I = int(block.unit_labels.size());
      for (int r = 0; r < C; ++r)
        for (int u = 0; u < I; ++u) L.fc_w[size_t(r) * n_inner + u] = clean(block.fc.at(r, u));
      for (int u = 0; u < I; ++u) L.fc_b[u] = clean(block.fc_bias[size_t(u)]);
      for (int u = 0; u < I; ++u)
        for (int c = 0; c < C; ++c) L.fc_proj_w[size_t(u) * C + c] = clean(block.proj.at(u, c));
      for (int c = 0; c < C; ++c) L.fc_proj_b[c] = clean(block.proj_bias[size_t(c)]);
    }
  }
  if (config.layer_norm) std::fill(w->ln_f_w, w->ln_f_w + C, float(lowered.lnf_gain));
  if (config.layer_norm && !lowered.lnf_gains.empty())
    for (int c = 0; c < C; ++c) w->ln_f_w[c] = float(lowered.lnf_gains[size_t(c)]);

  model.vocab = lowered.vocab;
  model.bos_id = 0;
  model.input_ids = lowered.input_ids;
  model.residual_labels = allocation.labels;
  model.residual_labels.resize(size_t(C), "");
  model.metadata["mode"] = options.mode == Mode::Causal ? "causal" : "bidirectional";
  model.metadata["program"] = options.source_text;
  NodeId output = program.output;
  if (inference.info[size_t(output)].encoding == Encoding::Categorical) {
    model.metadata["output"] = {{"encoding", "categorical"}, {"token_ids", lowered.output_token_of_value}};
  } else {
    model.metadata["output"] = {{"encoding", "numerical"}, {"dim", allocation.numeric.at(output)}};
    std::vector<std::string> values = snappable_values(inference.info[size_t(output)]);
    if (!values.empty()) model.metadata["output"]["values"] = values;
  }
  // A weight that is not finite is a compiler bug, and the model reader would refuse the file:
  // refuse here, before verification (which may not read that weight) passes it.
  for (size_t i = 0; i < model.storage.size(); ++i)
    if (!std::isfinite(model.storage[i]))
      fail_at(program.node(program.output).span, "internal: the compiled model has a weight that is not finite "
                                                 "(parameter " + std::to_string(i) + "); please report this program");
  std::vector<std::vector<std::string>> units;
  for (const LoweredBlock& block : lowered.blocks) units.push_back(block.unit_labels);
  model.metadata["mlp_units"] = units;
  return model;
}

namespace {

// The names pictures and tables show (Program::shown_name), one a node: where two nodes would show
// alike (the nodes one library call makes), each adds its line and column; where they still do (a
// def called twice), they are numbered in the program's order, which is the calls' order.
std::map<NodeId, std::string> shown_names(const Program& program, const std::function<bool(NodeId)>& listed) {
  std::map<NodeId, std::string> shown;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id)
    if (listed(id)) shown[id] = program.shown_name(id);
  auto uses = [&] {
    std::map<std::string, int> count;
    for (const auto& entry : shown) ++count[entry.second];
    return count;
  };
  std::map<std::string, int> count = uses();
  for (auto& [id, name] : shown) {
    const Span& span = program.node(id).span;
    if (count[name] < 2 || !span.valid() || program.named_in_source(id)) continue;
    const LineColumn at = line_column(*span.file, span.begin);
    name += " at " + std::to_string(at.line) + ":" + std::to_string(at.column);
  }
  count = uses();
  std::map<std::string, int> seen;
  for (auto& [id, name] : shown)
    if (const int n = count[name]; n > 1) name += " (" + std::to_string(++seen[name]) + " of " + std::to_string(n) + ")";
  return shown;
}

}  // namespace

nlohmann::json placement_metadata(const Program& program, const Inference& inference, const Schedule& schedule,
                                  const Allocation& allocation, const Lowered& lowered, int max_len) {
  // A width held as its number group (a numerical selector's key, or the output: number_output.cpp)
  // is listed as a number read off the group's first dimension, u = (w - centre) / extent.
  auto width_number = [&](NodeId id) {
    return inference.numbers.of(id) == NumberRole::WidthNumber && allocation.number.count(id) > 0;
  };
  auto has_dims = [&](NodeId id) {
    return allocation.onehot.count(id) || allocation.numeric.count(id) || allocation.tokens.count(id) ||
           width_number(id);
  };
  // The residual s-ops a node is computed from: its inputs, looking through selectors, constants
  // and maps folded into a head or fused into an MLP, down to s-ops with dimensions of their own.
  std::function<void(NodeId, std::vector<NodeId>&)> sources = [&](NodeId id, std::vector<NodeId>& out) {
    for (NodeId input : program.node(id).inputs) {
      if (!has_dims(input)) sources(input, out);
      else if (std::find(out.begin(), out.end(), input) == out.end()) out.push_back(input);
    }
  };
  std::set<NodeId> head_nodes;
  for (const LoweredBlock& block : lowered.blocks)
    for (const LoweredHead& head : block.heads) head_nodes.insert(head.node);
  const std::map<NodeId, std::string> shown = shown_names(program, [&](NodeId id) {
    return has_dims(id) || allocation.scratch.count(id) || head_nodes.count(id);
  });
  nlohmann::json sops = nlohmann::json::array();
  auto add = [&](NodeId id, const std::vector<int>& dims, bool numerical, int stage, bool scratch) {
    const SopInfo& info = inference.info[size_t(id)];
    std::vector<NodeId> read;
    if (!scratch) sources(id, read);
    nlohmann::json reads = nlohmann::json::array();
    for (NodeId r : read) reads.push_back(program.label(r));
    nlohmann::json values = nlohmann::json::array();
    if (!scratch)
      for (const Value& v : info.values) values.push_back(to_display(v));
    // A width's scratch holds 1/(w+1) for the w keys selected besides BOS (a split width's part
    // w/(w+Z)), and 0 once erased; a width step holds BOS's weight (i + 1/2)/(i + 1/2 + w), too
    // many values to list.
    if (scratch && is_construction(program.node(id), WidthHeadKind::WidthStep)) values.push_back("0");
    else if (scratch && is_construction(program.node(id), WidthHeadKind::WidthPart))
      for (int w = 0, z = int(width_bos_weight(program.node(id), max_len)); w <= max_len; ++w)
        values.push_back(w == 0 ? "0" : std::to_string(w) + "/" + std::to_string(z + w));
    else if (scratch)
      for (int w = max_len; w >= -1; --w) values.push_back(w < 0 ? "0" : w == 0 ? "1" : "1/" + std::to_string(w + 1));
    sops.push_back({{"name", program.label(id) + (scratch ? ".scratch" : "")},
                    {"shown", shown.at(id) + (scratch ? " (scratch)" : "")},
                    {"kind", scratch ? "scratch" : schema_kind(program.node(id))},
                    {"encoding", numerical ? "numerical" : "categorical"},
                    {"dims", dims},
                    {"values", values},
                    {"value_count", info.values_known ? nlohmann::json(info.values.size()) : nlohmann::json()},
                    {"stage", stage},
                    {"reads", reads},
                    {"output", id == program.output && !scratch},
                    {"source", source_of(program.node(id).span)}});
  };
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    const int stage = schedule.ready[size_t(id)];
    if (auto it = allocation.tokens.find(id); it != allocation.tokens.end()) add(id, it->second, false, 0, false);
    // A selector width's 1/(w+1) is written by its head, one stage before the MLP that reads it.
    if (auto it = allocation.scratch.find(id); it != allocation.scratch.end()) {
      // The output read from its scratch (constructions/scratch_output.cpp) has no other
      // dimension: listed as the s-op itself, its value 1/x - 1, so traces, probes and patches
      // see the count.
      const bool the_count = id == program.output && schedule.output_from_scratch;
      add(id, {it->second}, true, 2 * schedule.block_of[size_t(id)] - 1, !the_count);
      if (the_count) {
        sops.back()["reciprocal"] = true;
        sops.back()["offset"] = -1.0;
      }
    }
    if (auto it = allocation.onehot.find(id); it != allocation.onehot.end()) {
      // An embedded map written through pairs (tied tokens, or a map of the token and the position:
      // constructions/embedded_map.cpp) is read by the unembedding from its dimensions, their
      // partners and `pad`, which keeps the rows' sums at 0 (the whole residual of such a model):
      // decoded from the output tokens' logits, and patched with all three, so that a patched
      // position is the other input's to the last bit.
      const bool paired = id == program.output && schedule.embedded && schedule.embedded->paired();
      std::vector<int> dims = it->second;
      if (paired) {
        dims.insert(dims.end(), allocation.unembed.begin(), allocation.unembed.end());
        if (allocation.pad >= 0) dims.push_back(allocation.pad);
      }
      add(id, dims, false, stage, false);
      if (paired) sops.back()["logits"] = true;
    }
    if (auto it = allocation.numeric.find(id); it != allocation.numeric.end()) add(id, {it->second}, true, stage, false);
    if (width_number(id)) {
      // All six dimensions, so that a patch moves the whole group (its readers read u^2 and y too).
      add(id, allocation.number.at(id), true, stage, false);
      sops.back()["scale"] = inference.numbers.extent;
      sops.back()["offset"] = inference.numbers.centre;
    }
  }
  // How a head computes its s-op, for pictures that explain it (view/): the constructions whose
  // patterns do not look like their selector (a width attends to BOS; a numerical selector scores
  // distances).
  auto construction = [&](NodeId id) -> const char* {
    const Node& node = program.node(id);
    if (const WidthHead* c = width_head_of(node)) {
      switch (c->kind) {
        case WidthHeadKind::WidthStep:
          return static_cast<const WidthStep*>(c)->step_of_sort.empty() ? "width_step" : "counting_sort_step";
        case WidthHeadKind::WidthPart: return "width_part";
      }
    }
    if (inference.numbers.of(id) == NumberRole::LastIndex) return "length";
    if (node.kind == NodeKind::SelectorWidth) return "selector_width";
    if (!node.inputs.empty() && inference.numbers.of(node.inputs[0]) == NumberRole::Select) return "numerical_selector";
    if (is_prefix_mean(program, inference.numbers, id)) return "prefix_mean";
    return inference.info[size_t(id)].encoding == Encoding::Numerical ? "mean" : "copy";
  };
  nlohmann::json heads = nlohmann::json::array();
  for (const LoweredBlock& block : lowered.blocks) {
    nlohmann::json layer = nlohmann::json::array();
    for (const LoweredHead& head : block.heads) {
      const Node& node = program.node(head.node);
      layer.push_back({{"sop", program.label(head.node)},
                       {"shown", shown.at(head.node)},
                       {"kind", schema_kind(node)},
                       {"construction", construction(head.node)},
                       {"selector", source_of(program.node(node.inputs.at(0)).span)},
                       {"source", source_of(node.span)}});
    }
    heads.push_back(layer);
  }
  return {{"sops", sops}, {"heads", heads}};
}

}  // namespace raspc::compiler
