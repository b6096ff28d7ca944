// The forms a Program takes between the compiler's passes (pipeline.cpp runs them in order), and
// what the passes ask of each other. Over 500 lines: it is the compiler's one interface between
// its passes (each declaration documents its contract); split by pass, every pass would include
// most of the parts.
//
//   the rewrites -> Program     rewritten in place (simplify, merge_means, width_steps, ...)
//   infer        -> Inference   value set and encoding of every s-op
//   schedule     -> Schedule    every head and MLP job placed in a block
//   allocate     -> Allocation  labelled residual dimensions
//   lower        -> Lowered     dense per-block matrices over residual dimensions
//   assemble     -> Model       GPT-2 parameters
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/compile.hpp"
#include "compiler/constructions/construction.hpp"
#include "language/program.hpp"

namespace raspc {
class VerificationBackend;
}

namespace raspc::compiler {

// The number a value stands for in the residual stream (True 1, False 0; not for strings).
inline double number_of(const Value& v) { return v.is_bool() ? (v.boolean ? 1.0 : 0.0) : v.number.to_double(); }

// The largest value set a categorical s-op (or a numerical one that must be discretised) may have:
// each value costs a residual dimension or an MLP threshold. Larger sets are refused at the s-op.
constexpr size_t kValueSetLimit = 2048;
// The most input combinations one MLP lookup table may enumerate.
constexpr size_t kCombinationLimit = 1 << 16;
// A map of one input lists that input's values once, and its MLP steps only where the map's value
// changes, so its cost is not the count of values: the most values such a lookup, and a mean's
// value set, may list (dyck1's prefix means at max length 1,024 take 320,000 values; listed by the
// number of keys averaged, shuffle_dyck2's means of -1, 0 and 1 there are 1,050,625 entries).
constexpr size_t kSingleInputLimit = size_t(1) << 21;
// The most (value, position) pairs the per-position value sets of one s-op, or the positions of
// one table's combinations, may hold in all: beyond it they are not kept (a mean's values then
// count at every position) or the table is not listed. About 130 MB.
constexpr size_t kPositionEntryLimit = size_t(1) << 25;
// The most combinations evaluated to find that a map ignores one of its inputs (prune_inputs.cpp;
// dyck1's (index, mean) pairs at max length 1,024 are 525,824).
constexpr size_t kPruneLimit = size_t(1) << 20;

struct SopInfo {
  bool needed = false;                        // the output depends on it
  Encoding encoding = Encoding::Unspecified;  // Categorical or Numerical for s-ops
  std::vector<Value> values;                  // sorted (value_less); complete when values_known
  // The values the s-op can hold at each position (sorted subsets of `values`), where that is
  // narrower than `values`: indices, widths and means of selectors that depend on positions only
  // (a prefix mean at position i averages exactly i+1 values), and maps of those. Empty: `values`
  // at every position. Lookup tables enumerate these instead of the product of whole value sets.
  std::vector<std::vector<Value>> by_position;
  bool values_known = true;
  double lo = 0, hi = 0;                      // numeric bounds (numerical s-ops)
  bool at_most_one = false;                   // selectors: no query selects two keys
  std::string why;                            // for --explain

  const std::vector<Value>& values_at(int position) const {
    return by_position.empty() ? values : by_position[size_t(position)];
  }
};

// Selector widths over pairwise disjoint selectors (the parts of a split width): at position p
// their widths add up to at most keys_at[p], the keys a query there can see.
struct DisjointWidths {
  std::vector<NodeId> members;
  std::vector<int> keys_at;  // by position
};

// Position numbers (constructions/numerical_selector.cpp): integer s-ops built from positions -- `indices`,
// `length`, and affine maps of them such as `length - indices - 1` -- held as a number group of
// O(1) residual dimensions instead of a one-hot, and compared by numerical selectors (one head
// scoring -(q-k)^2 up to a per-query constant).
enum class NumberRole : uint8_t {
  None,
  Indices,       // `indices`, with its number group in the position embedding
  LastIndex,     // bidirectional `length`: a head copies the last position's group (length - 1)
  CausalLength,  // causal `length`: indices + 1, no head
  Affine,        // an affine map of indices and length read only by numerical selectors
  Select,        // a numerical selector
  WidthNumber,   // a selector width read as the integer w: its MLP writes w's number group
  PrefixDigits,  // bidirectional `select(indices, indices, <=)` read only by means: two heads over the
                 // position's digits (constructions/prefix_mean.cpp)
};
// value = indices * i + length * L + constant (in causal mode L is folded into i: L = i + 1).
struct AffineForm {
  int64_t indices = 0, length = 0, constant = 0;
};
// A categorical s-op (or a map of one) that a numerical selector's query adds to its affine form,
// times an integer: the query reads its number linearly off the one-hot (`length - plus_index`'s
// plus_index, a shift computed from the first token).
struct NumberTerm {
  NodeId sop = -1;
  int64_t coefficient = 1;
};
// What a numerical selector's head does where no key matches the query.
enum class Fallback : uint8_t {
  None,        // every query matches a key it sees (checked at every length), so BOS never wins
  Square,      // BOS scores beta*(q~^2 - 1/2): the query carries its square (a map of indices alone)
  BeforeKeys,  // every query that matches no key lies beyond the first position's key, on the side
               // away from the others: BOS is read as the key of position -1 (lower_head.cpp)
};
struct NumericSelect {
  // key.length is 0 and the key has no terms: a key that adds `length` or a position-invariant
  // term is rewritten to the query (k + t == q is k == q - t where t is the same at every position).
  AffineForm key, query;
  std::vector<NumberTerm> terms;  // the query's categorical terms
  NodeId length = -1;             // the `length` the query reads, if any
  // The key is this s-op's number (a selector width or a map of widths: key is then the value
  // itself), written by an MLP as a number group, instead of indices.
  NodeId key_width = -1;
  Fallback fallback = Fallback::None;
  double max_query = 0, max_key = 0;  // largest |q - centre|, |k - centre| that occur
  // Eq scores -(q-k)^2: the nearest key wins. Lt, Le, Gt, Ge: an order whose every reader asks only
  // whether some key is selected (an aggregate of a constant, has_focus) scores one linear term,
  // beta * (+-(q - k) -+ 1/2), above 0 exactly where the comparison holds.
  Comparison comparison = Comparison::Eq;
  double reach = 0;   // an order's largest |q - k|
  int conjuncts = 1;  // an order's most conjuncts (itself included) in one head that reads it
};
struct PositionNumbers {
  std::vector<NumberRole> role;     // by NodeId
  std::vector<std::string> why;     // by NodeId: for --explain (chosen or not)
  std::map<NodeId, NumericSelect> selects;
  bool indices_group = false;   // the position embedding carries indices' number group
  bool indices_onehot = true;   // something reads indices as a one-hot
  double centre = 0, extent = 1;  // group values are (v - centre) / extent, squared / extent^2
  // Where a prefix selector reads them (PrefixDigits), an index i is written as the digits
  // i / digit_base (digit_count values) and i % digit_base, each a one-hot in the position embedding.
  int digit_base = 0, digit_count = 0;
  NumberRole of(NodeId id) const { return role.empty() ? NumberRole::None : role[size_t(id)]; }
};
// Whether a head's node is a prefix mean: a mean over a PrefixDigits selector, two heads for one
// node (constructions/prefix_mean.cpp).
inline bool is_prefix_mean(const Program& program, const PositionNumbers& numbers, NodeId id) {
  const Node& node = program.node(id);
  return node.kind == NodeKind::Aggregate && numbers.of(node.inputs[0]) == NumberRole::PrefixDigits;
}
// The sharpness of numerical selectors: the nearest key outscores the next by beta per unit
// squared distance (BOS, as the fallback, by beta/2).
double numeric_select_beta(int max_len);
// What a match of each other conjunct scores in a head that reads an order: more than the order's
// term can swing, beta * (reach + 1), so that the conjuncts still decide alone where they fail.
double order_match_score(const NumericSelect& plan, int max_len);
// How far from PositionNumbers::centre, in extents, a key computed from a selector width may reach:
// a number group's y = sqrt(3 - u^2 - u^4) needs u^2 + u^4 <= 3, |u| <= 1.27.
constexpr double kComputedKeyReach = 1.25;
// The margin a numerical selector's matching key wins by (beta, or beta/2 over BOS where BOS is
// the fallback) and the most float32 may round one of its scores by (constructions/numerical_selector.cpp).
struct NumericMargin {
  double margin = 0, rounding = 0;
};
NumericMargin numeric_select_margin(const NumericSelect& plan, int max_len);
// Decides which selectors are numerical (exact and smaller than the one-hot table) and what they
// read. Refuses, at the selector, one whose scores float32 cannot resolve at this --max-len.
// Selectors in `excluded` stay one-hot, for the reason given (found once inferred: computed keys
// out of range, terms whose values do not fit).
PositionNumbers plan_position_numbers(const Program& program, const CompileOptions& options,
                                      const std::map<NodeId, std::string>& excluded);
// The prefix mean (constructions/prefix_mean.cpp): an index's two digits (base, count of high
// digits) at --max-len n; whether a selector may be PrefixDigits (bidirectional
// `select(indices, indices, <=)` where the digits are fewer dimensions than the index's one-hot);
// and --explain's why for one.
std::pair<int, int> prefix_digits(int max_len);
// Below this max length, a prefix mean stays a table where indices' one-hot stays anyway.
constexpr int kPrefixDigitsBesideOneHot = 32;
bool prefix_digits_candidate(const Program& program, NodeId selector, const CompileOptions& options);
std::string prefix_digits_why(int max_len);
struct Inference;
// Why a PrefixDigits selector must stay a table once inferred (something but a numerical mean reads
// it), or "" where every reader is a mean.
std::string prefix_mean_refusal(const Program& program, const Inference& inference, NodeId selector);
// A numerical selector with query terms is planned before the terms' values are known: once they
// are inferred, this checks them (integers, read off a one-hot), bounds the query at every
// (length, position), and chooses the fallback: true and the plan completed, or false and why the selector
// stays one-hot (in `why`, which otherwise says what was chosen). Refuses at the float32 limit as
// the planning does.
bool settle_query_terms(const Program& program, const Inference& inference, const CompileOptions& options,
                        NodeId selector, NumericSelect& plan, std::string& why);
// Whether an s-op holds one value at every position of an input: constants, and in bidirectional
// mode aggregates and widths whose selectors compare keys with constants only (every query then
// selects the same keys), and maps of those (through `cut` maps as sources, where given).
bool position_invariant(const Program& program, NodeId id, Mode mode, const std::vector<uint8_t>* cut = nullptr);

struct Inference {
  std::vector<SopInfo> info;  // by NodeId
  std::vector<DisjointWidths> disjoint_widths;
  // Maps computed by an MLP of their own and read from the residual, instead of fused into the
  // maps that read them: where fusing would give one table two numerical inputs.
  std::vector<uint8_t> cut;   // by NodeId
  PositionNumbers numbers;
  // By NodeId: a map of a long selector width with fewer values than it (kLongWidthValues; a
  // predicate of width_predicates.cpp), written by an MLP of its own from the width's 1/(w+1) and
  // read from the residual, never folded into a head, so the width needs no one-hot for it.
  std::vector<uint8_t> from_scratch;
  bool written_from_scratch(NodeId id) const { return size_t(id) < from_scratch.size() && from_scratch[size_t(id)]; }
};
// Inference::from_scratch, once value sets and the position numbers' roles are known (width_predicates.cpp).
std::vector<uint8_t> maps_from_scratch(const Program& program, const Inference& inference, const CompileOptions& options);

// Value sets and encodings. Refusals (value set over the limit, mean over strings, selectors on
// numerical s-ops) are UserErrors at the offending node.
Inference infer(const Program& program, const CompileOptions& options, bool past_model_limit = false);
// With `past_model_limit`, a categorical s-op of more values than a model can hold (2,048) is
// listed instead of refused: for a rewrite that may remove it (tiebreak_keys: Tracr's sort keys
// `x + i * eps` take |x| n values) and for listing values (the Tracr converter's). What reads it
// may still be refused; the inference a model is built from never lists past the limit.

// The values in the order `<` puts them, where `<`, `==` and `<=` agree on them as a strict total
// order (every pair compared, so quadratic); empty otherwise, or when a comparison is an error.
std::vector<Value> ordered_values(const std::vector<Value>& values, const Span& where);

// The combinations of values that the s-ops of `support` can hold together at one position: each
// is a digit per s-op (an index into its `values`) and the positions where it can occur (empty:
// every position, when no s-op of `support` has per-position value sets). Parts of a split width
// in `support` add up to no more than the keys at the position. False when there are more than
// `limit` (per position, or in all).
struct JointCombination {
  std::vector<size_t> digits;
  std::vector<int> positions;
};
bool joint_combinations(const Inference& inference, const std::vector<NodeId>& support, int max_len, size_t limit,
                        std::vector<JointCombination>& out);

// A lookup over one-hot inputs whose value depends on some of them, numbers all, only through a
// signed sum of two or three of their values (`w1 + w2`, `indices - p`): lower_mlp.cpp reads that
// sum linearly and steps along it, gated by the other inputs, and the budget counts those units.
struct SumRead {
  std::vector<size_t> members;  // the inputs summed (slots), and their signs
  std::vector<double> signs;
  // by the other inputs' digits: sum -> a combination that has it
  std::map<std::vector<size_t>, std::map<double, size_t>> levels;
  size_t count = 0;  // (other inputs, sum) pairs
  // A gate per combination of the other inputs and a step pair per further sum.
  size_t units() const { return 2 * count - levels.size(); }
};
// The sum that makes fewest units, fewer than a unit per combination, or none. `values`: each
// input's values (digits index them); `same_output`: whether two combinations write the same.
std::optional<SumRead> find_sum_read(const std::vector<const std::vector<Value>*>& values,
                                     const std::vector<JointCombination>& combinations,
                                     const std::function<bool(size_t, size_t)>& same_output);

// The rewrites (pipeline.cpp lists them in order) take the program and rewrite it in place,
// returning whether they changed it: the driver infers value sets again only after a change.

// Merges equal nodes, folds constants, drops what the output does not need.
bool simplify(Program& program);

// The rewriting passes' copy of a program (every rewrite below):
// every node in order, its inputs remapped to the copy. `replace` sees node `id` with its inputs
// remapped; it may append nodes to `out` (push_node: each reads only nodes already there, so the
// order stays topological; `remap` says where an earlier node went) and returns the node of `out`
// that stands for `id`, or -1 to keep `node` as it is. The output and the named nodes follow.
using ReplaceNode = std::function<NodeId(NodeId id, Node& node, const std::vector<NodeId>& remap, Program& out)>;
Program rewrite_nodes(const Program& program, const ReplaceNode& replace);
inline NodeId push_node(Program& program, Node node) {
  program.nodes.push_back(std::move(node));
  return NodeId(program.nodes.size() - 1);
}
// Appends the nodes a rewrite makes in place of one node of the source, each with that node's span
// (messages and shown names point there) and the name given (none by default).
struct NodeMaker {
  Program& out;
  Span span;
  NodeId make(NodeKind kind, std::vector<NodeId> inputs, std::string name = "") const {
    Node made;
    made.kind = kind;
    made.span = span;
    made.name = std::move(name);
    made.inputs = std::move(inputs);
    return push_node(out, std::move(made));
  }
  NodeId constant(const Value& v) const {
    const NodeId c = make(NodeKind::Constant, {});
    out.nodes[size_t(c)].constant = v;
    return c;
  }
  NodeId map(ElementOp op, std::vector<NodeId> inputs, std::string name = "") const {
    const NodeId m = make(NodeKind::Elementwise, std::move(inputs), std::move(name));
    out.nodes[size_t(m)].op = op;
    return m;
  }
};
// For causal programs, before simplify: `select(indices, indices, <=)`, every key a causal query
// sees, becomes `select(1, 1, ==)`, which reads no s-op (causal_prefixes.cpp).
bool causal_prefixes(Program& program);
// Rewrites sums and differences of means over one selector, each alone, times a number or times one
// shared factor, into one mean (merge_means.cpp).
bool merge_means(Program& program);

// The non-elementwise s-ops (tokens, indices, aggregates, selector widths) an elementwise node is
// a function of, through chains of elementwise maps: one fused lookup table computes it from them.
// Nodes marked in `cut` count as sources too.
std::vector<NodeId> support_of(const Program& program, NodeId id, const std::vector<uint8_t>* cut = nullptr);
// Evaluates the fused elementwise subgraph of `id` for values of its support; false where the
// program is undefined (a missing key, a division by zero).
bool evaluate_fused(const Program& program, NodeId id, const std::vector<NodeId>& support,
                    const std::vector<Value>& support_values, Value& out);
// The same value (of the same kind: the number 1 is not true).
inline bool same_value(const Value& a, const Value& b) { return a.kind == b.kind && a == b; }
// A fused map's value at each of `combinations` of its support's values (digits index the
// support's value sets), and whether it is defined there.
struct MapValues {
  std::vector<Value> value;
  std::vector<uint8_t> defined;
  // Defined at both combinations with the same value, or at neither.
  bool same(size_t a, size_t b) const {
    return defined[a] == defined[b] && (!defined[a] || same_value(value[a], value[b]));
  }
};
MapValues evaluate_on(const Program& program, const Inference& inference, NodeId id, const std::vector<NodeId>& support,
                      const std::vector<JointCombination>& combinations);
// While one is open on this thread, support_of and evaluate_fused keep what they computed for
// `program` (each node's support; each map's value by the support values it was evaluated at), so
// that asking for a chain's maps one after another is linear in the chain's length, not
// quadratic (fused_maps.cpp). `program` must not change while the scope is open.
struct FusedCache;
class FusedCacheScope {
 public:
  explicit FusedCacheScope(const Program& program);
  ~FusedCacheScope();
  FusedCacheScope(const FusedCacheScope&) = delete;
  FusedCacheScope& operator=(const FusedCacheScope&) = delete;

 private:
  std::unique_ptr<FusedCache> cache_;
  FusedCache* previous_;
};
// A text key that tells values apart (the number 1, the string "1", true).
std::string value_key(const Value& v);
// The sentence of the error that made this thread's last evaluate_fused fail ("cannot negate ..."),
// or "" when the failure was no map's error.
std::string last_fused_failure();

// Whether a selector (a tree of select/and/or/not whose comparisons read at most `key_node` on
// the key side and `query_node` on the query side, or maps of them, constants elsewhere) selects
// for these values.
bool selector_holds(const Program& program, NodeId selector, NodeId key_node, const Value& key, NodeId query_node,
                    const Value& query);
// The parts of a selector's top-level `kind` (SelectAnd: its conjuncts; SelectOr: its disjuncts),
// in source order; the selector itself where it is not one.
void flatten_selector(const Program& program, NodeId selector, NodeKind kind, std::vector<NodeId>& out);

// A map whose value, on every combination of its inputs that can occur, does not depend on one of
// them reads a constant there instead (a copy of its fused maps does), so its lookup enumerates
// the other inputs only (prune_inputs.cpp). Tried only where the whole lookup is too large.
// Unchanged when nothing applies.
bool prune_map_inputs(Program& program, const Inference& inference, const CompileOptions& options);

// A selector_width over `A or B or ...` whose parts compare different s-ops cannot be one head;
// when the parts are disjoint (no key satisfies two), its width is the sum of theirs: rewrites
// it so. Unchanged when nothing applies.
bool split_disjoint_widths(Program& program, const Inference& inference);
// What a selector width's head leaves in its scratch dimension for a width of w. A width on its own
// holds BOS's weight, 1/(w+1): BOS scores like one more selected key. The parts of a split width
// are read together along a line u1 + lambda*u2 (project_reads.cpp), where 1/(w+1) is so curved
// that sums w1 + w2 that differ by one land about 1/n^4 apart; so there BOS scores ln Z above a
// selected key, with Z = width_bos_weight = 4n^2, and the scratch holds what the selected keys
// weigh, w/(w+Z): within an eighth of linear, so that along u1 + u2 every sum t lies below every
// sum t + 1, about 7/(8Z) apart (it needs Z > t^2/2 + t/2). And small, at most 1/(4n): steps
// as steep as 1/Z reach about 52n from it (and round to that many ulps of 1, over 2H:
// lower_internal.hpp), where BOS's weight Z/(w+Z), near 1, would take them to 52Z.
double width_bos_weight(const Node& width, int max_len);
double scratch_level(const Node& width, int max_len, double w);
// A head's match score G given a selection's (lower.cpp): ln(n+1) + 8 for a split width's part
// (a selection's is 2 ln(n+1) + 32), the selection's for every other head. A part's read is a
// number the next MLP discretises, and the float32 rounding of its keys' reads, which the scores
// multiply by G, moves it by an error proportional to G (measured: halving G halved most_freq's
// parts' largest error at 16 to 128; ln(n+1) + 8 instead of + 16 takes off about 0.4 more). What a
// smaller G costs is leak: a key that misses one conjunct weighs e^-G of a selected one, and at
// most n of them move u by n e^-G / Z < e^-8 / Z, about 3.4e-4 / Z, where the projection allows
// for e * 4u(1-u), about 4e n / Z (project_reads.cpp): at the lengths where the half-gap nears
// five times that (e about 8e-5, n about 260), under a hundredth of it; at shorter ones the
// half-gap is many times larger (with ln(n+1) + 4 the leak was most of the error measured at 88).
double width_match_score(const Node& width, double selection_score);

// The s-op whose one-hot a head reads for one side of a comparison: the side itself, or the one
// categorical s-op that a map on that side is a function of (the map folds into the head's
// weights); -1 for a constant.
NodeId comparison_source(const Program& program, const Inference& inference, NodeId side);
// The one categorical s-op a map is a function of, where the map folds into the weights of the
// heads that read it (the schedule's rule, which comparison_source follows), else -1: never for a
// map that Inference::from_scratch has written by its own MLP.
NodeId folded_map_source(const Program& program, const Inference& inference, NodeId map);

// `select(k, k, op)` (op one of <, <=, >, >=) over a key k made of one categorical s-op x and the
// position, ordered by x first and the position second (Tracr's tie break `x + i * eps`), becomes
// `select(r, r, <) or (select(r, r, ==) and select(indices, indices, op'))`, r x or its rank in
// that order (tiebreak_keys.cpp): the library's stable sort where k sorted. Checked at every pair of
// (x value, position) pairs; unchanged when nothing applies.
bool tiebreak_keys(Program& program, const Inference& inference, const CompileOptions& options);
// A key made of one s-op x and the position (its support is x and indices, as Tracr's `x + i *
// eps`), evaluated at every (x value, position) pair (tiebreak_keys.cpp): at[a][i] is the key where
// x holds its a-th value at position i. `values_of(x)` gives x's values, or null where x is not one
// to try. None where the support is another or the key is undefined at a pair.
struct PositionKeys {
  NodeId x = -1, indices = -1;
  std::vector<std::vector<Value>> at;
};
std::optional<PositionKeys> keys_by_position(const Program& program, NodeId key, const std::vector<uint8_t>* cut,
                                             int max_len,
                                             const std::function<const std::vector<Value>*(NodeId)>& values_of);
// The library's stable sort of a categorical key whose values are the key or a map of it becomes a
// counting sort: a boolean `indices < count of keys <= v` per key value v and a lookup over them
// (count_sorts.cpp), its comparisons width steps; Tracr's unique sort of number values likewise, its
// runs' first slots found by a shift by one. Bidirectional only. Unchanged when nothing applies.
bool count_sorts(Program& program, const Inference& inference, const CompileOptions& options);
// `indices < selector_width(s)` (and `w > indices`, and the negations `>=`, `<=`) becomes a
// WidthStep node (constructions/construction.hpp): one head and one MLP step at any length
// (constructions/width_step.cpp). Before inference. Unchanged when nothing applies.
bool width_steps(Program& program);
// `select(w, c, op)` of a selector width and a constant (either side) becomes `select(w op c, True,
// ==)` (`!=`: `== c` against False), so the width is read through a map (width_predicates.cpp).
// Unchanged when nothing applies.
bool width_predicates(Program& program);

// A selector conjunct that combines comparisons reading several s-ops on one side with `or` or
// `not` is not a sum of tables over pairs of s-ops: rewrites it to compare maps of one tuple of
// those s-ops (ElementOp::Tuple, an MLP of its own), which one head scores as a table over tuple
// values (pair_selectors.cpp). Unchanged when nothing applies; a tuple with more values than
// kValueSetLimit is refused at the selector.
bool pair_selector_sides(Program& program, const Inference& inference);
// An output that no head or MLP computes (tokens, indices, a constant) becomes an identity lookup
// of it, so that it has output dimensions of its own for the tied unembedding (output_copy.cpp).
bool copy_output(Program& program, const Inference& inference);

// How an MLP job reads one of its inputs.
enum class ReadKind {
  OneHot,   // a categorical s-op's one-hot (or a map of one folded into the read)
  Numeric,  // a numerical s-op's dimension, through its finite value set
  Scratch,  // a selector width's scratch value (scratch_level), discretised into w
};

struct MlpJob {
  NodeId node = -1;                 // the s-op it materialises
  std::vector<NodeId> inputs;       // its support
  std::vector<ReadKind> reads;      // by input
  bool erase_scratch = false;       // a selector width's eraser: writes -scratch
  // > 0: two numeric reads, read as one along u1 + projected_lambda*u2 (the schedule's line)
  double projected_lambda = 0;
  bool projected() const { return projected_lambda > 0; }
};

// Two numeric reads of one lookup read as one, u1 + lambda*u2 (project_reads.cpp). A point is a
// pair of values that occurs; points of one group share the one-hot inputs' values, and
// `output` names what the lookup writes there (equal names, equal outputs).
struct ProjectedPoint {
  double u1 = 0, u2 = 0;
  int output = 0;
  std::vector<Value> assignment;  // every input's value, by support
};
struct ProjectedGroup {
  std::vector<size_t> onehot_digits;  // the one-hot inputs' values (indices into their value sets)
  std::vector<ProjectedPoint> points;
};
struct ReadProjection {
  double lambda = 1;
  double half_gap = 0;  // smallest half-distance between neighbours with different outputs, / max(1, lambda)
};
// The smallest half-gap a projection may have at max length n, where the widths' heads compare
// embeddings only and where they compare what MLPs wrote (float32 rounding: project_reads.cpp),
// for scratch reads whose u(1-u) reaches 1/4; the second form scales it by the largest 4u(1-u)
// of the lookup's scratch reads.
double min_projected_half_gap(bool after_mlp, int max_len);
double min_projected_half_gap(const Program& program, const Inference& inference, const std::vector<NodeId>& support,
                              const std::vector<ReadKind>& reads, int max_len);

// The groups of points of a lookup over `support` read with `reads` (exactly two not OneHot):
// `output_of` names each assignment's output, -1 where the lookup is undefined (such
// assignments cannot occur and are left out). False when the combinations exceed the limits.
bool projected_points(const Program& program, const Inference& inference, const std::vector<NodeId>& support,
                      const std::vector<ReadKind>& reads, int max_len,
                      const std::function<int(const std::vector<Value>&)>& output_of,
                      std::vector<ProjectedGroup>& groups);
// The lambda that spreads the groups' points widest, when its half-gap is at least
// `min_half_gap` and no two points with different outputs coincide.
std::optional<ReadProjection> project_reads(const std::vector<ProjectedGroup>& groups, double min_half_gap);
// The half-gap of the groups' points along one lambda; negative where points with different
// outputs coincide.
double projected_half_gap(const std::vector<ProjectedGroup>& groups, double lambda);
// The lambda along which a lookup of `node` over `support` with `reads` (two numeric) reads its
// two numeric inputs as one, if any.
std::optional<double> projection_for(const Program& program, const Inference& inference, NodeId node,
                                     const std::vector<NodeId>& support, const std::vector<ReadKind>& reads,
                                     int max_len);

// An output map written by the embeddings instead of an MLP (constructions/embedded_map.cpp): a map
// of the tokens (source: the Tokens node), of the positions (source: indices), of nothing
// (source -1, over positions), or of both (Pairs: source the tokens, position_source indices).
struct EmbeddedMap {
  enum class Over : uint8_t { Tokens, Positions, Pairs } over = Over::Tokens;
  NodeId source = -1;
  NodeId position_source = -1;  // Pairs: the indices node
  // Over tokens, where output values are also input symbols (print alike): those tokens' rows are
  // an input and an output at once, written through pairs of dimensions that ln_f's gains weigh
  // +1 and -1 (embedded_map.cpp). Each output value's level along the map's chains between such
  // tokens, by value index; empty for the plain rows.
  std::vector<int> tied_levels;
  // Pairs: the scores each input symbol's row (by vocabulary index) and each position's row (by
  // index) write for each output token (by the output's distinct dimensions, in order); the right
  // token's logit is their sum plus the tied rows' terms (embedded_map.cpp).
  std::vector<std::vector<int64_t>> symbol_scores, position_scores;
  std::vector<std::vector<int>> right_token;  // Pairs: F(t, i)'s output token, by symbol and position
  // Whether each output dimension has a partner that ln_f weighs -1 (tied tokens, or pairs).
  bool paired() const { return over == Over::Pairs || !tied_levels.empty(); }
  bool reads(NodeId id) const { return id >= 0 && (id == source || id == position_source); }
  static EmbeddedMap of(Over over, NodeId source = -1, NodeId position_source = -1) {
    EmbeddedMap map;
    map.over = over;
    map.source = source;
    map.position_source = position_source;
    return map;
  }
  std::string why() const;  // for --explain
};
// The output's embedded map, where it can be one: a numerical map of one of the above with a known
// value set, or a categorical one whose values, over tokens, are no input symbol's or, under
// LayerNorm, are some but the map takes no such token around a cycle of two or more (nor along a
// chain of more than 64 steps: embedded_map.cpp).
std::optional<EmbeddedMap> embedded_map(const Program& program, const Inference& inference,
                                        const CompileOptions& options);

// A selector width of this many values or more (max length 63 on, where its one-hot would be ten
// times a number group's 6 dimensions) avoids its one-hot wherever it can: as the output, a number
// the unembedding reads (constructions/number_output.cpp); read through a map with fewer values,
// that map written by an MLP from the width's 1/(w+1) (schedule.cpp). Below it a width read by
// others keeps its one-hot (about as large as the group), and one that is the output is read by
// the unembedding from its 1/(w+1) (constructions/scratch_output.cpp).
constexpr int kLongWidthValues = 64;

// Whether the output is a selector width held as its number group and read as a number by the
// unembedding (constructions/number_output.cpp), and why, for --explain.
bool number_output(const Program& program, const CompileOptions& options);
std::string number_output_why();

// Whether `v` prints as one of the input symbols: an output value's token is then an input token
// too, whose embedding row is also its unembedding row.
bool prints_as_symbol(const Value& v, const CompileOptions& options);
// Whether one of `values` does.
bool some_value_prints_as_symbol(const std::vector<Value>& values, const CompileOptions& options);

// Whether the output is a selector width of few enough values that the unembedding reads it from
// the 1/(w+1) its head writes (constructions/scratch_output.cpp: no one-hot, no MLP), and why.
bool scratch_output(const Program& program, const Inference& inference, const CompileOptions& options);
std::string scratch_output_why();

struct Schedule {
  int blocks = 0;  // 0 where the embeddings compute everything (an embedded map)
  std::optional<EmbeddedMap> embedded;  // the output's, where it has one
  bool output_from_scratch = false;     // the output read from its width's scratch (scratch_output)
  std::vector<int> block_of;            // by NodeId: the block that writes it (0: embedding, -1: none)
  std::vector<int> ready;               // by NodeId: time its residual value is complete (2b-1 attn, 2b MLP)
  std::vector<uint8_t> materialised;    // by NodeId: has residual dimensions
  std::vector<std::vector<NodeId>> heads;   // by block-1: Aggregate / SelectorWidth nodes (a prefix mean twice: its two heads)
  std::vector<std::vector<MlpJob>> mlps;    // by block-1
  std::vector<std::string> why;         // by NodeId, for --explain
};

Schedule schedule(const Program& program, const Inference& inference, const CompileOptions& options);

struct Allocation {
  std::vector<std::string> labels;
  int one = -1, bos = -1, pad = -1, zero = -1, anchor = -1;
  double one_value = 1.0;  // what `one` holds at every position
  // Entries of kTokenAmplitude in every token embedding row: 2 (the input one-hot or `bos`, and an
  // output value's dimension, `pad` or `zero`) or 1 (the one-hot alone). Without LayerNorm the rows
  // need no equal sums and this is 1, BOS's row `bos` alone. allocate.cpp's token_rows.
  int token_row_entries = 2;
  std::map<NodeId, std::vector<int>> onehot;  // categorical s-op -> a dimension per value
  // An embedded map with tied tokens: the partner of each output value's dimension, by value index
  // (constructions/embedded_map.cpp).
  std::vector<int> unembed;
  std::map<NodeId, int> numeric;              // numerical s-op -> its dimension
  std::map<NodeId, int> scratch;              // selector width -> its scratch dimension (scratch_level)
  // A count output read from its scratch whose values print as input tokens too
  // (constructions/scratch_output.cpp, "Tied tokens"): the scratch's partner, a constant and its
  // partner, and the input rows' balance; -1 otherwise.
  int scratch_partner = -1, scratch_constant = -1, scratch_constant_partner = -1, scratch_balance = -1;
  // indices / length -> its number group: (v-c)/e, -(v-c)/e, (v-c)^2/e^2, -(v-c)^2/e^2, y, -y with
  // y^2 = 3 - the squares before it: sum 0 and sum of squares 6 whatever v is, so LayerNorm
  // sees the same moments at every position (c, e: PositionNumbers::centre, extent).
  std::map<NodeId, std::vector<int>> number;
  std::map<NodeId, std::vector<int>> tokens;  // Tokens node -> a dimension per vocabulary symbol
  // ln(i + 1/2) by position, for width steps' heads (constructions/width_step.cpp): u, -u, y, -y with
  // u = ln(i + 1/2) / log_position_scale and y^2 = 1 - u^2, balanced like a number group. Empty
  // where nothing reads it.
  std::vector<int> log_position;
  double log_position_scale = 1;
  // The one-hots of an index's two digits (PositionNumbers::digit_base), for prefix means' heads
  // (constructions/prefix_mean.cpp): high digit i / base, low digit i % base. Empty where none reads them.
  std::vector<int> digit_high, digit_low;
  std::vector<double> log_position_group(int index) const;  // BOS (index -1) holds u = 0
  int width() const { return int(labels.size()); }
};

// Amplitude of the token one-hot and of the pad/output entries of the token embeddings (lower.cpp:
// every embedding row has as many entries of this size, Allocation::token_row_entries, so the tied
// unembedding is fair).
constexpr double kTokenAmplitude = 0.1;
// The constant anchor dimension that keeps LayerNorm's scale steady when numerical values vary.
constexpr double kAnchor = 400.0;

Allocation allocate(const Program& program, const Inference& inference, const Schedule& schedule,
                    const CompileOptions& options);

// A matrix over residual dimensions, row-major: rows x cols.
struct Matrix {
  int rows = 0, cols = 0;
  std::vector<double> data;
  Matrix() = default;
  Matrix(int r, int c) : rows(r), cols(c), data(size_t(r) * c, 0.0) {}
  double& at(int r, int c) { return data[size_t(r) * cols + c]; }
  double at(int r, int c) const { return data[size_t(r) * cols + c]; }
};

struct LoweredHead {
  NodeId node = -1;
  Matrix wq, wk;  // (C, dqk), scores are q.k (no 1/sqrt(d) yet: assemble folds it in)
  Matrix wv;      // (C, dv)
  Matrix wo;      // (dv, C)
};

struct LoweredBlock {
  std::vector<LoweredHead> heads;
  double ln1_gain = 1, ln2_gain = 1;  // uniform LayerNorm gains (bias 0)
  Matrix fc;                          // (C, I)
  std::vector<double> fc_bias;        // (I)
  Matrix proj;                        // (I, C)
  std::vector<double> proj_bias;      // (C)
  std::vector<std::string> unit_labels;  // (I)
};

struct Lowered {
  int width = 0;  // n_embd
  std::vector<LoweredBlock> blocks;
  double lnf_gain = 1;
  std::vector<double> lnf_gains;  // per dimension, where they differ (an embedded map with tied tokens)
  std::vector<std::string> vocab;           // token strings: BOS, input symbols, output-only values
  std::vector<std::vector<std::pair<int, double>>> wte;  // by token: sparse residual row
  std::vector<std::vector<std::pair<int, double>>> wpe;  // by position (BOS = 0)
  std::vector<int> input_ids;
  std::vector<int> output_token_of_value;  // categorical output: token id by output value index
  double min_mlp_margin = 1e30;             // smallest |pre-activation| margin designed in
};

// The compile budget (budget.cpp). A model's parameters are base + n * per_unit, n the MLP units
// of its widest block: everything but the MLPs is known once the residual is allocated, and the
// lowering counts the units as it builds them (UnitCount, lower_internal.hpp), so the budget is
// the model's own count. check_budget refuses before lowering where the base alone passes
// options.max_parameters; lower() refuses once its units do, naming the s-op that contributes most.
struct ModelSize {
  size_t base = 0;      // with no MLP units
  size_t per_unit = 0;  // what one more unit in the widest block adds
  int blocks = 0;
  double per_dimension = 0;  // what one residual dimension costs (a row of every matrix on it)
  // A model with blocks has at least one unit (assemble.cpp: a zero-width MLP crashes peers).
  size_t parameters(size_t units) const { return base + per_unit * std::max<size_t>(units, 1); }
  // The most units the widest block may have for the model to stay within `limit` (0: none).
  size_t most_units(size_t limit) const;
};
ModelSize model_size(int width, int blocks, int vocab_size, int max_len);
// The model's size before lowering: the padded residual width and the vocabulary as lower() makes
// them.
ModelSize planned_size(const Program& program, const Inference& inference, const Schedule& schedule,
                       const Allocation& allocation, const CompileOptions& options);
void check_budget(const Program& program, const Inference& inference, const Schedule& schedule,
                  const Allocation& allocation, const CompileOptions& options);
struct UnitCount;
[[noreturn]] void refuse_over_budget(const Program& program, const Allocation& allocation, const ModelSize& size,
                                     const UnitCount& count, const CompileOptions& options);

// The inputs verification checks: every input of each length up to exhaustive_len, the longest
// whose running total stays within options.exhaustive_limit, then options.samples inputs at each
// longer length up to verified_len (--verify-len, at most --max-len): each symbol repeated, then
// random ones.
struct VerificationLengths {
  int verified_len = 0, exhaustive_len = 0;
  double vocab_size = 0;
  long samples = 0;
  double inputs_at(int n) const { return n <= exhaustive_len ? std::pow(vocab_size, n) : double(std::max(0L, samples)); }
};
VerificationLengths verification_lengths(const CompileOptions& options);

// The verification's cost, estimated once the model is assembled: the inputs it will check
// (verification_lengths) and the seconds they take: a cost per input and the FLOPs of the
// verification forward over the model's nonzero blocks at an effective rate (budget.cpp says how
// both were measured).
struct VerificationEstimate {
  double inputs = 0, flops = 0, seconds = 0;
  std::vector<double> seconds_by_length;  // of one input of each length (index: length)
};
// Nothing where options.verify is off.
VerificationEstimate estimate_verification(const Model& model, const CompileOptions& options);
// With the verification forward already built (verify.cpp's progress).
VerificationEstimate estimate_verification(const VerificationBackend& forward, const CompileOptions& options);

Lowered lower(const Program& program, const Inference& inference, const Schedule& schedule,
              const Allocation& allocation, const CompileOptions& options);
// The model's vocabulary as lower() makes it: BOS, the input symbols, then the output's values
// that are not input symbols (vocab, input_ids, output_token_of_value).
void build_vocabulary(const Program& program, const Inference& inference, const CompileOptions& options,
                      Lowered& out);

Model assemble(const Program& program, const Inference& inference, const Allocation& allocation,
               const Lowered& lowered, const CompileOptions& options);

// metadata["sops"] and metadata["heads"]: where each materialised s-op lives (its residual
// dimensions, the stage that completes it, its encoding, values and source) and which s-op and
// selector each head computes, so a model file can be drawn and its residual decoded without the
// compiler (runtime/residual_trace.hpp reads them; the schema is there).
nlohmann::json placement_metadata(const Program& program, const Inference& inference, const Schedule& schedule,
                                  const Allocation& allocation, const Lowered& lowered, int max_len);

// Runs the model against the interpreter of `source`, the program as the user wrote it (so that a
// rewrite by a pass is checked too), on options.verify_len and options.samples, and fills the
// verification fields of the report. `program` is the one compiled (its trace locates a mismatch).
void verify(const Program& source, const Program& program, const Inference& inference, const Schedule& schedule,
            const Allocation& allocation, const Model& model, const CompileOptions& options,
            CompileReport& report);

// Text forms for --dump-after and --explain.
std::string dump_inference(const Program& program, const Inference& inference);
// A node's kind as the dumps name it ("map", "aggregate", "width_step", ...).
const char* node_kind_name(const Node& node);
// Its kind as the model's s-op and head metadata name it (runtime/residual_trace.hpp's schema:
// a width step or part is a "selector_width").
const char* schema_kind(const Node& node);
// The program's nodes, under "# TITLE: " (the pass that made it).
std::string dump_program(const Program& program, const std::string& title = "program");
std::string dump_schedule(const Program& program, const Schedule& schedule);
std::string dump_allocation(const Allocation& allocation);
std::string dump_budget(const Program& program, const Inference& inference, const Schedule& schedule,
                        const Allocation& allocation, const CompileOptions& options);
std::string dump_lowered(const Lowered& lowered, const Allocation& allocation);
std::string explain(const Program& program, const Inference& inference, const Schedule& schedule);
// --explain's lines for the s-ops the user named that a rewrite left out of the program (name, the
// pass), each named as the source names it.
std::string explain_rewritten(const Program& source, const std::vector<std::pair<std::string, std::string>>& away);

}  // namespace raspc::compiler
