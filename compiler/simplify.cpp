// The simplify pass: merge equal nodes (common subexpressions, which the library's macros create
// in numbers), fold maps of constants, drop what the output does not need. (The fusion of
// elementwise chains that the later passes read through is fused_maps.cpp.)
#include <algorithm>
#include <unordered_map>

#include "compiler/ir.hpp"

namespace raspc::compiler {

std::string value_key(const Value& v) {
  switch (v.kind) {
    case ValueKind::Number: return "n" + v.number.to_string();
    case ValueKind::Bool: return v.boolean ? "T" : "F";
    case ValueKind::String: return "s" + std::to_string(v.string().size()) + ":" + v.string();
  }
  return "?";
}

Program rewrite_nodes(const Program& program, const ReplaceNode& replace) {
  Program out;
  out.nodes.reserve(program.nodes.size() + 16);
  std::vector<NodeId> remap(program.nodes.size(), -1);
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    Node node = program.node(id);
    for (NodeId& in : node.inputs) in = remap[size_t(in)];
    const NodeId replaced = replace(id, node, remap, out);
    remap[size_t(id)] = replaced >= 0 ? replaced : push_node(out, std::move(node));
  }
  out.output = remap[size_t(program.output)];
  for (const auto& [name, id] : program.named) out.named.emplace_back(name, remap[size_t(id)]);
  return out;
}

namespace {

// Two nodes with the same key compute the same thing.
std::string node_key(const Node& node, const std::vector<NodeId>& inputs) {
  std::string key = std::to_string(int(node.kind)) + "|" + std::to_string(int(node.annotation)) + "|";
  for (NodeId in : inputs) key += std::to_string(in) + ",";
  switch (node.kind) {
    case NodeKind::Constant: key += value_key(node.constant); break;
    case NodeKind::Elementwise:
      key += std::to_string(int(node.op)) + "|";
      for (const Value& v : node.table_keys) key += value_key(v) + ";";
      key += "|";
      for (const Value& v : node.table_values) key += value_key(v) + ";";
      break;
    case NodeKind::Aggregate: key += value_key(node.default_value); break;
    case NodeKind::Select: key += std::to_string(int(node.comparison)); break;
    // A width step and the width it compares read the same selector: their kinds tell them apart.
    case NodeKind::Construction: key += std::string(node.construction->kind_name()) + "|" + node.construction->key(); break;
    default: break;
  }
  return key;
}

}  // namespace

bool simplify(Program& program) {
  std::vector<uint8_t> needed(program.nodes.size(), 0);
  std::vector<NodeId> stack{program.output};
  while (!stack.empty()) {
    NodeId id = stack.back();
    stack.pop_back();
    if (needed[size_t(id)]) continue;
    needed[size_t(id)] = 1;
    for (NodeId in : program.node(id).inputs) stack.push_back(in);
  }

  Program out;
  std::vector<NodeId> remap(program.nodes.size(), -1);
  std::unordered_map<std::string, NodeId> seen;
  bool folded = false;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    if (!needed[size_t(id)]) continue;
    Node node = program.node(id);
    for (NodeId& in : node.inputs) in = remap[size_t(in)];
    // Fold a map of constants into a constant (errors stay where they are: the map is kept).
    if (node.kind == NodeKind::Elementwise) {
      bool constant_inputs = true;
      std::vector<Value> args;
      for (NodeId in : node.inputs) {
        if (out.node(in).kind != NodeKind::Constant) constant_inputs = false;
        else args.push_back(out.node(in).constant);
      }
      if (constant_inputs) {
        try {
          Value value = apply_elementwise(node, args.data());
          node.kind = NodeKind::Constant;
          node.constant = value;
          node.inputs.clear();
          folded = true;
        } catch (const UserError&) {
        }
      }
    }
    std::string key = node_key(node, node.inputs);
    auto it = seen.find(key);
    if (it != seen.end()) {
      remap[size_t(id)] = it->second;
      Node& kept = out.nodes[size_t(it->second)];
      if (kept.name.empty()) kept.name = node.name;
      continue;
    }
    NodeId new_id = NodeId(out.nodes.size());
    out.nodes.push_back(std::move(node));
    seen.emplace(std::move(key), new_id);
    remap[size_t(id)] = new_id;
  }
  out.output = remap[size_t(program.output)];
  for (const auto& [name, id] : program.named)
    if (needed[size_t(id)]) out.named.emplace_back(name, remap[size_t(id)]);
  // Nothing folded and no node dropped or merged: the copy is the program.
  if (!folded && out.nodes.size() == program.nodes.size()) return false;
  program = std::move(out);
  return true;
}

}  // namespace raspc::compiler
