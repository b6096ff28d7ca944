#include "runtime/inspect.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "runtime/flops.hpp"
#include "runtime/model_report.hpp"
#include "runtime/safetensors.hpp"
#include "runtime/residual_trace.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

namespace {

std::string number(float v) {
  if (v == 0.0f) return "0";  // no "-0"
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

// "h0.0".."h0.<d_head-1>", "h1.0"... (one head: just the index).
std::vector<std::string> head_labels(const ModelConfig& config) {
  std::vector<std::string> labels;
  for (int h = 0; h < config.n_head; ++h)
    for (int d = 0; d < config.d_head(); ++d)
      labels.push_back(config.n_head == 1
                           ? std::to_string(d)
                           : std::string("h").append(std::to_string(h)).append(".").append(std::to_string(d)));
  return labels;
}

std::vector<std::string> numbered(const std::string& prefix, int n) {
  std::vector<std::string> labels;
  for (int i = 0; i < n; ++i) labels.push_back(std::string(prefix).append(std::to_string(i)));
  return labels;
}

}  // namespace

std::vector<std::string> mlp_unit_labels(const Model& model, int layer) {
  const int n_inner = model.config.n_inner;
  std::vector<std::string> labels = numbered("u", n_inner);
  const nlohmann::json& units = model.metadata.contains("mlp_units") ? model.metadata["mlp_units"] : nlohmann::json();
  if (units.is_array() && layer < int(units.size()) && units[layer].is_array())
    for (int u = 0; u < n_inner && u < int(units[layer].size()); ++u)
      if (units[layer][u].is_string() && !units[layer][u].get<std::string>().empty())
        labels[u] = units[layer][u].get<std::string>();
  return labels;
}

namespace {

// Where the model says where its s-ops live (a compiled model), the labels as the user wrote them:
// `frequency` for the model's `frequency#4`, an unnamed s-op's expression for `aggregate#7`
// (shown_labels, as `run --trace` and `view` show them); else, and where that metadata does not
// read, as stored.
ModelPlacement placement_of(const Model& model) {
  try {
    return read_placement(model);
  } catch (const std::exception&) {
    return {};
  }
}

// The layer of a tensor named "transformer.h.<l>....".
int layer_of(const std::string& tensor) {
  const size_t start = std::string("transformer.h.").size();
  return std::stoi(tensor.substr(start, tensor.find('.', start) - start));
}

std::string shape_text(const std::vector<size_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s.append(i ? "," : "").append(std::to_string(shape[i]));
  return s + ")";
}

std::string format_spec(const Model& model, const ParameterSpec& spec, bool dense, const ModelPlacement& placement) {
  auto matrix = [dense](const std::string& title, const std::vector<std::string>& rows,
                        const std::vector<std::string>& columns, const float* values, size_t stride) {
    return format_matrix(title, rows, columns, values, stride, dense);
  };
  const ModelConfig& cfg = model.config;
  const float* p = model.storage.data() + spec.offset;
  const std::vector<std::string> residual = shown_labels(numbered_residual_labels(model), placement);
  const std::vector<std::string> units =
      spec.name.rfind("transformer.h.", 0) == 0 ? shown_labels(mlp_unit_labels(model, layer_of(spec.name)), placement)
                                                : std::vector<std::string>{};
  const std::string& n = spec.name;
  const std::string title = n + " " + shape_text(spec.shape);
  auto ends_with = [&](const std::string& suffix) {
    return n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const std::vector<std::string> bias_row = {"bias"};
  if (n == "transformer.wte.weight") {
    std::vector<std::string> tokens = model.vocab;
    if (model.bos_id >= 0) tokens[model.bos_id] += " (BOS)";
    return matrix(title + "  rows: tokens, columns: residual", tokens, residual, p, cfg.n_embd);
  }
  if (n == "transformer.wpe.weight")
    return matrix(title + "  rows: positions, columns: residual", numbered("pos ", cfg.n_positions), residual,
                         p, cfg.n_embd);
  if (ends_with("attn.c_attn.weight") || ends_with("attn.c_attn.bias")) {
    // The three parts print apart, as the post shows Q, K and V.
    bool weight = ends_with("weight");
    std::string out;
    const char* parts[] = {"q", "k", "v"};
    for (int part = 0; part < 3; ++part) {
      const std::string C = std::to_string(cfg.n_embd);
      std::string part_title = n;
      part_title.append(" [").append(parts[part]).append("] (").append(C);
      part_title.append(weight ? "," + C + ")  rows: residual, columns: head dimensions" : std::string(")"));
      if (part) out += "\n";
      out += weight ? matrix(part_title, residual, head_labels(cfg), p + part * cfg.n_embd, 3 * cfg.n_embd)
                    : matrix(part_title, bias_row, head_labels(cfg), p + part * cfg.n_embd, 0);
    }
    return out;
  }
  if (ends_with("attn.c_proj.weight"))
    return matrix(title + "  rows: head dimensions, columns: residual", head_labels(cfg), residual, p,
                         cfg.n_embd);
  if (ends_with("mlp.c_fc.weight"))
    return matrix(title + "  rows: residual, columns: MLP units", residual, units, p,
                         cfg.n_inner);
  if (ends_with("mlp.c_fc.bias")) return matrix(title, bias_row, units, p, 0);
  if (ends_with("mlp.c_proj.weight"))
    return matrix(title + "  rows: MLP units, columns: residual", units, residual, p,
                         cfg.n_embd);
  // Biases and LayerNorm gains and biases over the residual stream.
  return matrix(title, std::vector<std::string>{ends_with("weight") ? "gain" : "bias"}, residual, p, 0);
}

}  // namespace

LabelledMatrix head_qk_matrix(const Model& model, int layer, int head) {
  const ModelConfig& c = model.config;
  const int C = c.n_embd, d = c.d_head();
  const float* w = model.w.layers.at(size_t(layer)).attn_w;
  LabelledMatrix m{"layer " + std::to_string(layer) + " head " + std::to_string(head) + " W_QK",
                   numbered_residual_labels(model), numbered_residual_labels(model), {}};
  m.values.assign(size_t(C) * C, 0.0);
  const double scale = 1.0 / std::sqrt(double(d));
  for (int i = 0; i < C; ++i)
    for (int j = 0; j < C; ++j) {
      double sum = 0;
      for (int k = 0; k < d; ++k)
        sum += double(w[size_t(i) * 3 * C + head * d + k]) * w[size_t(j) * 3 * C + C + head * d + k];
      m.values[size_t(i) * C + j] = sum * scale;
    }
  return m;
}

LabelledMatrix head_ov_matrix(const Model& model, int layer, int head) {
  const ModelConfig& c = model.config;
  const int C = c.n_embd, d = c.d_head();
  const LayerWeights& L = model.w.layers.at(size_t(layer));
  LabelledMatrix m{"layer " + std::to_string(layer) + " head " + std::to_string(head) + " W_OV",
                   numbered_residual_labels(model), numbered_residual_labels(model), {}};
  m.values.assign(size_t(C) * C, 0.0);
  for (int i = 0; i < C; ++i)
    for (int j = 0; j < C; ++j) {
      double sum = 0;
      for (int k = 0; k < d; ++k)
        sum += double(L.attn_w[size_t(i) * 3 * C + 2 * C + head * d + k]) * L.attn_proj_w[size_t(head * d + k) * C + j];
      m.values[size_t(i) * C + j] = sum;
    }
  return m;
}

LabelledMatrix mlp_in_matrix(const Model& model, int layer) {
  const int C = model.config.n_embd, I = model.config.n_inner;
  const float* w = model.w.layers.at(size_t(layer)).fc_w;
  LabelledMatrix m{"layer " + std::to_string(layer) + " MLP W_in", numbered_residual_labels(model),
                   mlp_unit_labels(model, layer), {}};
  m.values.assign(w, w + size_t(C) * I);
  return m;
}

LabelledMatrix mlp_out_matrix(const Model& model, int layer) {
  const int C = model.config.n_embd, I = model.config.n_inner;
  const float* w = model.w.layers.at(size_t(layer)).fc_proj_w;
  LabelledMatrix m{"layer " + std::to_string(layer) + " MLP W_out", mlp_unit_labels(model, layer),
                   numbered_residual_labels(model), {}};
  m.values.assign(w, w + size_t(I) * C);
  return m;
}

LabelledMatrix with_shown_labels(LabelledMatrix matrix, const ModelPlacement& placement) {
  matrix.rows = shown_labels(std::move(matrix.rows), placement);
  matrix.columns = shown_labels(std::move(matrix.columns), placement);
  return matrix;
}

LabelledMatrix without_zero_lines(const LabelledMatrix& matrix) {
  std::vector<size_t> rows, columns;
  for (size_t r = 0; r < matrix.rows.size(); ++r)
    for (size_t c = 0; c < matrix.columns.size(); ++c)
      if (matrix.at(r, c) != 0) {
        rows.push_back(r);
        break;
      }
  for (size_t c = 0; c < matrix.columns.size(); ++c)
    for (size_t r = 0; r < matrix.rows.size(); ++r)
      if (matrix.at(r, c) != 0) {
        columns.push_back(c);
        break;
      }
  LabelledMatrix out{matrix.title, {}, {}, {}};
  for (size_t r : rows) out.rows.push_back(matrix.rows[r]);
  for (size_t c : columns) out.columns.push_back(matrix.columns[c]);
  for (size_t r : rows)
    for (size_t c : columns) out.values.push_back(matrix.at(r, c));
  return out;
}

std::string format_matrix(const std::string& title, const std::vector<std::string>& all_row_labels,
                          const std::vector<std::string>& all_column_labels, const float* values, size_t row_stride,
                          bool dense) {
  // The rows and columns shown: all, or (not dense) those with a non-zero entry.
  std::vector<size_t> kept_rows, kept_columns;
  for (size_t i = 0; i < all_row_labels.size(); ++i)
    for (size_t j = 0; j < all_column_labels.size(); ++j)
      if (dense || values[i * row_stride + j] != 0.0f) {
        kept_rows.push_back(i);
        break;
      }
  for (size_t j = 0; j < all_column_labels.size(); ++j)
    for (size_t i = 0; i < all_row_labels.size(); ++i)
      if (dense || values[i * row_stride + j] != 0.0f) {
        kept_columns.push_back(j);
        break;
      }
  std::vector<std::string> row_labels, column_labels;
  for (size_t i : kept_rows) row_labels.push_back(all_row_labels[i]);
  for (size_t j : kept_columns) column_labels.push_back(all_column_labels[j]);
  const size_t rows = row_labels.size(), columns = column_labels.size();
  std::vector<std::vector<std::string>> cells(rows, std::vector<std::string>(columns));
  size_t label_width = 0;
  for (const std::string& label : row_labels) label_width = std::max(label_width, label.size());
  std::vector<size_t> widths(columns);
  for (size_t j = 0; j < columns; ++j) widths[j] = column_labels[j].size();
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < columns; ++j) {
      cells[i][j] = number(values[kept_rows[i] * row_stride + kept_columns[j]]);
      widths[j] = std::max(widths[j], cells[i][j].size());
    }
  std::ostringstream out;
  out << title << "\n";
  if (!dense && (rows < all_row_labels.size() || columns < all_column_labels.size())) {
    if (rows == 0) return out.str() + "(all zero)\n";
    out << "(" << all_row_labels.size() - rows << " all-zero rows and " << all_column_labels.size() - columns
        << " all-zero columns left out)\n";
  }
  auto pad_left = [&](const std::string& s, size_t width) { out << std::string(width - s.size(), ' ') << s; };
  out << std::string(label_width, ' ');
  for (size_t j = 0; j < columns; ++j) {
    out << "  ";
    pad_left(column_labels[j], widths[j]);
  }
  out << "\n";
  for (size_t i = 0; i < rows; ++i) {
    out << row_labels[i] << std::string(label_width - row_labels[i].size(), ' ');
    for (size_t j = 0; j < columns; ++j) {
      out << "  ";
      pad_left(cells[i][j], widths[j]);
    }
    out << "\n";
  }
  return out.str();
}

std::string describe_model(const Model& model) {
  const ModelConfig& c = model.config;
  std::ostringstream out;
  out << "config: n_layer " << c.n_layer << ", n_head " << c.n_head << ", n_embd " << c.n_embd << " (d_head "
      << c.d_head() << "), n_inner " << c.n_inner << (c.n_inner == 0 ? " (no MLP)" : "") << ", n_positions "
      << c.n_positions << ", vocab_size " << c.vocab_size << "\n";
  out << "        " << (c.causal ? "causal" : "bidirectional") << ", LayerNorm " << (c.layer_norm ? "on" : "off")
      << ", activation " << (c.activation == Activation::Gelu ? "gelu (tanh)" : "relu") << "\n";
  out << "parameters: " << parameter_count(c) << "\n";
  char flops[64];
  std::snprintf(flops, sizeof flops, "%.0f", flops_per_token(c, c.n_positions));
  out << "FLOPs per token: " << flops << " (attending to all " << c.n_positions << " positions)\n";
  out << "vocabulary:";
  for (size_t i = 0; i < model.vocab.size(); ++i)
    out << " " << model.vocab[i] << (int(i) == model.bos_id ? " (BOS)" : "");
  out << "\n";
  if (!model.input_ids.empty()) {
    out << "input tokens:";
    for (int id : model.input_ids) out << " " << model.vocab[id];
    out << "\n";
  }
  out << "residual:";
  std::vector<std::string> labels = shown_labels(numbered_residual_labels(model), placement_of(model));
  for (size_t i = 0; i < labels.size(); ++i) out << " " << i << ":" << labels[i];
  out << "\n";
  for (const auto& [key, value] : model.metadata.items()) {
    if (value.is_string()) {
      std::string text = value.get<std::string>();
      if (text.find('\n') != std::string::npos) out << key << ":\n" << text << (text.back() == '\n' ? "" : "\n");
      else out << key << ": " << text << "\n";
    } else {
      out << key << ": " << value.dump() << "\n";
    }
  }
  return out.str();
}

namespace {

nlohmann::json nonzero_pattern(const LabelledMatrix& full) {
  const LabelledMatrix m = without_zero_lines(full);
  return {{"rows", m.rows}, {"columns", m.columns}, {"shape", {full.rows.size(), full.columns.size()}}};
}

// "a b c ... 12 more": as many labels as fit in `room` characters.
std::string label_list(const nlohmann::json& labels, size_t room = 90) {
  std::string out;
  size_t shown = 0;
  for (const nlohmann::json& label : labels) {
    const std::string text = label.get<std::string>();
    if (shown > 0 && out.size() + text.size() + 1 > room) break;
    out += (shown++ ? " " : "") + text;
  }
  if (shown < labels.size()) out += " ... " + std::to_string(labels.size() - shown) + " more";
  return out.empty() ? "none" : out;
}

std::string pattern_line(const char* name, const nlohmann::json& pattern) {
  const size_t rows = pattern["rows"].size(), columns = pattern["columns"].size();
  std::string line = std::string("    ") + name + ": ";
  if (rows == 0) return line + "all zero\n";
  line += std::to_string(rows) + " of " + pattern["shape"][0].dump() + " rows x " + std::to_string(columns) + " of " +
          pattern["shape"][1].dump() + " columns not all zero\n";
  return line + "      rows: " + label_list(pattern["rows"]) + "\n      columns: " + label_list(pattern["columns"]) + "\n";
}

}  // namespace

nlohmann::json model_summary(const Model& model) {
  const ModelConfig& c = model.config;
  nlohmann::json s;
  s["config"] = config_to_json(c);
  s["config"]["d_head"] = c.d_head();
  s["parameters"] = parameter_count(c);
  s["flops_per_token"] = flops_per_token(c, c.n_positions);
  s["vocabulary"] = model.vocab;
  s["bos"] = model.bos_id >= 0 ? nlohmann::json(model.vocab[size_t(model.bos_id)]) : nlohmann::json();
  nlohmann::json inputs = nlohmann::json::array();
  for (int id : model.input_ids) inputs.push_back(model.vocab[size_t(id)]);
  s["input_tokens"] = inputs;
  // Labels as the user wrote them (placement_of above): the text and JSON of `inspect` show them.
  const ModelPlacement placement = placement_of(model);
  auto shown = [&](LabelledMatrix m) { return nonzero_pattern(with_shown_labels(std::move(m), placement)); };
  s["residual_labels"] = shown_labels(numbered_residual_labels(model), placement);
  const nlohmann::json heads = model.metadata.contains("heads") ? model.metadata["heads"] : nlohmann::json::array();
  s["layers"] = nlohmann::json::array();
  for (int l = 0; l < c.n_layer; ++l) {
    nlohmann::json layer = {{"heads", nlohmann::json::array()}};
    for (int h = 0; h < c.n_head; ++h) {
      nlohmann::json head = {{"head", h}, {"sop", nullptr}, {"kind", nullptr}, {"selector", nullptr}, {"at", nullptr}};
      if (heads.is_array() && size_t(l) < heads.size() && heads[size_t(l)].is_array() &&
          size_t(h) < heads[size_t(l)].size() && heads[size_t(l)][size_t(h)].is_object()) {
        const nlohmann::json& placed = heads[size_t(l)][size_t(h)];
        const nlohmann::json selector = placed.value("selector", nlohmann::json());
        // The shown name where the file has one (a string: the file is the user's to edit).
        const bool shown_name = placed.contains("shown") && placed["shown"].is_string() && placed["shown"] != "";
        head["sop"] = shown_name ? placed["shown"] : placed.value("sop", nlohmann::json());
        head["kind"] = placed.value("kind", nlohmann::json());
        if (selector.is_object()) head["selector"] = selector.value("text", nlohmann::json()), head["at"] = selector.value("at", nlohmann::json());
      }
      head["qk"] = shown(head_qk_matrix(model, l, h));
      head["ov"] = shown(head_ov_matrix(model, l, h));
      layer["heads"].push_back(head);
    }
    if (c.n_inner > 0) {
      const nlohmann::json in = shown(mlp_in_matrix(model, l)), out = shown(mlp_out_matrix(model, l));
      layer["mlp"] = {{"units", out["rows"]}, {"in", in}, {"out", out}};
    } else {
      layer["mlp"] = nullptr;
    }
    s["layers"].push_back(layer);
  }
  s["verification"] = model.metadata.contains("compile") ? model.metadata["compile"] : nlohmann::json();
  s["training"] = model.metadata.contains("trainer") ? model.metadata["trainer"] : nlohmann::json();
  return s;
}

std::string format_model_summary(const nlohmann::json& s) {
  std::ostringstream out;
  const nlohmann::json& c = s["config"];
  out << "config: " << describe_config(c) << "\n";
  char flops[64];
  std::snprintf(flops, sizeof flops, "%.0f", s["flops_per_token"].get<double>());
  out << "parameters: " << s["parameters"] << "; FLOPs per token: " << flops << " (at " << c["n_positions"]
      << " positions)\n";
  out << "vocabulary: " << label_list(s["vocabulary"]) << (s["bos"].is_null() ? "" : " (BOS " + s["bos"].get<std::string>() + ")")
      << "\n";
  out << "residual (" << s["residual_labels"].size() << "): " << label_list(s["residual_labels"]) << "\n";
  for (size_t l = 0; l < s["layers"].size(); ++l) {
    const nlohmann::json& layer = s["layers"][l];
    out << "layer " << l << "\n";
    for (const nlohmann::json& head : layer["heads"]) {
      out << "  head " << head["head"] << ": ";
      auto text = [](const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : std::string("?"); };
      if (head["sop"].is_string())
        out << text(head["sop"]) << " = " << text(head["kind"]) << " over " << text(head["selector"])
            << (head["at"].is_string() ? " (" + text(head["at"]) + ")" : "") << "\n";
      else
        out << (s["layers"][0]["heads"][0]["sop"].is_string() ? "unused (padding)" : "no selector recorded") << "\n";
      out << pattern_line("W_QK", head["qk"]) << pattern_line("W_OV", head["ov"]);
    }
    if (!layer["mlp"].is_null()) {
      out << "  MLP: " << layer["mlp"]["units"].size() << " of " << c["n_inner"] << " units used: "
          << label_list(layer["mlp"]["units"], 70) << "\n";
      out << pattern_line("W_in", layer["mlp"]["in"]) << pattern_line("W_out", layer["mlp"]["out"]);
    }
  }
  out << describe_verification(s["verification"]);
  if (s["training"].is_object() && s["training"].contains("result") && s["training"]["result"].is_object()) {
    std::string line = "training:";
    for (const auto& [key, value] : s["training"]["result"].items())
      if (!value.is_array() && !value.is_object()) line += " " + key + " " + value.dump() + ",";
    line.back() = '\n';
    out << line;
  }
  // A model raspc import hf read: where it came from (its training happened elsewhere).
  if (s["training"].is_object() && s["training"].value("source", "") == "huggingface") {
    const nlohmann::json& t = s["training"];
    out << "trained elsewhere: imported from the Hugging Face folder " << t.value("folder", "?");
    if (t.contains("dataset") && t["dataset"].is_object() && t["dataset"].value("program", "") != "")
      out << ", trained on a dataset of " << t["dataset"].value("program", "");
    out << "\n";
  }
  out << "(every matrix: --all, or --tensor NAME; all-zero rows and columns are left out unless --dense)\n";
  return out.str();
}

std::string format_tensor(const Model& model, const std::string& name) { return format_tensor(model, name, true); }

std::string format_tensor(const Model& model, const std::string& name, bool dense) {
  std::string names;
  for (const ParameterSpec& spec : parameter_specs(model.config)) {
    if (spec.name == name) return format_spec(model, spec, dense, placement_of(model));
    names += (names.empty() ? "" : ", ") + spec.name;
  }
  auto arg = std::make_shared<SourceFile>(SourceFile{"--tensor", name});
  fail_at(Span{arg, 0, uint32_t(std::max<size_t>(name.size(), 1))},
          "the model has no tensor \"" + name + "\"; its tensors are " + names);
}

std::string format_all_tensors(const Model& model) { return format_all_tensors(model, true); }

std::string format_all_tensors(const Model& model, bool dense) {
  std::string out;
  const ModelPlacement placement = placement_of(model);  // read once for every tensor
  for (const ParameterSpec& spec : parameter_specs(model.config))
    out.append("\n").append(format_spec(model, spec, dense, placement));
  return out;
}

}  // namespace raspc
