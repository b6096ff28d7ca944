// The fusion of elementwise chains, which every pass after simplify reads through: an elementwise
// node is computed from its support (the nearest non-elementwise s-ops, or the nodes a pass has cut)
// by one lookup table, however long the chain of maps in between.
//
// Passes ask for the support and the values of every node of a chain, one node after another. Done
// from scratch each time, that walks the chain back to its support for every node: quadratic in the
// chain's length (a chain of 4,000 maps took 12 s). While a FusedCacheScope is open, each node's
// support is computed once from its inputs' supports, and each node's value once for each support
// assignment, so a chain costs time linear in its length.
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

// The values of one support assignment, by node, kept across evaluations.
using KeptValues = std::unordered_map<NodeId, Value>;

// At most this many values are kept; past it the cache starts again (a lookup table of 65,536
// rows over a long chain would otherwise keep every row's every node).
constexpr size_t kKeptValueLimit = size_t(1) << 21;

}  // namespace

struct FusedCache {
  // Supports by node for one `cut` (a copy of it: infer changes its cut as it goes).
  struct SupportMemo {
    bool with_cut = false;
    std::vector<uint8_t> cut;
    std::vector<std::optional<std::vector<NodeId>>> of;
  };
  const Program* program = nullptr;
  std::unordered_map<std::string, KeptValues> by_assignment;
  size_t kept = 0;
  SupportMemo supports[2];  // without a cut, with one
};

namespace {

FusedCache*& open_cache() {
  thread_local FusedCache* cache = nullptr;
  return cache;
}

FusedCache* cache_for(const Program& program) {
  FusedCache* cache = open_cache();
  return cache && cache->program == &program ? cache : nullptr;
}

// Where a chain stops when it is reached from a node reading it: a node the pass has cut, or a
// tuple (pair_selectors.cpp), which is its own MLP whose one-hot the heads read.
bool is_boundary(const Node& node, NodeId n, const std::vector<uint8_t>* cut) {
  return (cut && size_t(n) < cut->size() && (*cut)[size_t(n)]) ||
         (node.kind == NodeKind::Elementwise && node.op == ElementOp::Tuple);
}

bool read_through(const Program& program, NodeId in, const std::vector<uint8_t>* cut) {
  const Node& input = program.node(in);
  return input.kind == NodeKind::Elementwise && !is_boundary(input, in, cut);
}

const std::vector<NodeId>& memoised_support(const Program& program, NodeId id, const std::vector<uint8_t>* cut,
                                            FusedCache::SupportMemo& memo) {
  if (memo.with_cut != (cut != nullptr) || (cut && memo.cut != *cut) || memo.of.size() != program.nodes.size()) {
    memo.with_cut = cut != nullptr;
    memo.cut = cut ? *cut : std::vector<uint8_t>{};
    memo.of.assign(program.nodes.size(), std::nullopt);
  }
  // Post-order without recursion: a chain can be thousands of maps deep.
  std::vector<std::pair<NodeId, bool>> stack{{id, false}};
  while (!stack.empty()) {
    auto [n, inputs_done] = stack.back();
    stack.pop_back();
    if (memo.of[size_t(n)]) continue;
    const Node& node = program.node(n);
    if (node.kind != NodeKind::Elementwise) {
      memo.of[size_t(n)] = node.kind == NodeKind::Constant ? std::vector<NodeId>{} : std::vector<NodeId>{n};
      continue;
    }
    if (!inputs_done) {
      stack.push_back({n, true});
      for (NodeId in : node.inputs)
        if (read_through(program, in, cut) && !memo.of[size_t(in)]) stack.push_back({in, false});
      continue;
    }
    std::vector<NodeId> support;
    for (NodeId in : node.inputs) {
      if (read_through(program, in, cut)) {
        const std::vector<NodeId>& part = *memo.of[size_t(in)];
        support.insert(support.end(), part.begin(), part.end());
      } else if (program.node(in).kind != NodeKind::Constant) {
        support.push_back(in);
      }
    }
    std::sort(support.begin(), support.end());
    support.erase(std::unique(support.begin(), support.end()), support.end());
    memo.of[size_t(n)] = std::move(support);
  }
  return *memo.of[size_t(id)];
}

// The error of the last map that failed in evaluate_fused, for a refusal to name the operation.
std::string& last_failure() {
  thread_local std::string message;
  return message;
}

// The values known during one evaluation, by node: a slot counts when its stamp is the current
// evaluation's. Lookup tables are enumerated through here by the million, so nothing is allocated
// per evaluation once the slots exist.
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

bool evaluate_into(const Program& program, NodeId id, FusedMemo& memo, KeptValues* kept, Value& out) {
  if (memo.has(id)) return out = memo.value[size_t(id)], true;
  const Node& node = program.node(id);
  if (node.kind == NodeKind::Constant) return out = node.constant, true;
  if (node.kind != NodeKind::Elementwise) return false;
  if (kept) {
    if (auto it = kept->find(id); it != kept->end()) return out = it->second, true;
  }
  // No allocation below four inputs (only the compiler's tuples have more).
  Value small[3];
  std::vector<Value> large(node.inputs.size() > 3 ? node.inputs.size() : 0);
  Value* args = large.empty() ? small : large.data();
  for (size_t i = 0; i < node.inputs.size(); ++i)
    if (!evaluate_into(program, node.inputs[i], memo, kept, args[i])) return false;
  try {
    out = apply_elementwise(node, args);
  } catch (const UserError& e) {
    last_failure() = e.what();
    return false;
  }
  memo.set(id, out);
  if (kept) {
    kept->emplace(id, out);
    ++open_cache()->kept;
  }
  return true;
}

KeptValues* kept_values_for(const Program& program, const std::vector<NodeId>& support,
                            const std::vector<Value>& support_values) {
  FusedCache* cache = cache_for(program);
  if (!cache) return nullptr;
  if (cache->kept > kKeptValueLimit) {
    cache->by_assignment.clear();
    cache->kept = 0;
  }
  std::string key;
  for (size_t i = 0; i < support.size(); ++i)
    key += std::to_string(support[i]) + "=" + value_key(support_values[i]) + ";";
  return &cache->by_assignment[key];
}

}  // namespace

std::vector<NodeId> support_of(const Program& program, NodeId id, const std::vector<uint8_t>* cut) {
  if (FusedCache* cache = cache_for(program)) return memoised_support(program, id, cut, cache->supports[cut ? 1 : 0]);
  std::vector<NodeId> support;
  std::vector<NodeId> stack{id};
  std::vector<uint8_t> visited(program.nodes.size(), 0);
  while (!stack.empty()) {
    NodeId n = stack.back();
    stack.pop_back();
    if (visited[size_t(n)]) continue;
    visited[size_t(n)] = 1;
    const Node& node = program.node(n);
    if (node.kind == NodeKind::Elementwise && (n == id || !is_boundary(node, n, cut))) {
      for (NodeId in : node.inputs) stack.push_back(in);
    } else if (node.kind != NodeKind::Constant) {
      support.push_back(n);
    }
  }
  std::sort(support.begin(), support.end());
  return support;
}

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
  return evaluate_into(program, id, memo, kept_values_for(program, support, support_values), out);
}

MapValues evaluate_on(const Program& program, const Inference& inference, NodeId id, const std::vector<NodeId>& support,
                      const std::vector<JointCombination>& combinations) {
  MapValues out;
  out.value.resize(combinations.size());
  out.defined.resize(combinations.size());
  std::vector<Value> assignment(support.size());
  for (size_t c = 0; c < combinations.size(); ++c) {
    for (size_t i = 0; i < support.size(); ++i)
      assignment[i] = inference.info[size_t(support[i])].values[combinations[c].digits[i]];
    out.defined[c] = evaluate_fused(program, id, support, assignment, out.value[c]);
  }
  return out;
}

FusedCacheScope::FusedCacheScope(const Program& program)
    : cache_(std::make_unique<FusedCache>()), previous_(open_cache()) {
  cache_->program = &program;
  open_cache() = cache_.get();
}

FusedCacheScope::~FusedCacheScope() { open_cache() = previous_; }

}  // namespace raspc::compiler
