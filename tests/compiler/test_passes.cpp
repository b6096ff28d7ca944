// The passes one at a time, on small programs: value sets, encodings, fusion, schedule, labels,
// and the constructions (BOS default, selector_width at every width, numerical arithmetic).
#include <catch2/catch.hpp>

#include "compile_helpers.hpp"
#include "compiler/ir.hpp"
#include "runtime/inspect.hpp"
#include "runtime/model_output.hpp"

using namespace raspc;
using namespace raspc::testing;

TEST_CASE("infer: exact value sets and encodings") {
  Program p = program_from_text(
      "frac = aggregate(select(indices, indices, <=), indicator(tokens == \"a\"));\n"
      "big = frac > 0.5;\nw = selector_width(select(tokens, tokens, ==));\nbig;");
  CompileOptions o = test_options(parse_vocabulary("ab"), 3, Mode::Bidirectional);
  compiler::Inference inf = compiler::infer(p, o);
  NodeId frac = p.find("frac"), big = p.find("big");
  CHECK(inf.info[frac].encoding == Encoding::Numerical);
  // Means of 0/1 values over 1..3 positions, plus the default 0.
  std::vector<std::string> values;
  for (const Value& v : inf.info[frac].values) values.push_back(to_display(v));
  CHECK(values == std::vector<std::string>{"0", "1/3", "1/2", "2/3", "1"});
  CHECK(inf.info[big].encoding == Encoding::Categorical);
  CHECK(inf.info[p.find("w")].needed == false);
}

namespace {

std::vector<std::string> shown(const std::vector<Value>& values) {
  std::vector<std::string> out;
  for (const Value& v : values) out.push_back(to_display(v));
  return out;
}

}  // namespace

TEST_CASE("infer: value sets by position") {
  // A prefix mean at position i averages exactly i + 1 values, so times (indices + 1) it is a
  // count: 0..i+1 at position i, and 0..4 in all (not every k/n times every index).
  Program p = program_from_text(
      "n = (indices + 1) * aggregate(select(indices, indices, <=), indicator(tokens == \"a\"));\n"
      "before = selector_width(select(indices, indices, <));\n"
      "same = selector_width(select(tokens, tokens, ==));\nn + before + same;");
  CompileOptions o = test_options(parse_vocabulary("ab"), 4, Mode::Bidirectional);
  compiler::Inference inf = compiler::infer(p, o);
  const compiler::SopInfo& n = inf.info[p.find("n")];
  CHECK(shown(n.values) == std::vector<std::string>{"0", "1", "2", "3", "4"});
  REQUIRE(n.by_position.size() == 4);
  CHECK(shown(n.by_position[0]) == std::vector<std::string>{"0", "1"});
  CHECK(shown(n.by_position[3]) == std::vector<std::string>{"0", "1", "2", "3", "4"});
  // A positional selector's width is exact at each position: i keys precede position i.
  const compiler::SopInfo& before = inf.info[p.find("before")];
  CHECK(shown(before.values) == std::vector<std::string>{"0", "1", "2", "3"});
  REQUIRE(before.by_position.size() == 4);
  CHECK(shown(before.by_position[2]) == std::vector<std::string>{"2"});
  // A width that depends on the tokens: 1..4 anywhere bidirectionally (position i exists only
  // in inputs longer than i, and the query selects itself) ...
  const compiler::SopInfo& same = inf.info[p.find("same")];
  CHECK(same.by_position.empty());
  CHECK(shown(same.values) == std::vector<std::string>{"1", "2", "3", "4"});
  // ... and 1..i + 1 in causal mode, where the query sees only the keys up to itself.
  o.mode = Mode::Causal;
  compiler::Inference causal = compiler::infer(p, o);
  REQUIRE(causal.info[p.find("same")].by_position.size() == 4);
  CHECK(shown(causal.info[p.find("same")].by_position[1]) == std::vector<std::string>{"1", "2"});
  // A selector that may leave out the query's own key keeps 0: an `and` with one that does not
  // select it, or a comparison other than equality.
  Program q = program_from_text(
      "seen = selector_width(select(tokens, tokens, ==) and select(indices, indices, <));\n"
      "either = selector_width(select(tokens, tokens, ==) or select(indices, indices, <));\n"
      "other = selector_width(select(tokens, tokens, !=));\nseen + either + other;");
  o.mode = Mode::Bidirectional;
  compiler::Inference mixed = compiler::infer(q, o);
  CHECK(shown(mixed.info[q.find("seen")].values) == std::vector<std::string>{"0", "1", "2", "3", "4"});
  CHECK(shown(mixed.info[q.find("either")].values) == std::vector<std::string>{"1", "2", "3", "4"});
  CHECK(shown(mixed.info[q.find("other")].values) == std::vector<std::string>{"0", "1", "2", "3", "4"});
}

TEST_CASE("infer: a map of indices and of values shared by every position selects one key") {
  // `indices + length - first` differs at every position of an input, because length and the
  // copied position are the same everywhere: the aggregate copies (categorical), it does not mean.
  Program p = program_from_text(
      "first = aggregate(select(tokens, \"+\", ==) and select(indices, 0, ==), indices, 0);\n"
      "target = select(indices + length - first, indices, ==);\n"
      "moved = aggregate(target, tokens, \"_\");\nmoved;");
  CompileOptions o = test_options(parse_vocabulary("ab+"), 5, Mode::Bidirectional);
  compiler::Inference inf = compiler::infer(p, o);
  CHECK(inf.info[p.find("target")].at_most_one);
  CHECK(inf.info[p.find("moved")].encoding == Encoding::Categorical);
  CompileResult r = compile_program(p, o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  // In causal mode length is the prefix length, different at every position: no longer unique.
  o.mode = Mode::Causal;
  CHECK_FALSE(compiler::infer(p, o).info[p.find("target")].at_most_one);
}

TEST_CASE("lower: a lookup whose numeric inputs enter through a sum steps along the sum") {
  // The library's stable sort adds two selector widths (keys before, equal keys earlier). At max
  // length 258 no line separates most_freq's width pairs by the float32 bound (project_reads.cpp),
  // so the widths become one-hots and the next MLP adds them: a table over both would be 33,411
  // units (a pair of widths summing to at most 257 each), steps along w1 + w2 are 2 per sum. (At
  // 53M parameters the model is verified by the long entry "most_freq (4 blocks)", not here.)
  ProgramFile f = load_program("most_freq");
  CompileOptions o = test_options(header_vocabulary(f.header), 258, Mode::Bidirectional);
  o.verify = false;
  CompileResult r = compile_program(f.program, o);
  REQUIRE(r.report.layers == 4);
  // The units writing something: the summary's count, without its (slow, at 53M) head matrices.
  CHECK(without_zero_lines(mlp_out_matrix(r.model, 2)).rows.size() == 2 * 258);
}

TEST_CASE("lower: two selector widths of one block are read along one line") {
  const Program partition = stable_partition();
  CompileOptions o = test_options(digits_1_to_4(), 16, Mode::Bidirectional);
  o.dump_after = "schedule";
  CompileResult r = compile_program(partition, o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.layers == 2);
  CHECK_THAT(r.dump, Catch::Contains("map#11(selector_width#9_1 as w/(w+Z), selector_width#9_2 as w/(w+Z)) projected"));
  // The two widths count disjoint sets of keys, so they add up to at most 16: 153 pairs can occur
  // (not 17 x 17), and the sum takes 17 values (not 33).
  o.dump_after = "allocate";
  o.verify = false;
  CompileResult a = compile_program(partition, o);
  CHECK_THAT(a.dump, Catch::Contains("\tmap#11:16\n"));
  CHECK_THAT(a.dump, !Catch::Contains("\tmap#11:17\n"));
  // Along u1 + u2 the parts' w/(w+Z) put every sum below the next (constructions/width_part.cpp): a step
  // between consecutive sums (two units each; the first sum's value is a bias), and each part's
  // eraser, one unit. (Through 1/(w+1) the sums interleave: up to a step per pair.)
  CHECK(r.report.n_inner == 2 * 16 + 2);
}

TEST_CASE("lower: a lookup gates once over the inputs that matter where one input does not") {
  // Where tokens == "a" the index does not matter: one gate for that, and one per (token, index)
  // elsewhere, 1 + 3 x 8 units instead of 4 x 8. Without LayerNorm, where the embeddings do not
  // write a map of the token and the position (constructions/embedded_map.cpp): an MLP.
  Program p = program_from_text("shown = \"_\" if tokens == \"a\" else indices;\nshown;\n");
  CompileOptions o = test_options(parse_vocabulary("abcd"), 8, Mode::Bidirectional);
  o.layer_norm = false;
  CompileResult r = compile_program(p, o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.n_inner == 1 + 3 * 8);
}

TEST_CASE("project_reads separates the points whose outputs differ, widest first") {
  using compiler::ProjectedGroup;
  auto point = [](double w1, double w2, int output) {
    return compiler::ProjectedPoint{1 / (w1 + 1), 1 / (w2 + 1), output, {}};
  };
  const double kHalfGap = compiler::min_projected_half_gap(false, 2);  // over embeddings at max length 2
  // w1 + w2 over widths 0..2: mirrored pairs have equal sums, so lambda = 1 may fold them.
  ProjectedGroup sums;
  for (int a = 0; a <= 2; ++a)
    for (int b = 0; b <= 2; ++b) sums.points.push_back(point(a, b, a + b));
  std::optional<compiler::ReadProjection> p = compiler::project_reads({sums}, kHalfGap);
  REQUIRE(p.has_value());
  CHECK(p->half_gap >= kHalfGap);
  // Every neighbour with a different output is at least twice the half-gap away.
  std::vector<std::pair<double, int>> line;
  for (const auto& q : sums.points) line.push_back({q.u1 + p->lambda * q.u2, q.output});
  std::sort(line.begin(), line.end());
  for (size_t j = 1; j < line.size(); ++j)
    if (line[j].second != line[j - 1].second)
      CHECK(line[j].first - line[j - 1].first >= 2 * p->half_gap * std::max(1.0, p->lambda) * (1 - 1e-9));

  // The same point with two outputs: no line separates them.
  ProjectedGroup clash;
  clash.points = {point(1, 2, 0), point(1, 2, 1), point(0, 0, 2)};
  CHECK_FALSE(compiler::project_reads({clash}, kHalfGap).has_value());

  // Points closer than the float32 bound on every line: refused.
  ProjectedGroup crowded;
  crowded.points = {{0.5, 0.5, 0, {}}, {0.5 + 1e-6, 0.5 + 1e-6, 1, {}}};
  CHECK_FALSE(compiler::project_reads({crowded}, kHalfGap).has_value());
}

TEST_CASE("simplify merges equal nodes and drops dead ones") {
  Program p = program_from_text("a = tokens == \"a\";\nb = tokens == \"a\";\nunused = indices + 1;\na and b;");
  Program s = p;
  CHECK(compiler::simplify(s));
  // tokens, the constant, one comparison, and the conjunction.
  CHECK(s.nodes.size() == 4);
  Program again = s;
  CHECK_FALSE(compiler::simplify(again));  // nothing left to merge, fold or drop: said so
}

TEST_CASE("fused maps: with a FusedCacheScope open, supports and values are the ones computed afresh") {
  // The scope keeps supports and values so that a chain's maps cost linear time; what it keeps
  // must be what support_of and evaluate_fused give without it, for every node and every cut,
  // including after the cut changes while the scope is open (infer cuts as it goes).
  Program p = program_from_text(
      "w = selector_width(select(tokens, tokens, ==));\n"
      "a = (tokens == \"a\") + w;\nb = a * 2 + indices;\nc = b - w;\nd = c % 3 + a;\nd;");
  compiler::simplify(p);
  const NodeId a = p.find("a"), c = p.find("c"), d = p.find("d");
  std::vector<uint8_t> no_cut(p.nodes.size(), 0), cut_at_c = no_cut;
  cut_at_c[size_t(c)] = 1;
  struct Seen {
    std::vector<std::vector<NodeId>> supports;
    std::vector<std::string> values;
  };
  auto look = [&](const std::vector<uint8_t>* cut) {
    Seen seen;
    for (NodeId id = 0; id < NodeId(p.nodes.size()); ++id) seen.supports.push_back(compiler::support_of(p, id, cut));
    for (NodeId id : {a, c, d}) {
      const std::vector<NodeId> support = compiler::support_of(p, id, cut);
      for (int t = 0; t < 2; ++t)
        for (int w = 0; w < 3; ++w)
          for (int i = 0; i < 3; ++i) {
            std::vector<Value> at;
            for (NodeId s : support) {
              const NodeKind kind = p.node(s).kind;
              at.push_back(kind == NodeKind::Tokens ? Value::of_string(t ? "a" : "b")
                           : kind == NodeKind::Indices ? Value::of_int(i)
                           : Value::of_int(kind == NodeKind::SelectorWidth ? w : 7 * w + i));
            }
            Value v;
            seen.values.push_back(compiler::evaluate_fused(p, id, support, at, v) ? to_display(v) : "undefined");
          }
    }
    return seen;
  };
  const Seen fresh = look(nullptr), fresh_cut = look(&cut_at_c);
  CHECK(fresh.supports[size_t(d)] != fresh_cut.supports[size_t(d)]);
  compiler::FusedCacheScope scope(p);
  for (int round = 0; round < 2; ++round) {
    const Seen kept = look(nullptr), kept_cut = look(&cut_at_c), kept_no_cut = look(&no_cut);
    CHECK(kept.supports == fresh.supports);
    CHECK(kept.values == fresh.values);
    CHECK(kept_cut.supports == fresh_cut.supports);
    CHECK(kept_cut.values == fresh_cut.values);
    CHECK(kept_no_cut.supports == fresh.supports);
    CHECK(kept_no_cut.values == fresh.values);
  }
}

TEST_CASE("schedule fuses a selector width with the map that reads it") {
  Program p = program_from_text("opposite = length - indices - 1;\nopposite;");
  CompileOptions o = test_options(parse_vocabulary("abcd"), 5, Mode::Bidirectional);
  o.verify = false;
  o.dump_after = "schedule";
  CompileResult r = compile_program(p, o);
  CHECK(r.report.layers == 1);
  CHECK(r.dump.find("block 0\n  attention: length\n  mlp:") != std::string::npos);
  CHECK(r.dump.find("length as 1/(w+1)") != std::string::npos);
}

TEST_CASE("schedule: reverse in 2 blocks, its length a head with no MLP (a numerical selector reads it)") {
  ProgramFile f = load_program("reverse");
  CompileOptions o = test_options(parse_vocabulary("abcd"), 5, Mode::Bidirectional);
  o.verify = false;
  o.dump_after = "schedule";
  CompileResult r = compile_program(f.program, o);
  CHECK(r.report.layers == 2);
  CHECK(r.dump.find("block 0\n  attention: length\n  mlp: (none)\nblock 1\n  attention: reversed\n") !=
        std::string::npos);
}

TEST_CASE("allocate labels every residual dimension") {
  ProgramFile f = load_program("hist");
  CompileOptions o = test_options(parse_vocabulary("abcd"), 5, Mode::Bidirectional);
  o.verify = false;
  CompileResult r = compile_program(f.program, o);
  const auto& labels = r.model.residual_labels;
  CHECK(labels[0] == "one");
  CHECK(labels[1] == "bos");
  CHECK(std::find(labels.begin(), labels.end(), "tokens:a") != labels.end());
  // Five counts: the unembedding reads hist from its scratch (constructions/scratch_output.cpp).
  CHECK(std::find(labels.begin(), labels.end(), "hist:5") == labels.end());
  CHECK(std::find(labels.begin(), labels.end(), "hist.scratch") != labels.end());
  // At Tracr's setting (vocabulary of 4, length 5) the histogram is narrower than Tracr's 19.
  CHECK(r.model.config.n_embd < 19);
  CHECK(r.model.config.n_layer == 1);
}

TEST_CASE("allocate: `pad` only where an embedding row needs it") {
  // A token row's entries, dimension label -> value (allocate.cpp's token_rows, lower.cpp).
  auto row = [](const Model& model, int token) {
    std::map<std::string, float> entries;
    const int C = model.config.n_embd;
    for (int c = 0; c < C; ++c)
      if (float w = model.w.wte[size_t(token) * size_t(C) + size_t(c)]; w != 0.0f)
        entries[c < int(model.residual_labels.size()) ? model.residual_labels[size_t(c)] : "?"] = w;
    return entries;
  };
  auto has_pad = [](const Model& model) { return has_label(model, "pad"); };
  const float e = float(compiler::kTokenAmplitude);
  // Every symbol is an output value (a shift of the tokens): each input row holds its one-hot and
  // its output dimension, BOS's row `bos` twice over, and no row needs `pad`.
  const CompileOptions ab = test_options(parse_vocabulary("ab"), 6, Mode::Bidirectional);
  const CompileResult shift = compile_program(program_from_text("aggregate(select(indices, indices - 1, ==), tokens, \"a\");"), ab);
  CHECK(shift.report.mismatches == 0);
  CHECK_FALSE(has_pad(shift.model));
  CHECK(row(shift.model, shift.model.bos_id) == std::map<std::string, float>{{"bos", 2 * e}});
  CHECK(row(shift.model, shift.model.token_id("b")) == std::map<std::string, float>{{"tokens:b", e}, {"aggregate#5:b", e}});
  // A filler that is no input symbol: its row's second entry is `zero`, which no position writes.
  const CompileResult filled = compile_program(program_from_text("aggregate(select(indices, indices - 1, ==), tokens, \"_\");"), ab);
  CHECK(filled.report.mismatches == 0);
  CHECK(filled.report.min_logit_margin > 39);
  CHECK_FALSE(has_pad(filled.model));
  CHECK(row(filled.model, filled.model.token_id("_")) == std::map<std::string, float>{{"zero", e}, {"aggregate#5:_", e}});
  // Without LayerNorm no mean is taken off the stream, so rows of different sums change no logit:
  // that row is its output dimension alone, and no model has `pad`.
  CompileOptions plain = ab;
  plain.layer_norm = false;
  plain.activation = Activation::Relu;
  const CompileResult unnormed = compile_program(program_from_text("aggregate(select(indices, indices - 1, ==), tokens, \"_\");"), plain);
  CHECK(unnormed.report.mismatches == 0);
  CHECK_FALSE(has_pad(unnormed.model));
  CHECK(row(unnormed.model, unnormed.model.token_id("_")) == std::map<std::string, float>{{"aggregate#5:_", e}});
  // A symbol the output never takes ("c"): its row's second entry is `pad`, beside rows that hold
  // an output dimension.
  const CompileResult partial = compile_program(
      program_from_text("aggregate(select(indices, indices - 1, ==), \"a\" if tokens == \"c\" else tokens, \"a\");"),
      test_options(parse_vocabulary("abc"), 6, Mode::Bidirectional));
  CHECK(partial.report.mismatches == 0);
  CHECK(has_pad(partial.model));
  CHECK(row(partial.model, partial.model.token_id("c")) == std::map<std::string, float>{{"tokens:c", e}, {"pad", e}});
  // A model without heads (a map of the tokens and the positions that no sum of a token's and a
  // position's scores writes, an XOR: an MLP) has no `bos`; BOS's row is in `zero`, which no other
  // position writes. Without LayerNorm it is empty.
  const char* headless = "(tokens == \"a\") == (indices % 2 == 0);";
  const CompileResult mlp_only = compile_program(program_from_text(headless), ab);
  CHECK(mlp_only.model.config.n_layer == 1);
  CHECK(mlp_only.report.mismatches == 0);
  CHECK(mlp_only.report.min_logit_margin > 39);
  CHECK_FALSE(has_label(mlp_only.model, "bos"));
  CHECK_FALSE(has_pad(mlp_only.model));
  CHECK(row(mlp_only.model, mlp_only.model.bos_id) == std::map<std::string, float>{{"zero", e}});
  CHECK(row(mlp_only.model, mlp_only.model.token_id("a")) == std::map<std::string, float>{{"tokens:a", e}});
  const CompileResult mlp_plain = compile_program(program_from_text(headless), plain);
  CHECK(mlp_plain.report.mismatches == 0);
  CHECK_FALSE(has_pad(mlp_plain.model));
  CHECK(row(mlp_plain.model, mlp_plain.model.bos_id).empty());
}

TEST_CASE("allocate: output values that print alike (the number 0, the string \"0\") are one token") {
  // Found by the compiler fuzz target: sort over the vocabulary 0 a has the string "0" among its
  // outputs and the number 0 as the default of a select it cannot prove total. The tied
  // unembedding read only the first dimension labelled 0, so an input "a0" sorted to "aa".
  // (Sorted by position: a sort of the tokens by themselves is a counting sort, with no default.)
  Program p = program_from_text("sort(tokens, indices);");
  std::vector<Value> vocab = {Value::of_string("0"), Value::of_string("a")};
  CompileOptions o = test_options(vocab, 3, Mode::Bidirectional);
  CompileResult r = compile_program(p, o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(run_model(r.model, "a0") == std::vector<std::string>{"a", "0"});
  const auto& labels = r.model.residual_labels;
  CHECK(std::count_if(labels.begin(), labels.end(), [](const std::string& label) {
          return label.starts_with("aggregate#") && label.ends_with(":0");
        }) == 1);
}

TEST_CASE("an aggregate that selects nothing gives its default through BOS") {
  Program p = program_from_text("aggregate(select(indices, 5, ==), tokens, \"z\");");
  CompileOptions o = test_options(parse_vocabulary("hey"), 6, Mode::Bidirectional);
  CompileResult r = compile_program(p, o);
  CHECK(r.report.mismatches == 0);
  CHECK(run_model(r.model, "hey") == std::vector<std::string>{"z", "z", "z"});
  CHECK(run_model(r.model, "heyhey") == std::vector<std::string>{"y", "y", "y", "y", "y", "y"});
}

TEST_CASE("selector_width is exact at every width up to the maximum length, with LayerNorm and GELU") {
  for (int n : {8, 24}) {
    Program p = program_from_text("selector_width(select(tokens, tokens, ==));");
    CompileOptions o = test_options(parse_vocabulary("ab"), n, Mode::Bidirectional, 200);
    CompileResult r = compile_program(p, o);
    CHECK(r.report.mismatches == 0);
    std::string all_a(size_t(n), 'a');
    std::vector<std::string> expected(size_t(n), std::to_string(n));
    CHECK(run_model(r.model, all_a) == expected);
  }
}

TEST_CASE("numerical arithmetic: round((indices + 1) * mean)") {
  Program p = program_from_text("round((indices + 1) * aggregate(select(indices, indices, <=), tokens));");
  CompileOptions o = test_options(parse_vocabulary("[1,2,3,6]"), 5, Mode::Bidirectional);
  CompileResult r = compile_program(p, o);
  CHECK(r.report.mismatches == 0);
  CHECK(run_model(r.model, "[1,2,3,6]") == std::vector<std::string>{"1", "3", "6", "12"});
}

TEST_CASE("Tracr-style models: no LayerNorm, ReLU") {
  ProgramFile f = load_program("sort");
  CompileOptions o = test_options(header_vocabulary(f.header), 8, Mode::Bidirectional);
  o.layer_norm = false;
  o.activation = Activation::Relu;
  CompileResult r = compile_program(f.program, o);
  CHECK(r.report.mismatches == 0);
  CHECK(!r.model.config.layer_norm);
}

TEST_CASE("the model's metadata says how to read it") {
  ProgramFile f = load_program("frac_prevs");
  CompileOptions o = test_options(header_vocabulary(f.header), 6, Mode::Causal);
  o.source_text = f.source->text;
  CompileResult r = compile_program(f.program, o);
  CHECK(r.model.metadata["mode"] == "causal");
  CHECK(r.model.metadata["output"]["encoding"] == "numerical");
  CHECK(r.model.metadata["program"] == f.source->text);
  CHECK(r.model.metadata["compile"]["mismatches"] == 0);
}
