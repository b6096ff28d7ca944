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

// One tensor by its Hugging Face name (c_attn weights and biases print as their q, k and v parts).
// An unknown name is a UserError listing the model's tensors.
std::string format_tensor(const Model& model, const std::string& name);

// Every tensor, in storage order.
std::string format_all_tensors(const Model& model);

// A labelled matrix: `rows` x `columns` values, row-major with `row_stride` floats between rows.
std::string format_matrix(const std::string& title, const std::vector<std::string>& row_labels,
                          const std::vector<std::string>& column_labels, const float* values, size_t row_stride);

}  // namespace raspc
