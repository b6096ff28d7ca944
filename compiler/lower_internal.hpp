// What the lowering files share: reading s-ops out of the residual stream, and the LayerNorm
// bookkeeping that makes those reads exact.
//
// A read is a linear functional over residual dimensions ("Functional"). Under LayerNorm every
// gain is one constant g and every bias 0, and a functional f is written into a weight column as
// f_j on its dimensions and -sum(f) on the `zero` dimension (never written, so after LayerNorm it
// holds exactly minus the normalised mean). The column then reads g/sigma * f.x: the mean drops
// out, and with g = the nominal sigma (the residual's spread when every categorical s-op is
// one-hot and every numerical one is 0) the read is f.x exactly at every position where nothing
// numerical is live. Biases are read from the `one` dimension so they scale along.
#pragma once

#include <cmath>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir.hpp"

namespace raspc::compiler {

using Functional = std::vector<std::pair<int, double>>;

// How far from zero a step's pre-activation stays (|k (u - t)| at the nearest value, at least):
// GELU is ReLU there to float precision.
constexpr double kStepMargin = 10.5;
// A step of a lookup is (relu(z + H) - relu(z - H)) / 2H with H = kStepHalfWidth, and |z| at
// least kStepReach = H + 10 at every value its read can take, so both units stay 10 or more from
// 0. On its on side the two units are about as large as z, up to the step's reach (a few hundred
// at max length 100), and they cancel only to float32's rounding of that; dividing by 2H
// divides that rounding too, where widening the margin by H multiplies the reach by (H + 10)/10.5
// only: a net 13 times less at H = 16 (and 1/2H = 1/32 scales exactly). Measured over most_freq's
// key one-hots at max length 96: 3.1e-5 with H = 1/2, 1.9e-6 (numpy) to 5.8e-6 (raspc) with 16.
constexpr double kStepHalfWidth = 16.0;
constexpr double kStepReach = kStepHalfWidth + kStepMargin - 0.5;

struct CategoricalView {
  std::vector<Value> values;
  std::vector<Functional> read;  // by value: reads 1 where the s-op holds it, else 0
};

struct LowerContext {
  const Program& program;
  const Inference& inference;
  const Schedule& schedule;
  const Allocation& allocation;
  const CompileOptions& options;
  int width = 0;  // n_embd, padding included
  double match_score = 0;  // G: a matching key outscores a non-matching one by this much

  const SopInfo& info(NodeId id) const { return inference.info[size_t(id)]; }
  bool is_output_token(const Value& v) const;  // an output value that is also an input symbol

  // The one-hot of a categorical s-op, or of a map of one folded into the read.
  CategoricalView categorical_view(NodeId id) const;
  // The number an s-op holds, read linearly (a categorical one through its values' numbers).
  Functional numeric_view(NodeId id) const;
  Functional unit(int dim, double scale = 1.0) const { return {{dim, scale}}; }
  Functional bos_read() const { return unit(allocation.bos, 1.0 / kTokenAmplitude); }

  // A number group's entries for value v (ir.hpp, Allocation::number), and reads of v and of
  // (v - centre)^2 from the group of `source` (indices, or length through its last index).
  std::vector<double> number_group(double v) const;
  Functional number_value(NodeId source) const;
  Functional centred_square(NodeId source) const;
  // The integer an affine form over indices and length holds, read linearly.
  Functional affine_value(const AffineForm& form, NodeId length) const;
  // The `indices` whose number group the position embedding carries (-1 where none does).
  NodeId indices_number() const;

  // Writes `f * scale` into column `col` of a (C, k) read matrix, with the zero-dimension trick.
  void put_column(Matrix& m, int col, const Functional& f, double scale = 1.0) const;
};

// The residual at a position seen through a LayerNorm with uniform gain: y = gain*(x-mean)/sigma.
std::vector<double> layer_norm(const std::vector<double>& x, double gain, bool enabled);
// x^T m for a (C, k) matrix.
std::vector<double> read_through(const Matrix& m, const std::vector<double>& y);

double gelu(double z);

// A head's scores: a sum of terms q(query) . k(key), and what BOS must score as a key (a
// functional of the query).
struct Term {
  Functional query, key;
};
struct HeadScores {
  std::vector<Term> terms;
  Functional bos_score;
  // Where not empty, BOS is instead read as a key holding these values of the terms' key sides,
  // and scores what such a key would (bos_score is then unused).
  std::vector<double> bos_key;
};
Functional scaled(const Functional& f, double s);
// The score terms of a selector's conjuncts but `skip`, each match scoring G, and their number
// (lower_head.cpp: a table over one key s-op and one query s-op a conjunct).
std::vector<Term> selector_terms(const LowerContext& ctx, NodeId selector, double G, NodeId skip, int& conjuncts);
// The scores of a head that reads a numerical selector, or of `length`'s head (its last index),
// as constructions/numerical_selector.cpp writes them; nothing for any other head.
std::optional<HeadScores> numerical_selector_scores(const LowerContext& ctx, NodeId head);

// The scores of part 0 or 1 of a prefix mean's two heads, and the position digits they read in
// the position embedding (constructions/prefix_mean.cpp).
HeadScores prefix_mean_scores(const LowerContext& ctx, int part);
void write_position_digits(const LowerContext& ctx, Lowered& out);
// Writes the output's embedded map into the embeddings' rows (constructions/embedded_map.cpp).
void write_embedded_map(const LowerContext& ctx, const EmbeddedMap& map, Lowered& out);
// ln_f's gains for tied tokens' pairs (constructions/embedded_map.cpp, scratch_output.cpp): `gain`
// on the dimensions of `plus`, -`gain` on those of `minus`, 0 on every other.
void set_paired_lnf_gains(const LowerContext& ctx, const std::vector<int>& plus, const std::vector<int>& minus,
                          double gain, Lowered& out);
// Writes the output tokens' rows that read a width output's number group (constructions/number_output.cpp).
void write_number_output(const LowerContext& ctx, Lowered& out);
// Writes the output tokens' rows that read a width output's scratch (constructions/scratch_output.cpp);
// `lnf_sigma`: the nominal scale ln_f divides the residual by, which tied rows' gains allow for.
void write_scratch_output(const LowerContext& ctx, double lnf_sigma, Lowered& out);

// How ln_2 scales every read when the selector widths' scratch values read hold `scratch`
// (everything else nominal): lower_mlp.cpp.
double read_scale(const LowerContext& ctx, std::initializer_list<double> scratch, double sum, double square,
                  double gain);

// Heads of one block; `bos_in` is the BOS position's residual entering the block and `gain` ln_1's.
std::vector<LoweredHead> lower_heads(const LowerContext& ctx, const std::vector<NodeId>& heads,
                                     const std::vector<double>& bos_in, double gain);
// Q/K dimensions a head needs (terms plus the two BOS terms), and V dimensions.
std::pair<int, int> head_dimensions(const LowerContext& ctx, NodeId head);
// A selection's match score G at max length n: 2 (ln(n+1) + 16) (compiler.md, "Why the gap is enough").
double selection_match_score(int max_len);
// n_embd: the allocation's width, widened where a block's heads, n_head of equal d_head, need more
// Q/K or V dimensions than it gives each (the budget estimates with it too).
int padded_width(const LowerContext& ctx);

// The compile budget's count: the MLP units the lowering builds, against --max-parameters as they
// are built. The unit that passes the limit stops the lowering (BudgetPassed, refused by lower():
// budget.cpp), before any matrix is made and without enumerating the rest of an oversized model.
struct BudgetPassed {};
struct UnitCount {
  size_t most_units = 0;  // the most units the widest block may have within the limit (no limit: max)
  size_t widest = 0;      // the most units of a block so far
  size_t in_block = 0;    // units of the block being lowered
  int block = 0;          // the block being lowered (0-based)
  NodeId making = -1;     // the s-op whose job group is being lowered
  std::map<NodeId, size_t> by_node;  // units by the s-op whose job group made them

  void add() {
    ++by_node[making];
    if (++in_block > most_units) throw BudgetPassed{};
  }
};
// The MLP of one block; `nominal_sum`/`nominal_square` describe ln_2's input at a normal position
// with every numerical value at 0, and `gain` is ln_2's gain. Its units are counted in `count`;
// past the limit the block gets none (count.over).
void lower_mlp(const LowerContext& ctx, const std::vector<MlpJob>& jobs, double nominal_sum,
               double nominal_square, double gain, LoweredBlock& block, double& min_margin, UnitCount& count);

}  // namespace raspc::compiler
