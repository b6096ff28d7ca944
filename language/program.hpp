// The Program: what evaluating a RASP source produces, and what the interpreter and the compiler
// consume. A DAG of s-ops (sequence operations) and selectors; the compile-time part of the
// language (def, lists, loops, dicts) has already been executed and left no trace but the nodes.
//
// Nodes are stored in creation order, so every node's inputs have smaller ids (a topological
// order for free). Every node keeps the source span of the expression that made it; errors from
// the interpreter and the compiler point there.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "language/value.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

using NodeId = int32_t;

// The name the standard library's source goes by in spans and messages.
inline constexpr const char* kLibraryFileName = "stdlib.rasp";

// One input of a node as the interpreter holds it for an input of length n: a selector's n x n
// matrix (row q: the keys query q selects) or an s-op's n values.
struct ConstructionInput {
  const std::vector<uint8_t>* selector = nullptr;
  const std::vector<Value>* sop = nullptr;
};

// The keys a selector row of n selects: its bytes are 0 or 1, summed by a loop the compiler
// vectorises (the interpreter's widths and aggregates, the constructions' widths).
inline int selected_in(const uint8_t* row, int n) {
  int selected = 0;
  for (int k = 0; k < n; ++k) selected += row[k];
  return selected;
}

// A kind of node the language does not have, defined where it is made (the compiler's
// constructions, compiler/constructions/), and what the interpreter and the dumps need of it, so
// that a rewritten program still runs and its rewrites are checked by running it.
class ConstructionNode {
 public:
  virtual ~ConstructionNode() = default;
  // What it is called where a kind is shown: a dump, the label of a node without a name.
  virtual const char* kind_name() const = 0;
  // Its parameters beyond its inputs as text: two nodes of one kind, with equal inputs and keys,
  // compute the same (simplify merges them).
  virtual std::string key() const = 0;
  // Its value at each of the n positions, from its inputs' (in the order of Node::inputs).
  virtual std::vector<Value> evaluate(const std::vector<ConstructionInput>& inputs, int n) const = 0;
  // What a message adds to the source it was made from ("part 1 of 2"), or "".
  virtual std::string detail() const { return ""; }
};

enum class NodeKind : uint8_t {
  // s-ops
  Tokens,         // the input sequence
  Indices,        // 0, 1, 2, ... (BOS, when present in a model, is invisible here)
  Constant,       // an atom broadcast to every position: `constant`
  Elementwise,    // `op` applied position by position to `inputs` (all s-ops)
  Aggregate,      // inputs = {selector, s-op}; `default_value` when nothing is selected
  SelectorWidth,  // inputs = {selector}: how many keys each query selects
  // selectors
  Select,     // inputs = {keys, queries} (s-ops); query q selects key k iff keys[k] cmp queries[q]
  SelectAnd,  // inputs = {a, b}
  SelectOr,   // inputs = {a, b}
  SelectNot,  // inputs = {a}
  // A node the compiler makes for one of its constructions (compiler/constructions/): what it
  // computes is `construction`'s. Never in a program the language evaluates from source.
  Construction,
};

enum class Comparison : uint8_t { Eq, Ne, Lt, Gt, Le, Ge };

// Elementwise operations. Operand order is the source order: for `a - b`, inputs = {a, b}.
enum class ElementOp : uint8_t {
  // unary (1 input)
  Neg, Pos, Not, Round, Indicator,
  // binary (2 inputs), Python semantics on atoms (bools count as 0/1 in arithmetic)
  Add, Sub, Mul, Div, Mod, Pow, Eq, Lt, Gt, Le, Ge, And, Or,
  // `x in [..]`, `x in "abc"` (1 input): true iff the value equals one of `table_keys`
  InTable,
  // `list[x]`, `dict[x]`, `"str"[x]` (1 input): the value of `table_values` whose
  // `table_keys` entry equals x; no match is an error at the node's span
  LookupTable,
  // `a if c else b` (3 inputs: {a, c, b}, in source order)
  IfElse,
  // (any number of inputs) the combination of the inputs' values as one string, `("a", 3)`. Not
  // in the language: the compiler makes it (compiler/pair_selectors.cpp) so that one attention
  // head can score a selector over the combinations of several s-ops.
  Tuple,
};

enum class Encoding : uint8_t { Unspecified, Categorical, Numerical };

struct Node {
  NodeKind kind = NodeKind::Constant;
  Span span;         // the expression that made this node
  std::string name;  // the first name it was assigned to ("" if none); used in traces and labels
  // The first name a user's `def` assigned it to inside its body, for labels where `name` is empty
  // (such names are not the program's: a def called twice names two nodes alike).
  std::string local_name;
  // A node a compiler rewrite made from `span`'s expression: what names add to that expression to
  // tell it apart ("share of a"). A construction node's is its construction's detail().
  std::string detail;
  Encoding annotation = Encoding::Unspecified;  // set by categorical() / numerical()

  std::vector<NodeId> inputs;

  Value constant;                  // Constant
  ElementOp op = ElementOp::Add;   // Elementwise
  std::vector<Value> table_keys;   // Elementwise InTable / LookupTable
  std::vector<Value> table_values; // Elementwise LookupTable
  Comparison comparison = Comparison::Eq;  // Select
  Value default_value;             // Aggregate (0 unless given)
  std::shared_ptr<const ConstructionNode> construction;  // Construction

  bool is_selector() const {
    return kind == NodeKind::Select || kind == NodeKind::SelectAnd || kind == NodeKind::SelectOr ||
           kind == NodeKind::SelectNot;
  }
};

struct Program {
  std::vector<Node> nodes;   // topologically ordered: inputs[i] < own id
  NodeId output = -1;        // the last expression statement, or the one chosen by --output
  // Every top-level name bound to an s-op or selector, in the order first assigned (for --trace,
  // --output NAME and residual labels). Names from the standard library are not listed.
  std::vector<std::pair<std::string, NodeId>> named;

  const Node& node(NodeId id) const { return nodes.at(size_t(id)); }
  NodeId find(const std::string& name) const;  // -1 if absent
  // A display name: the node's name, or its def-local name or kind with its id, like
  // "plus_index#18" or "aggregate#12".
  std::string label(NodeId id) const;
  // How a message names a node to the user: "`hist`" where the program named it, else its source
  // and where it is, "`aggregate(select(indices, indices, ==), f)` at late.rasp:2:13" (a node a
  // library function made is its call in the program: "`sort(shown, key)` at most_freq.rasp:20:10"),
  // and what a construction adds ("part 1 of 2"). Labels (above) stay the model's identifiers.
  std::string describe(NodeId id) const;
  // Whether a name the user sees in the source is the node's: a top-level name of the program
  // (`named` lists it) or of the standard library (`length`).
  bool named_in_source(NodeId id) const;
  // Its source and where it is, with what a construction adds: "`sort(shown, key)` at
  // most_freq.rasp:20:10, part 1 of 2".
  std::string source_of(NodeId id) const;
  // The name a picture or a table shows for a node, without quotes or place: the user's name (its
  // top-level name or, inside a def, its local name), else its expression, "sort(shown, key), part
  // 1 of 2". Not unique: where two nodes show alike, a reader adds where each is.
  std::string shown_name(NodeId id) const;
};

// The semantics of one elementwise operation on atoms; shared by the evaluator (constant
// folding), the interpreter and the compiler (lookup tables over value sets). Errors (adding a
// string to a number, a missing key, division by zero) are UserErrors at `node.span`.
Value apply_elementwise(const Node& node, const Value* inputs);

// Whether keys[k] `cmp` queries[q] holds: the select predicate on atoms.
bool compare_select(Comparison cmp, const Value& key, const Value& query, const Span& where);

}  // namespace raspc
