#include "runtime/residual_trace.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "runtime/cpu_backend.hpp"
#include "runtime/model_output.hpp"
#include "runtime/vector_ops.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

namespace {

[[noreturn]] void bad_placement(const std::string& what) {
  fail_at(Span{}, "the model's s-op metadata " + what + "; recompile the model to rewrite it");
}

std::string text_field(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "";
  if (!j[key].is_string()) bad_placement(std::string("has a \"") + key + "\" that is not text");
  return j[key].get<std::string>();
}

SourceLocation location_of(const nlohmann::json& j) {
  return {text_field(j, "at"), text_field(j, "line"), text_field(j, "text")};
}

std::vector<std::string> text_list(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  if (!j[key].is_array()) bad_placement(std::string("has a \"") + key + "\" that is not a list");
  for (const nlohmann::json& item : j[key]) {
    if (!item.is_string()) bad_placement(std::string("lists ") + item.dump() + " in \"" + key + "\", not text");
    out.push_back(item.get<std::string>());
  }
  return out;
}

int int_field(const nlohmann::json& j, const char* key, int lo, int hi) {
  if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<int64_t>() < lo || j[key].get<int64_t>() > hi)
    bad_placement(std::string("needs \"") + key + "\" to be an integer from " + std::to_string(lo) + " to " +
                  std::to_string(hi) + ", not " + (j.contains(key) ? j[key].dump() : std::string("missing")));
  return j[key].get<int>();
}

// The one-hot's value: the dimension that stands out. A one-hot whose largest entry is not clearly
// above the rest (less than half of it again) has no clear value.
std::string decode_categorical(const SopPlacement& sop, const float* x) {
  size_t best = 0;
  float runner_up = -INFINITY;
  for (size_t i = 1; i < sop.dims.size(); ++i) {
    if (x[sop.dims[i]] > x[sop.dims[best]]) {
      runner_up = x[sop.dims[best]];
      best = i;
    } else {
      runner_up = std::max(runner_up, x[sop.dims[i]]);
    }
  }
  const float top = x[sop.dims[best]];
  if (!(top > 1e-3f) || (sop.dims.size() > 1 && !(top - runner_up > 0.5f * top))) return "?";
  return best < sop.values.size() ? sop.values[best] : std::to_string(best);
}

// The value whose token the unembedding reads highest at x: ln_f as the forward applies it (the
// runtime's own kernel; nothing without LayerNorm), then each token's logit.
std::string decode_by_logits(const Model& model, const SopPlacement& sop, const float* x) {
  const int C = model.config.n_embd;
  std::vector<float> read(x, x + C);
  if (model.config.layer_norm)
    layernorm_rows(read.data(), nullptr, nullptr, x, model.w.ln_f_w, model.w.ln_f_b, 1, C, kLayerNormEpsilon);
  size_t best = 0;
  double best_logit = -INFINITY;
  for (size_t i = 0; i < sop.logit_tokens.size(); ++i) {
    const float* w = model.w.wte + size_t(sop.logit_tokens[i]) * size_t(C);
    double logit = 0;
    for (int c = 0; c < C; ++c) logit += double(read[size_t(c)]) * w[c];
    if (logit > best_logit) best_logit = logit, best = i;
  }
  return sop.values[best];
}

std::string pad(const std::string& s, size_t width) { return s + std::string(width > s.size() ? width - s.size() : 0, ' '); }

}  // namespace

std::string stage_name(int stage, int n_layer) {
  if (stage == 0) return n_layer == 0 ? "hook_embed + hook_pos_embed" : "blocks.0.hook_resid_pre";
  const int block = (stage - 1) / 2;
  return "blocks." + std::to_string(block) + (stage % 2 ? ".hook_resid_mid" : ".hook_resid_post");
}

std::string stage_description(int stage) {
  if (stage == 0) return "the embedding";
  return "blocks." + std::to_string((stage - 1) / 2) + (stage % 2 ? ".attn" : ".mlp");
}

std::vector<std::string> stage_names(int n_layer) {
  std::vector<std::string> names;
  for (int s = 0; s <= 2 * n_layer; ++s) names.push_back(stage_name(s, n_layer));
  return names;
}

std::vector<std::string> numbered_residual_labels(const Model& model) {
  std::vector<std::string> labels = model.residual_labels;
  labels.resize(size_t(model.config.n_embd));
  for (int c = 0; c < model.config.n_embd; ++c)
    if (labels[size_t(c)].empty()) labels[size_t(c)] = "d" + std::to_string(c);
  return labels;
}

namespace {

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '#'; }

}  // namespace

std::vector<std::string> shown_labels(std::vector<std::string> labels, const ModelPlacement& placement) {
  // Every identifier whose shown name differs: made up with an id ("frequency#4", "map#20"), by a
  // rewrite ("sorted_below_1", a counting sort's step), or the library's where the program named
  // the s-op ("length" as "n_tokens"). Whole identifiers only: map#2 is not map#20's start.
  std::vector<std::pair<const std::string*, const std::string*>> renames;
  for (const SopPlacement& sop : placement.sops)
    if (sop.kind != "scratch" && sop.shown != sop.name) renames.push_back({&sop.name, &sop.shown});
  for (const auto& layer : placement.heads)
    for (const HeadPlacement& head : layer)
      if (head.shown != head.sop) renames.push_back({&head.sop, &head.shown});
  if (renames.empty()) return labels;
  for (std::string& label : labels) {
    std::string out;
    for (size_t i = 0; i < label.size();) {
      bool renamed = false;
      if (i == 0 || !identifier_char(label[i - 1]))
        for (const auto& [name, shown] : renames) {
          const size_t end = i + name->size();
          if (label.compare(i, name->size(), *name) == 0 && (end == label.size() || !identifier_char(label[end]))) {
            out += *shown;
            i = end;
            renamed = true;
            break;
          }
        }
      if (!renamed) out += label[i++];
    }
    label = std::move(out);
  }
  return labels;
}

std::vector<bool> bookkeeping_dimensions(const ModelPlacement& placement, int n_embd) {
  if (placement.sops.empty()) return {};
  std::vector<bool> bookkeeping(size_t(n_embd), true);
  for (const SopPlacement& sop : placement.sops)
    for (int d : sop.dims) bookkeeping[size_t(d)] = false;
  return bookkeeping;
}

ModelPlacement read_placement(const Model& model) {
  ModelPlacement placement;
  const nlohmann::json& meta = model.metadata;
  if (!meta.is_object() || !meta.contains("sops")) return placement;
  if (!meta["sops"].is_array()) bad_placement("\"sops\" is not a list");
  const int last_stage = 2 * model.config.n_layer;
  for (const nlohmann::json& j : meta["sops"]) {
    if (!j.is_object()) bad_placement("lists " + j.dump() + " among its s-ops, not an object");
    SopPlacement sop;
    sop.name = text_field(j, "name");
    sop.kind = text_field(j, "kind");
    sop.shown = text_field(j, "shown");
    if (sop.shown.empty()) sop.shown = sop.name;
    sop.numerical = text_field(j, "encoding") == "numerical";
    if (!j.contains("dims") || !j["dims"].is_array() || j["dims"].empty())
      bad_placement("gives s-op \"" + sop.name + "\" no list of dimensions");
    for (const nlohmann::json& d : j["dims"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() >= model.config.n_embd)
        bad_placement("gives s-op \"" + sop.name + "\" dimension " + d.dump() + ", outside 0.." +
                      std::to_string(model.config.n_embd - 1));
      sop.dims.push_back(d.get<int>());
    }
    sop.values = text_list(j, "values");
    for (auto [key, field] : {std::pair{"scale", &sop.scale}, std::pair{"offset", &sop.offset}})
      if (j.contains(key)) {
        if (!j[key].is_number() || !std::isfinite(j[key].get<double>()))
          bad_placement("gives s-op \"" + sop.name + "\" a " + key + " that is not a finite number: " + j[key].dump());
        *field = j[key].get<double>();
      }
    sop.reciprocal = j.contains("reciprocal") && j["reciprocal"].is_boolean() && j["reciprocal"].get<bool>();
    if (j.contains("logits") && j["logits"].is_boolean() && j["logits"].get<bool>()) {
      const nlohmann::json& output = meta.contains("output") ? meta["output"] : nlohmann::json();
      if (sop.values.empty() || !output.is_object() || !output.contains("token_ids") || !output["token_ids"].is_array() ||
          output["token_ids"].size() != sop.values.size())
        bad_placement("reads s-op \"" + sop.name + "\" from the logits, but \"output\" has no \"token_ids\" for its " +
                      std::to_string(sop.values.size()) + " values");
      for (const nlohmann::json& t : output["token_ids"]) {
        if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= model.config.vocab_size)
          bad_placement("gives s-op \"" + sop.name + "\" output token " + t.dump() + ", outside 0.." +
                        std::to_string(model.config.vocab_size - 1));
        sop.logit_tokens.push_back(t.get<int>());
      }
    }
    if (j.contains("value_count") && j["value_count"].is_number_unsigned())
      sop.value_count = j["value_count"].get<size_t>();
    sop.stage = int_field(j, "stage", 0, last_stage);
    sop.reads = text_list(j, "reads");
    sop.output = j.contains("output") && j["output"].is_boolean() && j["output"].get<bool>();
    if (j.contains("source")) sop.source = location_of(j["source"]);
    placement.sops.push_back(std::move(sop));
  }
  if (meta.contains("heads") && meta["heads"].is_array()) {
    for (const nlohmann::json& layer : meta["heads"]) {
      std::vector<HeadPlacement> heads;
      if (layer.is_array())
        for (const nlohmann::json& j : layer) {
          HeadPlacement head{text_field(j, "sop"), text_field(j, "kind"), text_field(j, "shown"),
                             text_field(j, "construction"), j.contains("selector") ? location_of(j["selector"]) : SourceLocation{},
                             j.contains("source") ? location_of(j["source"]) : SourceLocation{}};
          if (head.shown.empty()) head.shown = head.sop;
          heads.push_back(std::move(head));
        }
      placement.heads.push_back(std::move(heads));
    }
  }
  return placement;
}

bool ResidualTrace::mismatch(size_t sop, int stage, int position) const {
  if (sop >= expected.size() || expected[sop].empty() || position < first) return false;
  if (stage < placement.sops[sop].stage) return false;
  const size_t i = size_t(position - first);
  if (i >= expected[sop].size()) return false;
  const std::string& got = decoded[size_t(stage)][sop][size_t(position)];
  return placement.sops[sop].numerical ? !numbers_match(got, expected[sop][i]) : got != expected[sop][i];
}

bool ResidualTrace::any_mismatch() const {
  for (int s = 0; s < stages; ++s)
    for (size_t k = 0; k < placement.sops.size(); ++k)
      for (int t = first; t < int(tokens.size()); ++t)
        if (mismatch(k, s, t)) return true;
  return false;
}

ResidualTrace decode_residual(const Model& model, const ForwardResult& result, int b,
                              const std::vector<int>& sequence) {
  if (result.residual.empty()) fail_at(Span{}, "decoding the residual stream needs a forward with capture_residual");
  ResidualTrace trace;
  trace.placement = read_placement(model);
  for (int id : sequence) trace.tokens.push_back(model.vocab.at(size_t(id)));
  trace.first = model.bos_id >= 0 ? 1 : 0;
  trace.stages = 2 * model.config.n_layer + 1;
  const int length = int(sequence.size());
  trace.decoded.assign(size_t(trace.stages), {});
  for (int s = 0; s < trace.stages; ++s) {
    auto& stage = trace.decoded[size_t(s)];
    for (const SopPlacement& sop : trace.placement.sops) {
      std::vector<std::string> row(static_cast<size_t>(length));
      if (s >= sop.stage)
        for (int t = 0; t < length; ++t) {
          const float* x = result.residual_at(b, s, t);
          const double read = x[sop.dims[0]];
          row[size_t(t)] = sop.numerical ? format_reading(float(sop.offset + sop.scale * (sop.reciprocal ? 1.0 / read : read)),
                                                          sop.values)
                                         : sop.logit_tokens.empty() ? decode_categorical(sop, x)
                                                                    : decode_by_logits(model, sop, x);
        }
      stage.push_back(std::move(row));
    }
  }
  trace.expected.assign(trace.placement.sops.size(), {});
  return trace;
}

std::string format_trace(const ResidualTrace& trace) {
  std::ostringstream out;
  const int length = int(trace.tokens.size());
  if (trace.placement.sops.empty()) return "";
  for (int s = 0; s < trace.stages; ++s) {
    std::vector<size_t> rows;
    for (size_t k = 0; k < trace.placement.sops.size(); ++k)
      if (trace.placement.sops[k].stage <= s) rows.push_back(k);
    // Cells: the decoded value, and "!=expected" where the interpreter disagrees.
    std::vector<std::vector<std::string>> cells;
    size_t name_width = std::string("position").size();
    std::vector<size_t> widths;
    std::vector<std::string> header;
    for (int t = trace.first; t < length; ++t) {
      header.push_back(std::to_string(t - trace.first));
      widths.push_back(header.back().size());
    }
    for (size_t k : rows) {
      name_width = std::max(name_width, trace.placement.sops[k].shown.size());
      std::vector<std::string> row;
      for (int t = trace.first; t < length; ++t) {
        std::string cell = trace.decoded[size_t(s)][k][size_t(t)];
        if (trace.mismatch(k, s, t)) cell += "!=" + trace.expected[k][size_t(t - trace.first)];
        widths[size_t(t - trace.first)] = std::max(widths[size_t(t - trace.first)], cell.size());
        row.push_back(std::move(cell));
      }
      cells.push_back(std::move(row));
    }
    out << (s ? "\n" : "") << "after " << stage_description(s) << " (" << stage_name(s, (trace.stages - 1) / 2) << "):\n";
    auto line = [&](const std::string& name, const std::vector<std::string>& values) {
      std::string text = pad(name, name_width);
      for (size_t i = 0; i < values.size(); ++i) text += "  " + pad(values[i], widths[i]);
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out << text << "\n";
    };
    line("position", header);
    for (size_t r = 0; r < rows.size(); ++r) line(trace.placement.sops[rows[r]].shown, cells[r]);
  }
  return out.str();
}

}  // namespace raspc
