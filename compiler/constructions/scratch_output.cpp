// Counts to tokens from one dimension: an output that is a selector width of few values (hist's
// count, make_count, a rank at Tracr's lengths) is read by the tied unembedding straight from the
// 1/(w+1) its head writes into `NAME.scratch`, instead of an MLP that turns 1/(w+1) into a one-hot
// of the width's values and erases the scratch. The output then costs one residual dimension and
// no MLP: hist at max length 5 is 15 -> 10 dimensions and 1,553 -> 691 parameters (8 and 489 with
// the `pad` and the anchor it then needs no more: allocate.cpp), at 16 5,568 -> 665.
//
// Why the right token wins. With s = 1/(w+1) in the scratch dimension and s_k = 1/(k+1) for each
// output value k, output token k's row is A * (2 s_k * [scratch] - s_k^2 * [one]), put through the
// zero dimension as every read is (lower.cpp: LayerNorm's mean cancels), so after ln_f its logit is
//     c A (2 s_k s - s_k^2) = c A (s^2 - (s - s_k)^2),     c = (50 / e) (sigma_nominal / sigma),
// the tangent at s_k of the convex s^2: the largest at s_k = s, ahead of every other k by at least
// c A delta^2, delta the smallest gap between two values' s_k. sigma is the position's own
// LayerNorm scale: it multiplies every logit alike, so the argmax holds at any sigma (the scratch
// value left in the residual moves sigma: by a few millionths against an anchor, by up to a few
// percent without one, least where s is smallest and the counts closest). A = 0.08 / delta^2
// makes that margin 40 (ln_f's one-hot margin is 50 (1 - 2e)), as number_output.cpp's. An input
// token's logit, from its row {token e} (and `pad` e where the model has one), is at most about
// 10; the right output's is c A s_w^2 >= 40 s_min^2 / delta^2, at least 160 with delta capped at
// s_min / 2.
//
// The price is float32 and the head's error. The logits that compete near the argmax are of
// order c A s^2 and their margin c A delta^2 is about c A s^4 there (delta ~ s^2 between
// neighbouring counts), so the rounding of those products, 6e-8 of c A s^2 each, stays a
// thousandth of the margin while s^2 > 1e-4 or so; the softmax gives s to about 1e-7 of itself.
// Measured at max length 62, the longest this construction takes (from 64 values on,
// number_output.cpp does): 40 +- 0.03 on the inputs of one token repeated (w = 62, and 61 beside
// one other token), which are the closest pairs and which sampled verification rarely draws; 40.19
// in a model without an anchor (allocate.cpp), where the count moves sigma a little more.
// kMinGap is that length's gap, 1/(63 * 64).
//
// Tied tokens. Where output values print as input symbols (hist over the digits), the token of
// count 3 is also the input "3": its row is an input row, and the entries above would land in the
// residual stream at every position holding a 3, in the scratch and in `one`, which the heads read.
// So such a model reads the count through pairs of dimensions that ln_f weighs +G and -G (every
// other dimension 0, as embedded_map.cpp's tied tokens): the scratch S beside its partner
// `NAME.unembed` U, and a constant O (`NAME.unembed.one`, 1 at every position, from the position
// embedding) beside its partner O' (`NAME.unembed.-one`). Output token k's row writes a_k =
// 2 kappa s_k into S and U and b_k = -kappa s_k^2 into O and O'; an input token's row adds its
// one-hot and, in `NAME.unembed.balance`, -2 (a_k + b_k), so that every input row keeps the sum it
// had. At a position whose own token is t, x_S = a_t + s and x_U = a_t, x_O = b_t + 1 and x_O' = b_t,
// so token k's logit is
//     G/sigma * (a_k (x_S - x_U) + b_k (x_O - x_O')) = (G kappa / sigma) (2 s_k s - s_k^2),
// the same tangents, whatever t wrote: its own entries cancel in each pair, and ln_f's mean cancels
// too (each row's gains sum to 0 over its entries). Every other token scores 0 (its entries sit
// where ln_f's gain is 0), below the right count's (G kappa / sigma) s_w^2 >= 4 * 40. G =
// 40 sigma / (kappa delta^2) gives the margin 40 at the nominal sigma. kappa = 1e-6 keeps what an
// input row writes small: the scratch reads s + a_t, so `run --trace` decodes a count of 62 as
// 62 +- 0.008 (a reading within 1e-3 of a value, relative above 1, shows that value), and the
// rows' squares move the first block's LayerNorm scale by about 1e-11 of itself. The float32
// argument above holds unchanged: the pairs' products are of the size the zero dimension's were
// (ln_f's mean against the tangents' scale), and G (3e10 at max length 6, 1e12 at 16, 2e14 at 62)
// is only a factor of the weights. It costs four dimensions, where the one-hot it replaces costs
// one per count and an MLP: hist over the digits at max length 6 is 901 parameters (1,754 with the
// one-hot), at 62 2,245 (48,290).
//
// Only under LayerNorm (without it the margin would need A = 40 / delta^2 itself, past float32's
// comfort; and tied tokens need ln_f's signed gains), for a plain selector width (not a width step
// or a split width's part, whose scratch holds something else), categorical, and where nothing
// reads the width as a one-hot (it is the output, so nothing else reads it at all).
#include <algorithm>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {
namespace {

// The smallest gap between two values' 1/(w+1) at which the scratch is read (see above): that of
// counts up to 63, where number_output.cpp's number group takes over.
constexpr double kMinGap = 1.0 / (double(kLongWidthValues) * double(kLongWidthValues - 1));
// What a tied row writes, per unit of its tangent (above): small beside the count it sits with.
constexpr double kTiedScale = 1e-6;

// The values' s_k = 1/(k+1), and delta: the smallest gap between two of them, at most half the
// smallest (so the right output's logit clears every input token's); 0 where a value is not a
// whole count.
double scratch_gap(const std::vector<Value>& values, std::vector<double>* levels) {
  std::vector<double> s;
  for (const Value& v : values) {
    if (!v.is_number()) return 0.0;
    const double w = number_of(v);
    if (w < 0 || w != double(long(w))) return 0.0;
    s.push_back(1.0 / (w + 1.0));
  }
  if (s.empty()) return 0.0;
  if (levels) *levels = s;
  std::sort(s.begin(), s.end());
  double gap = s.front() / 2.0;
  for (size_t i = 1; i < s.size(); ++i) gap = std::min(gap, s[i] - s[i - 1]);
  return gap;
}

}  // namespace

bool scratch_output(const Program& program, const Inference& inference, const CompileOptions& options) {
  if (!options.layer_norm || program.output < 0) return false;
  const Node& node = program.node(program.output);
  if (node.kind != NodeKind::SelectorWidth) return false;  // a width step or part is a Construction
  if (inference.numbers.of(program.output) != NumberRole::None) return false;
  const SopInfo& info = inference.info[size_t(program.output)];
  if (info.encoding != Encoding::Categorical || !info.values_known) return false;
  return scratch_gap(info.values, nullptr) >= kMinGap;
}

std::string scratch_output_why() {
  return "the unembedding reads its 1/(w+1) from the scratch dimension its head writes (no one-hot, no MLP: "
         "constructions/scratch_output.cpp)";
}

namespace {

// The tied rows and ln_f's gains (above, "Tied tokens").
void write_tied_rows(const LowerContext& ctx, const std::vector<double>& levels, double delta, double lnf_sigma,
                     Lowered& out) {
  const Allocation& a = ctx.allocation;
  const int scratch = a.scratch.at(ctx.program.output);
  for (size_t i = 0; i < levels.size(); ++i) {
    const double s = levels[i], along = 2.0 * kTiedScale * s, constant = -kTiedScale * s * s;
    const size_t token = size_t(out.output_token_of_value[i]);
    auto& row = out.wte[token];
    row.insert(row.end(), {{scratch, along}, {a.scratch_partner, along}, {a.scratch_constant, constant},
                           {a.scratch_constant_partner, constant}});
    if (token <= ctx.options.vocab.size()) row.push_back({a.scratch_balance, -2.0 * (along + constant)});  // an input row
  }
  set_paired_lnf_gains(ctx, {scratch, a.scratch_constant}, {a.scratch_partner, a.scratch_constant_partner},
                       40.0 * lnf_sigma / (kTiedScale * delta * delta), out);
}

}  // namespace

void write_scratch_output(const LowerContext& ctx, double lnf_sigma, Lowered& out) {
  const NodeId id = ctx.program.output;
  std::vector<double> levels;
  const double delta = scratch_gap(ctx.info(id).values, &levels);
  if (ctx.allocation.scratch_partner >= 0) return write_tied_rows(ctx, levels, delta, lnf_sigma, out);
  const int scratch = ctx.allocation.scratch.at(id);
  const double A = 0.08 / (delta * delta);
  for (size_t i = 0; i < levels.size(); ++i) {
    const double s = levels[i];
    Matrix row(ctx.width, 1);
    ctx.put_column(row, 0, {{scratch, 2.0 * A * s}, {ctx.allocation.one, -A * s * s}});
    auto& wte = out.wte[size_t(out.output_token_of_value[i])];
    wte.clear();
    for (int c = 0; c < ctx.width; ++c)
      if (row.at(c, 0) != 0) wte.push_back({c, row.at(c, 0)});
  }
}

}  // namespace raspc::compiler
