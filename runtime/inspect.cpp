#include "runtime/inspect.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "runtime/flops.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

namespace {

std::string number(float v) {
  if (v == 0.0f) return "0";  // no "-0"
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

std::vector<std::string> residual_labels(const Model& model) {
  std::vector<std::string> labels = model.residual_labels;
  labels.resize(model.config.n_embd);
  for (int c = 0; c < model.config.n_embd; ++c)
    if (labels[c].empty()) labels[c] = std::string("d").append(std::to_string(c));
  return labels;
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

// The labels of layer l's MLP units: metadata["mlp_units"][l] when the compiler stored them (one
// string per unit), else "u0", "u1", ... . `tensor` is a name "transformer.h.<l>.mlp...".
std::vector<std::string> mlp_unit_labels(const Model& model, const std::string& tensor) {
  const int n_inner = model.config.n_inner;
  std::vector<std::string> labels = numbered("u", n_inner);
  const size_t start = std::string("transformer.h.").size();
  const int layer = std::stoi(tensor.substr(start, tensor.find('.', start) - start));
  const nlohmann::json& units = model.metadata.contains("mlp_units") ? model.metadata["mlp_units"] : nlohmann::json();
  if (units.is_array() && layer < int(units.size()) && units[layer].is_array())
    for (int u = 0; u < n_inner && u < int(units[layer].size()); ++u)
      if (units[layer][u].is_string() && !units[layer][u].get<std::string>().empty())
        labels[u] = units[layer][u].get<std::string>();
  return labels;
}

std::string shape_text(const std::vector<size_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s.append(i ? "," : "").append(std::to_string(shape[i]));
  return s + ")";
}

std::string format_spec(const Model& model, const ParameterSpec& spec) {
  const ModelConfig& cfg = model.config;
  const float* p = model.storage.data() + spec.offset;
  const std::vector<std::string> residual = residual_labels(model);
  const std::string& n = spec.name;
  const std::string title = n + " " + shape_text(spec.shape);
  auto ends_with = [&](const std::string& suffix) {
    return n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const std::vector<std::string> bias_row = {"bias"};
  if (n == "transformer.wte.weight") {
    std::vector<std::string> tokens = model.vocab;
    if (model.bos_id >= 0) tokens[model.bos_id] += " (BOS)";
    return format_matrix(title + "  rows: tokens, columns: residual", tokens, residual, p, cfg.n_embd);
  }
  if (n == "transformer.wpe.weight")
    return format_matrix(title + "  rows: positions, columns: residual", numbered("pos ", cfg.n_positions), residual,
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
      out += weight ? format_matrix(part_title, residual, head_labels(cfg), p + part * cfg.n_embd, 3 * cfg.n_embd)
                    : format_matrix(part_title, bias_row, head_labels(cfg), p + part * cfg.n_embd, 0);
    }
    return out;
  }
  if (ends_with("attn.c_proj.weight"))
    return format_matrix(title + "  rows: head dimensions, columns: residual", head_labels(cfg), residual, p,
                         cfg.n_embd);
  if (ends_with("mlp.c_fc.weight"))
    return format_matrix(title + "  rows: residual, columns: MLP units", residual, mlp_unit_labels(model, n), p,
                         cfg.n_inner);
  if (ends_with("mlp.c_fc.bias")) return format_matrix(title, bias_row, mlp_unit_labels(model, n), p, 0);
  if (ends_with("mlp.c_proj.weight"))
    return format_matrix(title + "  rows: MLP units, columns: residual", mlp_unit_labels(model, n), residual, p,
                         cfg.n_embd);
  // Biases and LayerNorm gains and biases over the residual stream.
  return format_matrix(title, {ends_with("weight") ? "gain" : "bias"}, residual, p, 0);
}

}  // namespace

std::string format_matrix(const std::string& title, const std::vector<std::string>& row_labels,
                          const std::vector<std::string>& column_labels, const float* values, size_t row_stride) {
  const size_t rows = row_labels.size(), columns = column_labels.size();
  std::vector<std::vector<std::string>> cells(rows, std::vector<std::string>(columns));
  size_t label_width = 0;
  for (const std::string& label : row_labels) label_width = std::max(label_width, label.size());
  std::vector<size_t> widths(columns);
  for (size_t j = 0; j < columns; ++j) widths[j] = column_labels[j].size();
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < columns; ++j) {
      cells[i][j] = number(values[i * row_stride + j]);
      widths[j] = std::max(widths[j], cells[i][j].size());
    }
  std::ostringstream out;
  out << title << "\n";
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
  std::vector<std::string> labels = residual_labels(model);
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

std::string format_tensor(const Model& model, const std::string& name) {
  std::string names;
  for (const ParameterSpec& spec : parameter_specs(model.config)) {
    if (spec.name == name) return format_spec(model, spec);
    names += (names.empty() ? "" : ", ") + spec.name;
  }
  auto arg = std::make_shared<SourceFile>(SourceFile{"--tensor", name});
  fail_at(Span{arg, 0, uint32_t(std::max<size_t>(name.size(), 1))},
          "the model has no tensor \"" + name + "\"; its tensors are " + names);
}

std::string format_all_tensors(const Model& model) {
  std::string out;
  for (const ParameterSpec& spec : parameter_specs(model.config)) out.append("\n").append(format_spec(model, spec));
  return out;
}

}  // namespace raspc
