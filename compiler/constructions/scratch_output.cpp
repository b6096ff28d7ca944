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
// Only under LayerNorm (without it the margin would need A = 40 / delta^2 itself, past float32's
// comfort), for a plain selector width (not a width step or a split width's part, whose scratch
// holds something else), categorical, with no output value printed as an input symbol (that
// token's row is an input row too), and where nothing reads the width as a one-hot (it is the
// output, so nothing else reads it at all).
#include <algorithm>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {
namespace {

// The smallest gap between two values' 1/(w+1) at which the scratch is read (see above): that of
// counts up to 63, where number_output.cpp's number group takes over.
constexpr double kMinGap = 1.0 / (double(kLongWidthValues) * double(kLongWidthValues - 1));

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
  for (const Value& v : info.values)
    if (prints_as_symbol(v, options)) return false;
  return scratch_gap(info.values, nullptr) >= kMinGap;
}

std::string scratch_output_why() {
  return "the unembedding reads its 1/(w+1) from the scratch dimension its head writes (no one-hot, no MLP: "
         "constructions/scratch_output.cpp)";
}

void write_scratch_output(const LowerContext& ctx, Lowered& out) {
  const NodeId id = ctx.program.output;
  const int scratch = ctx.allocation.scratch.at(id);
  std::vector<double> levels;
  const double delta = scratch_gap(ctx.info(id).values, &levels);
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
