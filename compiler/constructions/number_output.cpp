// Numbers to tokens: an output that is a selector width of many values (hist's count, `length`) is
// held as the number group its MLP already writes for numerical selectors (6 dimensions: u, -u,
// u^2, -u^2, y, -y, u = (w - centre) / extent; NumberRole::WidthNumber) instead of a one-hot of
// n + 1 values, and the tied unembedding reads the number. A one-hot output costs n + 1 residual
// dimensions and an MLP of O(n) units over them: O(n^2) parameters; this is O(n).
//
// Output token k's row is A * (u_k * [u] + (1 - u_k^2) / 2 * [one]), put through the zero
// dimension as every read is (lower.cpp: LayerNorm's mean cancels), so after ln_f its logit is
//     (A g / sigma) * (u_k u_w - u_k^2 / 2 + 1 / 2) = (A g / 2 sigma) * (1 + u_w^2 - (u_k - u_w)^2):
// the largest at k = w, ahead of k = w +- 1 by (A g / 2 sigma) du^2 (du = 1 / extent), and at least
// (A g / 2 sigma) for k = w, far above an input token's logit (its row is {token e, pad e}). sigma
// is the position's own LayerNorm scale: it multiplies every logit alike, so the argmax holds at any
// sigma. A makes that margin ln_f's usual 50 (1 - 2e), as a one-hot output's: A = 0.16 / du^2.
//
// The price is float32: the logits near the argmax are about (A g / sigma) ~ 2e7 at n = 1,024, whose
// rounding (an ulp of 2) stays a twentieth of the margin of 40; the MLP writes u within about 1e-6
// of exact, far inside du / 2 = 1e-3. A width that is also an input symbol's text (a vocabulary of
// digits) stays a one-hot: its token's row is an input row too.
//
// Below kLongWidthValues values the unembedding reads the head's 1/(w+1) itself, one dimension
// (scratch_output.cpp); from there on neighbouring counts' 1/(w+1) are too close for float32.
#include <charconv>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {
namespace {

// Whether `text` reads as an integer in [0, n] (a width's value, printed).
bool width_text(const std::string& text, int n) {
  int v = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  return error == std::errc() && end == text.data() + text.size() && v >= 0 && v <= n;
}

}  // namespace

bool number_output(const Program& program, const CompileOptions& options) {
  if (program.output < 0 || program.node(program.output).kind != NodeKind::SelectorWidth) return false;
  if (options.max_len + 1 < kLongWidthValues) return false;
  for (const Value& symbol : options.vocab)
    if (width_text(to_display(symbol), options.max_len)) return false;
  return true;
}

std::string number_output_why() {
  return "the output, a count of " + std::to_string(kLongWidthValues) +
         " or more possible values: its MLP reads 1/(w+1) and writes w's number group (6 dimensions, O(n) "
         "units), which the unembedding reads as -(k - w)^2 scores, instead of a one-hot";
}

void write_number_output(const LowerContext& ctx, Lowered& out) {
  const NodeId id = ctx.program.output;
  const PositionNumbers& numbers = ctx.inference.numbers;
  const int u_dim = ctx.allocation.number.at(id)[0];
  const double du = 1.0 / numbers.extent;
  const double A = 0.16 / (du * du);
  const std::vector<Value>& values = ctx.info(id).values;
  for (size_t i = 0; i < values.size(); ++i) {
    const double u = (number_of(values[i]) - numbers.centre) / numbers.extent;
    Matrix row(ctx.width, 1);
    ctx.put_column(row, 0, {{u_dim, A * u}, {ctx.allocation.one, A * (1.0 - u * u) / 2.0}});
    auto& wte = out.wte[size_t(out.output_token_of_value[i])];
    wte.clear();
    for (int c = 0; c < ctx.width; ++c)
      if (row.at(c, 0) != 0) wte.push_back({c, row.at(c, 0)});
  }
}

}  // namespace raspc::compiler
