// What a model's residual stream holds, decoded through the labels the compiler stored: the value
// of every s-op at every position after the embedding and after every half-block. `raspc run
// --trace` prints it and `raspc view` draws it; both read it from here.
//
// A compiled model's metadata describes where its s-ops live (compiler/assemble.cpp writes it):
//   "sops":  [{"name": "hist", "kind": "selector_width" | "aggregate" | "map" | "tokens" |
//              "indices" | "scratch", "encoding": "categorical" | "numerical",
//              "dims": [residual dimensions: one per value, or one for a number],
//              "values": [the values as the interpreter displays them, one per dim when
//              categorical], "value_count": N or null, "stage": S (0 embedding, 2l+1 after
//              layer l's attention, 2l+2 after its MLP: the stage that completes it),
//              "reads": [names of the s-ops it is computed from], "output": true for the
//              program's output,
//              "source": {"at": "hist.rasp:5:8", "line": "...", "text": "..."} or null,
//              "scale": a, "offset": b (optional, numerical s-ops: the value is b + a * x at the
//              first dimension; a width held as a number group of six dimensions),
//              "reciprocal": true (optional: the value is b + a / x; a width output held as
//              its 1/(w+1), read by the unembedding),
//              "logits": true (optional, a categorical output the embeddings write through
//              pairs, whose dims are its own, their partners and pad: its value is the one
//              whose token, metadata "output" "token_ids" in the order of "values", has the
//              largest logit)}, ...]
//   "heads": [[{"sop": "hist", "kind": "selector_width", "construction": "selector_width",
//               "selector": {source as above},
//               "source": {...}}, ...], ...]  by layer, then head
// Files without them (trained models, files written before) decode to no s-ops.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/forward.hpp"
#include "runtime/model.hpp"

namespace raspc {

struct SourceLocation {
  std::string at;    // "hist.rasp:5:8"; empty when unknown
  std::string line;  // the whole source line
  std::string text;  // the expression itself
};

struct SopPlacement {
  std::string name, kind;
  // The name the user wrote, or the expression (unique in the model): what traces, pictures and
  // Python show. `name` is the model's identifier (its residual labels' prefix); a model file
  // written before shown names has shown == name.
  std::string shown;
  bool numerical = false;
  std::vector<int> dims;
  double scale = 1, offset = 0;  // a numerical s-op's value: offset + scale * x[dims[0]]
  bool reciprocal = false;        // ... or offset + scale / x[dims[0]]
  // A categorical output the embeddings write through pairs of dimensions (the compiler's tied
  // maps and maps of the token and the position, whose dimensions hold scores): its value is the
  // one whose token (logit_tokens[i] for values[i]) has the largest logit, ln_f(x) . wte^T, as the
  // model's output is read. Empty for a one-hot.
  std::vector<int> logit_tokens;
  std::vector<std::string> values;
  std::optional<size_t> value_count;
  int stage = 0;
  std::vector<std::string> reads;
  bool output = false;
  SourceLocation source;
};

struct HeadPlacement {
  std::string sop, kind;
  std::string shown;  // the s-op's shown name
  // How it computes: "copy", "mean", "selector_width", "width_step", "counting_sort_step",
  // "width_part", "numerical_selector", "length"; empty in files written before.
  std::string construction;
  SourceLocation selector, source;
};

struct ModelPlacement {
  std::vector<SopPlacement> sops;
  std::vector<std::vector<HeadPlacement>> heads;  // by layer; empty when the file has none
};

// By residual dimension (n_embd of them): whether it holds no s-op's value, the bookkeeping a
// GPT-2 needs (`one`, `bos`, `pad`, `zero`, `anchor`, position numbers, unused); empty where the
// placement is (a trained model: every dimension is its own).
std::vector<bool> bookkeeping_dimensions(const ModelPlacement& placement, int n_embd);

// The placement in the model's metadata; empty when it has none. Metadata that is malformed (a
// dimension outside n_embd, a stage past the last) is a UserError naming what is wrong.
ModelPlacement read_placement(const Model& model);

// Residual stage s by its TransformerLens hook (0-based, the names TransformerLens users hook):
// "blocks.0.hook_resid_pre" (the embedding), "blocks.0.hook_resid_mid" (after block 0's
// attention), "blocks.0.hook_resid_post" (after its MLP), "blocks.1.hook_resid_mid", ... A model
// of no blocks has only the embedding, which TransformerLens hooks as its two terms:
// "hook_embed + hook_pos_embed".
std::string stage_name(int stage, int n_layer);
// The half-block that completes it, by TransformerLens's module names: "the embedding",
// "blocks.0.attn", "blocks.0.mlp", "blocks.1.attn", ...
std::string stage_description(int stage);
// Every stage's name, in order, for a model of n_layer blocks (2 n_layer + 1 of them).
std::vector<std::string> stage_names(int n_layer);

// Residual labels with the unlabelled dimensions numbered ("d7"), as inspect prints them.
std::vector<std::string> numbered_residual_labels(const Model& model);

// Labels of the model (residual dimensions "key#11:-8", MLP units "aggregate#7=0,frequency#4<7+")
// with each s-op identifier whose shown name differs replaced by it ("key:-8"; a counting sort's
// "sorted_below_1" by "sort(tokens, tokens), step 1 of 3"), as pictures show them. A model without
// shown names keeps its labels.
std::vector<std::string> shown_labels(std::vector<std::string> labels, const ModelPlacement& placement);

struct ResidualTrace {
  ModelPlacement placement;
  std::vector<std::string> tokens;  // the input as tokens, BOS first when the model has one
  int first = 0;                    // the first real position (1 after BOS)
  int stages = 0;                   // 2 * n_layer + 1
  // decoded[stage][sop][position] over every position (BOS included): the value the residual
  // holds, "" before the s-op's stage, "?" where its one-hot has no clear winner.
  std::vector<std::vector<std::vector<std::string>>> decoded;
  // expected[sop]: the interpreter's values at the real positions, empty where not known (an
  // s-op the program does not name, or no interpreter at hand); view fills it.
  std::vector<std::vector<std::string>> expected;
  // True where decoded at the s-op's own stage (and after) differs from expected.
  bool mismatch(size_t sop, int stage, int position) const;
  bool any_mismatch() const;
};

// Decodes sequence b of `result`, a forward over `sequence` (token ids, BOS included) with
// capture_residual.
ResidualTrace decode_residual(const Model& model, const ForwardResult& result, int b,
                              const std::vector<int>& sequence);

// The trace as text: one table per stage, the s-ops completed by then as rows and the real
// positions as columns; a value that differs from the interpreter's is marked "!=" with the
// expected value beside it.
std::string format_trace(const ResidualTrace& trace);

}  // namespace raspc
