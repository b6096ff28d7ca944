// The prefix mean, a construction: a mean over `select(indices, indices, <=)` in bidirectional
// mode as two heads over the digits of the position, O(sqrt(n)) dimensions where the table is n.
//
// Why two heads. One head that takes the exact mean over the keys k <= q scores every selected
// key alike and every other far below, so its score matrix, restricted to the keys, is a step in
// k - q: its rank is about n, and GPT-2's d_head with it. Write an index as two digits, i = a*B + b
// (a = i / B, b = i % B, B about sqrt(n)). The keys at or before q are two disjoint parts:
//   part 1: k_a < q_a                       count B*q_a
//   part 2: k_a == q_a and k_b <= q_b        count q_b + 1
// Each part is a sum of bilinear tables over one digit (a step over A high digits, equality of the
// high digits plus a step over B low ones), so its head needs A + B dimensions. Each head also
// gives BOS, whose value is 0, the weight of the other part's keys, read from the query's digits:
// part 1's BOS scores ln(q_b + 1) above a selected key, part 2's ln(B*q_a). Both heads then divide
// by the same q + 1 keys, part 1 writes S1/(q+1) and part 2 S2/(q+1) into the mean's dimension, and
// their sum is the mean S/(q+1). (Where q_a = 0 part 2 selects every key and its BOS scores 2G
// below a selected key.) A key outside a part scores G (part 1) or G and 2G (part 2) below, so
// the n keys outside weigh at most n e^-G of the selected ones (G = 2 ln(n+1) + 32): below 1e-14.
//
// Why only `<=` and bidirectional mode: `<` selects no key at position 0, where BOS would have to
// take every weight in both heads, and the ln(weight) it scores is not a sum of a function of each
// digit there; `>=` and `>` count the keys after q, which depend on the length of the input. In
// causal mode `<=` is `full_s` (causal_prefixes.cpp).
#include <algorithm>
#include <cmath>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {

std::pair<int, int> prefix_digits(int max_len) {
  const int base = std::max(1, int(std::ceil(std::sqrt(double(max_len)))));
  return {base, (max_len + base - 1) / base};
}

bool prefix_digits_candidate(const Program& program, NodeId selector, const CompileOptions& options) {
  const Node& node = program.node(selector);
  if (options.mode != Mode::Bidirectional || node.kind != NodeKind::Select || node.comparison != Comparison::Le)
    return false;
  if (program.node(node.inputs[0]).kind != NodeKind::Indices || program.node(node.inputs[1]).kind != NodeKind::Indices)
    return false;
  // Smaller than the table: the two digits' one-hots against the index's.
  const auto [base, count] = prefix_digits(options.max_len);
  return base + count < options.max_len;
}

std::string prefix_digits_why(int max_len) {
  const auto [base, count] = prefix_digits(max_len);
  return "position digits: read only by means, each is two heads over an index's digits i / " + std::to_string(base) +
         " and i % " + std::to_string(base) + " (" + std::to_string(base + count) +
         " dimensions in the position embedding instead of one per position), the keys before the query's "
         "high digit and those of its high digit up to its own; BOS weighs as the other part's keys, so both "
         "heads divide by i + 1 and add up to the mean";
}

std::string prefix_mean_refusal(const Program& program, const Inference& inference, NodeId selector) {
  for (NodeId user = 0; user < NodeId(program.nodes.size()); ++user) {
    const Node& node = program.node(user);
    if (!inference.info[size_t(user)].needed) continue;
    if (std::find(node.inputs.begin(), node.inputs.end(), selector) == node.inputs.end()) continue;
    if (node.kind != NodeKind::Aggregate || node.inputs[0] != selector ||
        inference.info[size_t(user)].encoding != Encoding::Numerical)
      return "one-hot: something besides a mean reads it";
  }
  return "";
}

HeadScores prefix_mean_scores(const LowerContext& ctx, int part) {
  const std::vector<int>& high = ctx.allocation.digit_high;
  const std::vector<int>& low = ctx.allocation.digit_low;
  const int A = int(high.size()), B = ctx.inference.numbers.digit_base;
  const double G = ctx.match_score;
  // A selected key scores 0 (no term reads it) and BOS ln of its weight, a few units at most, so
  // float32 rounds the scores that count to about 1e-7 of a unit; the keys outside score -G or
  // less. (Scoring G per match instead rounds every selected key's score at 2G, about 90 at
  // --max-len 1,024: measured, frac_prevs' worst numerical error at 8 was 2.8e-5, where this gives
  // 9.7e-6.)
  HeadScores scores;
  if (part == 0) {
    // -G where k_a >= q_a: key digit j against the query's digits up to j. BOS: ln(q_b + 1).
    for (int j = 0; j < A; ++j) {
      Functional up_to;
      for (int i = 0; i <= j; ++i) up_to.push_back({high[size_t(i)], -G});
      scores.terms.push_back({up_to, ctx.unit(high[size_t(j)])});
    }
    for (int b = 0; b < B; ++b) scores.bos_score.push_back({low[size_t(b)], std::log(double(b) + 1.0)});
    return scores;
  }
  // -G where k_a != q_a, and -G where k_b > q_b. BOS: ln(B q_a), or -2G where q_a = 0.
  for (int j = 0; j < A; ++j) {
    Functional other;
    for (int i = 0; i < A; ++i)
      if (i != j) other.push_back({high[size_t(i)], -G});
    scores.terms.push_back({other, ctx.unit(high[size_t(j)])});
  }
  for (int b = 0; b < B; ++b) {
    Functional below;
    for (int i = 0; i < b; ++i) below.push_back({low[size_t(i)], -G});
    if (!below.empty()) scores.terms.push_back({below, ctx.unit(low[size_t(b)])});
  }
  for (int j = 0; j < A; ++j)
    scores.bos_score.push_back({high[size_t(j)], j == 0 ? -2.0 * G : std::log(double(B) * j)});
  return scores;
}

void write_position_digits(const LowerContext& ctx, Lowered& out) {
  const std::vector<int>& high = ctx.allocation.digit_high;
  const std::vector<int>& low = ctx.allocation.digit_low;
  if (high.empty()) return;
  const int B = ctx.inference.numbers.digit_base;
  // BOS (row 0) has no digits: its scores are its own (bos_score), and no key term reads it.
  for (size_t p = 1; p < out.wpe.size(); ++p) {
    const int i = int(p) - 1;
    out.wpe[p].push_back({high[size_t(i / B)], 1.0});
    out.wpe[p].push_back({low[size_t(i % B)], 1.0});
  }
}

}  // namespace raspc::compiler
