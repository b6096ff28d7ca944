// Pass 2, simplify: merge equal nodes (common subexpressions, which the library's macros create
// in numbers), fold maps of constants, drop what the output does not need; and the fusion of
// elementwise chains: an elementwise node is computed from its support (the nearest
// non-elementwise s-ops) by one lookup table, however long the chain of maps in between.
#include <algorithm>
#include <unordered_map>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

std::string value_key(const Value& v) {
  switch (v.kind) {
    case ValueKind::Number: return "n" + std::to_string(v.number.num) + "/" + std::to_string(v.number.den);
    case ValueKind::Bool: return v.boolean ? "T" : "F";
    case ValueKind::String: return "s" + std::to_string(v.string().size()) + ":" + v.string();
  }
  return "?";
}

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
    default: break;
  }
  return key;
}

}  // namespace

Program simplify(const Program& program) {
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
          Value folded = apply_elementwise(node, args.data());
          node.kind = NodeKind::Constant;
          node.constant = folded;
          node.inputs.clear();
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
  return out;
}

std::vector<NodeId> support_of(const Program& program, NodeId id, const std::vector<uint8_t>* cut) {
  std::vector<NodeId> support;
  std::vector<NodeId> stack{id};
  std::vector<uint8_t> visited(program.nodes.size(), 0);
  while (!stack.empty()) {
    NodeId n = stack.back();
    stack.pop_back();
    if (visited[size_t(n)]) continue;
    visited[size_t(n)] = 1;
    const Node& node = program.node(n);
    // A tuple (pair_selectors.cpp) is its own MLP: the heads that read it read its one-hot.
    bool boundary = n != id && ((cut && size_t(n) < cut->size() && (*cut)[size_t(n)]) ||
                                (node.kind == NodeKind::Elementwise && node.op == ElementOp::Tuple));
    if (node.kind == NodeKind::Elementwise && !boundary) {
      for (NodeId in : node.inputs) stack.push_back(in);
    } else if (node.kind != NodeKind::Constant) {
      support.push_back(n);
    }
  }
  std::sort(support.begin(), support.end());
  return support;
}

namespace {

// The values known during one evaluation, by node: a slot counts when its stamp is the current
// evaluation's. Lookup tables are enumerated through here by the million, so nothing is allocated
// per evaluation once the slots exist.
// The error of the last map that failed in evaluate_fused, for a refusal to name the operation.
std::string& last_failure() {
  thread_local std::string message;
  return message;
}

struct FusedMemo {
  std::vector<Value> value;
  std::vector<uint64_t> stamp;
  uint64_t current = 0;

  bool has(NodeId id) const { return stamp[size_t(id)] == current; }
  void set(NodeId id, const Value& v) {
    value[size_t(id)] = v;
    stamp[size_t(id)] = current;
  }
};

bool evaluate_into(const Program& program, NodeId id, FusedMemo& memo, Value& out) {
  if (memo.has(id)) return out = memo.value[size_t(id)], true;
  const Node& node = program.node(id);
  if (node.kind == NodeKind::Constant) return out = node.constant, true;
  if (node.kind != NodeKind::Elementwise) return false;
  // No allocation below four inputs (only the compiler's tuples have more).
  Value small[3];
  std::vector<Value> large(node.inputs.size() > 3 ? node.inputs.size() : 0);
  Value* args = large.empty() ? small : large.data();
  for (size_t i = 0; i < node.inputs.size(); ++i)
    if (!evaluate_into(program, node.inputs[i], memo, args[i])) return false;
  try {
    out = apply_elementwise(node, args);
  } catch (const UserError& e) {
    last_failure() = e.what();
    return false;
  }
  memo.set(id, out);
  return true;
}

}  // namespace

std::string last_fused_failure() {
  // "file:1:2: error: cannot negate the string \"a\"\n  source\n  ^\n" -> the sentence alone.
  const std::string& text = last_failure();
  const size_t begin = text.find("error: ");
  if (begin == std::string::npos) return "";
  return text.substr(begin + 7, text.find('\n', begin) - begin - 7);
}

bool evaluate_fused(const Program& program, NodeId id, const std::vector<NodeId>& support,
                    const std::vector<Value>& support_values, Value& out) {
  thread_local FusedMemo memo;
  if (memo.value.size() < program.nodes.size()) {
    memo.value.resize(program.nodes.size());
    memo.stamp.resize(program.nodes.size(), 0);
  }
  ++memo.current;
  for (size_t i = 0; i < support.size(); ++i) memo.set(support[i], support_values[i]);
  return evaluate_into(program, id, memo, out);
}

}  // namespace raspc::compiler
