// A rewrite (it reads value sets): a map that does not depend on one of its inputs reads a constant there instead.
//
// A fused map is a lookup over the combinations its inputs can hold together, and some programs
// compute a value that the combinations show to be a function of fewer inputs: dyck1's
// `balance < 0` is `(indices + 1) * mean < 0`, the sign of the mean alone, but as written it is a
// table over (index, mean), n^2/2 rows at maximum length n, refused from 512 on. Where every
// combination that can occur gives the same value whatever one input holds, and one value of that
// input gives every combination's value when put in its place, the map's copy reading that
// constant instead is the same function on every input (the value sets are supersets of what
// occurs, so "every combination" covers every run). The lookup then enumerates the rest: dyck1's
// map becomes one threshold on the mean, and nothing reads the indices' one-hot.
//
// Every map is tried: a lookup gated by an input it ignores costs a unit per value of that input
// (and the input's one-hot, if nothing else reads it) for nothing.
#include <map>
#include <optional>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

// Every combination of a map's inputs that can occur, and the map's value there.
struct Evaluated {
  std::vector<JointCombination> combinations;
  MapValues map;
};

class Pruner {
 public:
  Pruner(const Program& program, const Inference& inference, const CompileOptions& options)
      : in_(program), inference_(inference), options_(options) {}

  // The pruned program, or nothing where no map ignores an input.
  std::optional<Program> run() {
    std::map<NodeId, std::map<NodeId, Value>> constants;  // map -> (input -> the constant it reads)
    for (NodeId id = 0; id < NodeId(in_.nodes.size()); ++id) {
      const Node& node = in_.node(id);
      const SopInfo& info = inference_.info[size_t(id)];
      if (node.kind != NodeKind::Elementwise || !info.needed || inference_.cut[size_t(id)]) continue;
      std::map<NodeId, Value> found = ignored_inputs(id);
      if (!found.empty()) constants.emplace(id, std::move(found));
    }
    if (constants.empty()) return std::nullopt;
    return rewrite(constants);
  }

 private:
  const Program& in_;
  const Inference& inference_;
  const CompileOptions& options_;

  const SopInfo& info(NodeId id) const { return inference_.info[size_t(id)]; }

  // The inputs of map `id` it does not depend on, each with a value that may stand in for it.
  std::map<NodeId, Value> ignored_inputs(NodeId id) const {
    std::vector<NodeId> support = support_of(in_, id, &inference_.cut);
    if (support.size() < 2) return {};
    for (NodeId s : support)
      if (!info(s).values_known) return {};
    std::vector<JointCombination> combinations;
    if (!joint_combinations(inference_, support, options_.max_len, kPruneLimit, combinations)) return {};
    Evaluated table;
    table.map = evaluate_on(in_, inference_, id, support, combinations);
    table.combinations = std::move(combinations);
    std::map<NodeId, Value> out;
    std::vector<uint8_t> kept(support.size(), 1);
    for (size_t j = 0; j < support.size(); ++j) {
      kept[j] = 0;
      Value stand_in;
      std::map<std::vector<size_t>, size_t> representatives;
      if (depends_only_on_kept(table, kept, representatives) &&
          stand_in_for(id, support, j, kept, table, representatives, out, stand_in)) {
        out.emplace(support[j], std::move(stand_in));
      } else {
        kept[j] = 1;
      }
    }
    return out;
  }

  static std::vector<size_t> kept_digits(const std::vector<size_t>& digits, const std::vector<uint8_t>& kept) {
    std::vector<size_t> out;
    for (size_t i = 0; i < kept.size(); ++i)
      if (kept[i]) out.push_back(digits[i]);
    return out;
  }

  // Whether the combinations' defined values are a function of the kept inputs' digits; `first`
  // receives, by the kept digits, the first defined combination that has them.
  static bool depends_only_on_kept(const Evaluated& table, const std::vector<uint8_t>& kept,
                                   std::map<std::vector<size_t>, size_t>& first) {
    for (size_t c = 0; c < table.combinations.size(); ++c) {
      if (!table.map.defined[c]) continue;
      auto [at, fresh] = first.emplace(kept_digits(table.combinations[c].digits, kept), c);
      if (!fresh && !table.map.same(at->second, c)) return false;
    }
    return true;
  }

  // A value of input j that gives every defined combination's value with the inputs dropped
  // before (`chosen`) at their stand-ins too. `distinct`: a combination for each value of the kept
  // inputs (depends_only_on_kept's); one each is enough, the rest agree with it.
  bool stand_in_for(NodeId id, const std::vector<NodeId>& support, size_t j, const std::vector<uint8_t>& kept,
                    const Evaluated& table, const std::map<std::vector<size_t>, size_t>& distinct,
                    const std::map<NodeId, Value>& chosen, Value& stand_in) const {
    const std::vector<Value>& candidates = info(support[j]).values;
    // A handful of tries: a map that ignores an input accepts most of its values (a stand-in that
    // makes some combination undefined, such as a zero divisor, is the exception).
    for (size_t t = 0; t < candidates.size() && t < 8; ++t) {
      const Value& candidate = candidates[t];
      bool works = true;
      std::vector<Value> assignment(support.size());
      for (const auto& [key, c] : distinct) {
        for (size_t i = 0; i < support.size(); ++i) {
          auto dropped = chosen.find(support[i]);
          assignment[i] = i == j ? candidate
                          : kept[i] ? info(support[i]).values[table.combinations[c].digits[i]]
                                    : dropped->second;
        }
        Value v;
        if (!evaluate_fused(in_, id, support, assignment, v) || !same_value(v, table.map.value[c])) {
          works = false;
          break;
        }
      }
      if (works) {
        stand_in = candidate;
        return true;
      }
    }
    return false;
  }

  // The program with each pruned map's fused subgraph copied, its ignored inputs replaced by
  // constants. The copies come right before the map, so the order stays topological; the
  // originals stay for their other readers.
  Program rewrite(const std::map<NodeId, std::map<NodeId, Value>>& constants) const {
    return rewrite_nodes(in_, [&](NodeId id, Node& node, const std::vector<NodeId>& remap, Program& out) {
      auto pruned = constants.find(id);
      if (pruned == constants.end()) return NodeId(-1);
      const std::map<NodeId, Value>& stand_ins = pruned->second;
      std::map<NodeId, NodeId> copies;  // an original node of the subgraph -> its copy
      for (const auto& [input, value] : stand_ins) {
        Node constant;
        constant.kind = NodeKind::Constant;
        constant.constant = value;
        constant.span = in_.node(input).span;
        copies[input] = push_node(out, std::move(constant));
      }
      // Copies of the maps between `id` and a replaced input, inputs first (ids increase).
      std::vector<NodeId> inside = between(id, stand_ins);
      for (NodeId n : inside) {
        Node copy = in_.node(n);
        for (NodeId& in : copy.inputs) {
          auto c = copies.find(in);
          in = c != copies.end() ? c->second : remap[size_t(in)];
        }
        copies[n] = push_node(out, std::move(copy));
      }
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        auto c = copies.find(in_.node(id).inputs[k]);
        if (c != copies.end()) node.inputs[k] = c->second;
      }
      return push_node(out, std::move(node));
    });
  }

  // The elementwise nodes strictly inside map `id`'s fused subgraph that read a replaced input,
  // directly or through each other, in increasing order.
  std::vector<NodeId> between(NodeId id, const std::map<NodeId, Value>& replaced) const {
    std::map<NodeId, bool> reads;  // memo: whether a node of the subgraph reads a replaced input
    auto visit = [&](auto&& self, NodeId n) -> bool {
      if (replaced.count(n)) return true;
      const Node& node = in_.node(n);
      if (node.kind != NodeKind::Elementwise || (n != id && inference_.cut[size_t(n)])) return false;
      auto known = reads.find(n);
      if (known != reads.end()) return known->second;
      bool any = false;
      for (NodeId in : node.inputs) any = self(self, in) || any;
      reads[n] = any;
      return any;
    };
    visit(visit, id);
    std::vector<NodeId> out;
    for (const auto& [n, any] : reads)
      if (any && n != id) out.push_back(n);
    return out;
  }
};

}  // namespace

bool prune_map_inputs(Program& program, const Inference& inference, const CompileOptions& options) {
  std::optional<Program> pruned = Pruner(program, inference, options).run();
  if (pruned) program = std::move(*pruned);
  return pruned.has_value();
}

}  // namespace raspc::compiler
