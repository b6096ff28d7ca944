// Printing a model the way the (aab)* post prints it: the config, then every matrix with its rows
// and columns labelled (residual labels from the file, token strings for wte rows, positions for
// wpe rows, head dimensions for q/k/v, MLP unit labels from metadata["mlp_units"] when the
// compiler stored them), every value shown, columns aligned.
#pragma once

#include <string>
#include <vector>

#include "runtime/model.hpp"

namespace raspc {

// Config, parameter count, FLOPs per token, vocabulary, residual labels and metadata.
std::string describe_model(const Model& model);

// What `raspc inspect` shows by default, as JSON (`inspect --json`; the README's "Seeing inside a
// model" gives the schema): config, size, vocabulary, residual labels, and per layer its heads
// (the s-op and selector each computes, from the compiler's metadata) and MLP units, with the
// rows and columns of W_QK, W_OV, W_in and W_out that are not all zero.
nlohmann::json model_summary(const Model& model);
// The same as text that fits a screen: long label lists are cut ("... 12 more").
std::string format_model_summary(const nlohmann::json& summary);

// One tensor by its Hugging Face name (c_attn weights and biases print as their q, k and v parts).
// An unknown name is a UserError listing the model's tensors.
std::string format_tensor(const Model& model, const std::string& name);

// Every tensor, in storage order.
std::string format_all_tensors(const Model& model);

// With dense false, format_tensor and format_all_tensors leave out a matrix's all-zero rows and
// columns (inspect's default; --dense keeps them).
std::string format_tensor(const Model& model, const std::string& name, bool dense);
std::string format_all_tensors(const Model& model, bool dense);

// The labels of layer l's MLP units: metadata["mlp_units"][l] when the compiler stored them (one
// string per unit), else "u0", "u1", ... .
std::vector<std::string> mlp_unit_labels(const Model& model, int layer);

// A matrix in the residual stream's terms, row-major, with labelled rows and columns.
struct LabelledMatrix {
  std::string title;
  std::vector<std::string> rows, columns;
  std::vector<double> values;  // rows.size() x columns.size()
  double at(size_t r, size_t c) const { return values[r * columns.size() + c]; }
};
// Head h of layer l: W_QK = W_Q W_K^T / sqrt(d_head), the score of a (query, key) pair of ln_1
// outputs (rows: query dimensions, columns: key dimensions), and W_OV = W_V W_O, what the head
// writes to each residual dimension per unit of each dimension it reads (rows: read, columns:
// written). Biases are left out.
LabelledMatrix head_qk_matrix(const Model& model, int layer, int head);
LabelledMatrix head_ov_matrix(const Model& model, int layer, int head);
// Layer l's MLP: W_in (rows: residual, columns: units) and W_out (rows: units, columns: residual).
LabelledMatrix mlp_in_matrix(const Model& model, int layer);
LabelledMatrix mlp_out_matrix(const Model& model, int layer);
// The matrix without its all-zero rows and columns.
LabelledMatrix without_zero_lines(const LabelledMatrix& matrix);
// The matrix with its rows' and columns' labels as the user wrote them (shown_labels,
// runtime/residual_trace.hpp): what `inspect` and `view` print.
struct ModelPlacement;
LabelledMatrix with_shown_labels(LabelledMatrix matrix, const ModelPlacement& placement);

// A labelled matrix: `rows` x `columns` values, row-major with `row_stride` floats between rows.
std::string format_matrix(const std::string& title, const std::vector<std::string>& row_labels,
                          const std::vector<std::string>& column_labels, const float* values, size_t row_stride,
                          bool dense = true);

}  // namespace raspc
