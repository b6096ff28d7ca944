// `raspc view`: one self-contained HTML page (inline SVG, a few lines of JavaScript, nothing
// fetched) showing what a model computes on one input:
//   - a summary: config, parameters, FLOPs per token, the compiler's verification report;
//   - the program's s-ops as a graph, one column per stage (embedding, then each block's attention
//     and MLP), each with its encoding, value count, source line and writer (on hover and click),
//     an arrow where the node computing one reads another in the weights (the circuit of
//     circuit/circuit.hpp, what `raspc circuit` prints);
//   - the residual stream after the embedding and after every half-block as a heatmap (positions x
//     labelled dimensions), beside the decoded value of every s-op at every position, checked
//     against the interpreter (a mismatch in red);
//   - every head's attention pattern (query x key, BOS included), titled with its selector;
//   - every head's W_QK and W_OV and every MLP's W_in and W_out without their all-zero rows and
//     columns, with exact numbers on hover.
//   - the model's outputs on the input beside the interpreter's;
//   - a contents list, an anchor per section (#model, #outputs, #graph, #probes, #residual,
//     #attention, #weights) and per stage and block (#blocks.0.hook_resid_mid, #blocks.0.attn);
//     a toggle that shows the bookkeeping dimensions (hidden by default); a colour legend; padding
//     heads folded; what each head's construction is, in a line.
// Numbering is TransformerLens's throughout: blocks.L.attn head H, blocks.L.mlp, 0-based.
// A trained model has no s-ops: its page has the summary, its outputs against its program's, the
// linear probes of the program's s-ops on its residual, the heatmaps over numbered dimensions, the
// attention patterns and the matrices.
//
// Elements a test (tests/view) finds by class: svg.residual-map (data-stage), svg.attention-map
// (data-layer, data-head), svg.weight-map, table.decoded (data-stage) whose rows tr[data-sop]
// (data-output="true" for the program's output) hold td[data-position] cells, td.mismatch, and
// g.sop-node and path.sop-edge in the graph; the column labels of a map are text.column-label.
#pragma once

#include <string>
#include <vector>

#include "runtime/forward.hpp"
#include "runtime/model.hpp"
#include "runtime/model_output.hpp"
#include "runtime/residual_trace.hpp"
#include "view/probe.hpp"

namespace raspc {

// What a page shows beside the forward: the outputs the model gives on the input, the
// interpreter's (empty when the model keeps no program), and for a model without placement (a
// trained one) the linear probes of its program's s-ops (empty: no section).
struct ViewExtras {
  PositionOutputs outputs;
  std::vector<std::string> expected_outputs;
  std::vector<SopProbe> probes;
};

// The page's "Model" table: the title, config, parameters, FLOPs per token, the verification
// report or the training result, and the program source folded (Python's Model shows it in Jupyter).
std::string summary_html(const Model& model, const std::string& title);

// How a head's construction (HeadPlacement::construction) computes, where its pattern does not
// show it plainly, in one sentence ending with the part of docs/ that explains it; "" when unknown.
std::string construction_sentence(const std::string& construction);

// `result` is a forward of one sequence with capture_residual and capture_attention; `trace` its
// decoding (expected values filled where known). `title` names the model (its file).
std::string render_view_html(const Model& model, const ForwardResult& result, const ResidualTrace& trace,
                             const std::string& title, const ViewExtras& extras);

// The whole page for one input (token ids, BOS included), as `raspc view` and Python's Model.view
// make it: a forward on `backend` capturing the residual and the attention, its decoding, checked
// against the model's program by the interpreter. `differs` (if given) is set where a decoded
// s-op differs from the interpreter's value. Placement metadata that is malformed is a UserError
// naming no file; an input the program is undefined on is the interpreter's UndefinedOnInput.
std::string view_page(const Model& model, Backend& backend, const std::vector<int>& sequence, const std::string& title,
                      bool* differs = nullptr);

}  // namespace raspc
