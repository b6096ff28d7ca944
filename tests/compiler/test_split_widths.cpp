// A selector width split over disjoint selectors (compiler/constructions/width_part.cpp): its parts' heads,
// where BOS weighs as Z = 4n^2 selected keys, and the line through their scratch values along
// which one MLP reads their sum (compiler/project_reads.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "compile_helpers.hpp"
#include "runtime/forward.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

int dimension_ending(const Model& model, const std::string& suffix) {
  auto it = std::find_if(model.residual_labels.begin(), model.residual_labels.end(), [&](const std::string& label) {
    return label.size() >= suffix.size() && label.compare(label.size() - suffix.size(), suffix.size(), suffix) == 0;
  });
  REQUIRE(it != model.residual_labels.end());
  return int(it - model.residual_labels.begin());
}

// The largest distance of a split width's parts' scratch values from their levels w/(w+Z), after
// the block `block` that holds their heads, over inputs of the program's symbols drawn each with
// weights of its own (so that keys tie or differ).
double largest_part_error(const std::string& name, Mode mode, int n, int block) {
  ProgramFile f = load_program(name);
  CompileOptions o = test_options(header_vocabulary(f.header), n, mode);
  o.verify = false;
  CompileResult r = compile_program(f.program, o);
  const int part1 = dimension_ending(r.model, "_1.scratch"), part2 = dimension_ending(r.model, "_2.scratch");
  const double Z = 4.0 * n * n;
  std::mt19937 random(11);
  const std::vector<Value>& symbols = o.vocab;
  std::vector<std::vector<int>> batch;
  for (int b = 0; b < 64; ++b) {
    std::vector<double> weight(symbols.size());
    for (double& w : weight) w = double(random() % 8);
    weight[size_t(b) % symbols.size()] += 1;
    std::discrete_distribution<int> pick(weight.begin(), weight.end());
    std::vector<int> ids{r.model.bos_id};
    for (int t = 0; t < n; ++t) ids.push_back(r.model.token_id(to_display(symbols[size_t(pick(random))])));
    batch.push_back(std::move(ids));
  }
  ForwardOptions fo;
  fo.capture_residual = true;
  ForwardResult result = make_backend(r.model)->forward(batch, fo);
  double largest = 0;
  for (int b = 0; b < int(batch.size()); ++b)
    for (int t = 1; t <= n; ++t) {
      const float* x = result.residual_at(b, 2 * block - 1, t);
      for (int dim : {part1, part2}) {
        const double u = x[dim];
        const double w = std::round(Z * u / (1.0 - u));
        largest = std::max(largest, std::fabs(u - w / (w + Z)));
      }
    }
  return largest;
}

}  // namespace

TEST_CASE("most_freq's sort target is read along one line through its parts: RASP's 3 blocks from max length 8 to 257") {
  ProgramFile m = load_program("most_freq");
  for (auto [max_len, blocks] : {std::pair{8, 3}, std::pair{24, 3}, std::pair{257, 3}, std::pair{258, 4}}) {
    CompileOptions o = test_options(header_vocabulary(m.header), max_len, Mode::Bidirectional);
    o.verify = max_len <= 24;
    o.dump_after = "schedule";
    CompileResult r = compile_program(m.program, o);
    INFO("most_freq at max length " << max_len << ": " << r.report.first_mismatch);
    CHECK(r.report.mismatches == 0);
    CHECK(r.report.layers == blocks);
    // The parts' heads hold w/(w+Z); beyond 257 the half-gap (about 7/(16Z), 7/(64n^2)) falls
    // below five times the error the parts' reads may carry (about 8.5e-5/n), and each part is
    // made a one-hot first.
    if (blocks == 3)
      CHECK_THAT(r.dump, Catch::Contains("(selector_width#18_1 as w/(w+Z), selector_width#18_2 as w/(w+Z)) projected"));
    else
      CHECK_THAT(r.dump, !Catch::Contains("projected"));
  }
}

TEST_CASE("a split width's parts hold their keys' weight within the error the line's gap allows for") {
  // The schedule keeps a half-gap of five times e * 4u(1-u) (at the largest u, 1/(4n + 1))
  // between sums along u1 + u2, for errors e that grow with n (project_reads.cpp): every part's
  // read must stay within e * 4u(1-u) of its level. Over an MLP's one-hots (most_freq's keys,
  // repeats of two or three tokens tied beside keys below them) and over embeddings (the causal
  // stable sort of tokens).
  struct Case {
    const char* name;
    Mode mode;
    int n, block;
    bool after_mlp;
  };
  for (const Case& c : {Case{"most_freq", Mode::Bidirectional, 80, 2, true}, Case{"sort", Mode::Causal, 224, 1, false}}) {
    const double u = 1.0 / (4.0 * c.n + 1.0);
    const double allowed = compiler::min_projected_half_gap(c.after_mlp, c.n) / 5.0 * 4.0 * u * (1.0 - u);
    const double largest = largest_part_error(c.name, c.mode, c.n, c.block);
    INFO(c.name << " at max length " << c.n << ": largest read error " << largest << ", allowed " << allowed);
    CHECK(largest < allowed);
  }
}

TEST_CASE("a split width's part weighs a key that misses its comparison e^-G of a selected one, with G = ln(n+1) + 8") {
  // most_freq at 16 on `aabbbc`: keys a -2, a +2, b -3, b +3, b +3, c -1 (a first occurrence sorts
  // by minus its frequency, a repeat after all of them). The query at c (-1) selects the keys below
  // it, at 1 and 3. Block 1's frequency head is a selection: its G is 2 (ln 17 + 16); block 2's
  // first head is the first part of the sort's target width (keys below), with ln 17 + 8.
  ProgramFile m = load_program("most_freq");
  CompileOptions o = test_options(header_vocabulary(m.header), 16, Mode::Bidirectional);
  o.verify = false;
  CompileResult r = compile_program(m.program, o);
  std::vector<int> ids{r.model.bos_id};
  for (const char* t : {"a", "a", "b", "b", "b", "c"}) ids.push_back(r.model.token_id(t));
  ForwardOptions fo;
  fo.capture_attention = true;
  ForwardResult result = make_backend(r.model)->forward({ids}, fo);
  const int T = result.time, H = result.n_head;
  auto weight = [&](int layer, int head, int query, int key) {
    return double(result.attention[((size_t(layer) * H + head) * T + query) * T + key]);
  };
  const double selection_G = 2.0 * (std::log(17.0) + 16.0);
  // Float32 rounds each score by about 1e-5 here (G times a few ulps of a unit read): 1e-3 in a
  // log-ratio is far below that and far above what a wrong G would miss by.
  // Frequency: the query at the first a selects the two a's; the b at 3 misses.
  CHECK(std::log(weight(0, 0, 1, 3) / weight(0, 0, 1, 2)) == Approx(-selection_G).margin(1e-3));
  // The part: the query at c selects the keys at 1 and 3 (-2, -3); the repeat at 2 (+2) misses.
  CHECK(weight(1, 0, 6, 1) == Approx(weight(1, 0, 6, 3)).epsilon(1e-4));
  CHECK(std::log(weight(1, 0, 6, 2) / weight(1, 0, 6, 1)) == Approx(-(std::log(17.0) + 8.0)).margin(1e-3));
}
