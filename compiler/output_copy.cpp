// A rewrite, last before the final inference: an output that is not computed by a head or an MLP
// (tokens, indices, a constant) gets an identity lookup table, so that it has output dimensions of
// its own for the tied unembedding (written by an MLP, or for indices and a constant by the position
// embedding: constructions/embedded_map.cpp).
#include "compiler/ir.hpp"

namespace raspc::compiler {

bool copy_output(Program& program, const Inference& inference) {
  const Node& source = program.node(program.output);
  if (source.kind == NodeKind::Elementwise || source.kind == NodeKind::Aggregate || counts_keys(source)) return false;
  Node copy;
  copy.kind = NodeKind::Elementwise;
  copy.op = ElementOp::LookupTable;
  copy.span = source.span;
  copy.name = source.name.empty() ? "output" : source.name;
  copy.inputs = {program.output};
  copy.table_keys = inference.info[size_t(program.output)].values;
  copy.table_values = copy.table_keys;
  program.output = push_node(program, std::move(copy));
  return true;
}

}  // namespace raspc::compiler
