// The circuit of a compiled model: its computational graph as circuit-discovery methods (activation
// patching, ACDC, edge attribution patching) see a transformer, with TransformerLens's names, so
// what such a method finds can be scored against it (circuit/score.hpp).
//
// Nodes: the token and position embeddings, every attention head, every MLP, and the unembedding.
// Edges: a node reads, on a head's query, key or value side or an MLP's input, residual dimensions
// an earlier node writes. Both are read off the weights themselves (a weight that is exactly zero
// carries nothing), and the model's placement metadata names the dimensions: the s-op, or the
// bookkeeping dimension (`one`, `bos`, ...), each edge carries. So the graph is what the network
// computes, not what the compiler meant it to: a padding head, whose weights are all zero, has no
// edge and is not in the circuit.
//
// LayerNorm, which couples every dimension to every other through a row's mean and variance, is
// left out (the compiler holds its scale fixed while values are live). The tied unembedding reads
// the output s-op's dimensions; where a token is both an input and an output (reverse, sort), its
// one row of wte is both its embedding and its unembedding, so the embedding also writes the
// output's dimension of that token: an edge embed -> unembed, as a discovery method would find it
// (the compiler's margins hold the output against it).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/model.hpp"
#include "runtime/residual_trace.hpp"

namespace raspc {

struct CircuitNode {
  // "embed", "pos_embed", "a0.1" (layer 0, head 1), "m0" (layer 0's MLP), "unembed".
  std::string id;
  std::string kind;  // "embed" | "pos_embed" | "head" | "mlp" | "unembed"
  int layer = -1, head = -1;
  // TransformerLens: "hook_embed", "hook_pos_embed", "blocks.0.attn.hook_z" (index `head`),
  // "blocks.0.hook_mlp_out", "ln_final.hook_normalized" (the unembedding's input).
  std::string hook;
  std::vector<int> dims;             // the residual dimensions it writes (the unembedding: reads)
  std::vector<std::string> writes;   // what they hold: s-ops by their shown names, bookkeeping by label
  std::string construction;          // a head's ("copy", "mean", "selector_width", ...)
  SourceLocation source, selector;   // a head's s-op and selector; an MLP's first s-op
  int units_used = 0;                // an MLP's units with weights in and out
  bool in_circuit = false;           // on a path to the unembedding
  std::string why_not;               // when not in the circuit, one sentence
};

struct CircuitEdge {
  std::string from, to;  // node ids
  // "q", "k", "v" (a head's query, key, value side), "mlp_in", "unembed".
  std::string via;
  // The receiving hook: "blocks.1.hook_q_input" (index to_head), "blocks.1.hook_mlp_in",
  // "blocks.<L-1>.hook_resid_post" for the unembedding (ACDC's names).
  std::string to_hook;
  int to_head = -1;
  std::vector<int> dims;            // the dimensions read that `from` writes
  std::vector<std::string> sops;    // what they hold, as CircuitNode::writes
  bool in_circuit = false;
};

// Where a node sits in the forward: a node feeds only nodes at a later place. The embeddings 0,
// layer l's heads 2l+1, its MLP 2l+2, the unembedding after every layer.
int forward_place(const CircuitNode& node);

struct Circuit {
  std::vector<CircuitNode> nodes;  // embed, pos_embed, then by layer heads then MLP, unembed
  std::vector<CircuitEdge> edges;  // by receiving node, then side, then sending node
  const CircuitNode* node(const std::string& id) const;
};

// The circuit of a model. A model without placement metadata (a trained one) is a UserError: its
// dimensions name nothing a circuit could be checked against.
Circuit model_circuit(const Model& model);

// "a, b, c": names in a sentence.
std::string join_names(const std::vector<std::string>& names);

// The JSON of docs/json.md ("raspc circuit --json", Model.circuit()).
nlohmann::json circuit_json(const Circuit& circuit);
// The text `raspc circuit` prints: the nodes in the circuit with what they write, the edges into
// each, then the nodes left out and why.
std::string format_circuit(const Circuit& circuit);

}  // namespace raspc
