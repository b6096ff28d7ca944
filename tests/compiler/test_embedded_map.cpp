// Maps folded into the embeddings (compiler/constructions/embedded_map.cpp): an output that is a map
// of the tokens, of the positions, of both or of nothing is written by the embedding rows, and a
// program that needs nothing else compiles to a model of no blocks, verified like any other.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "compile_helpers.hpp"
#include "runtime/cpu_backend.hpp"
#include "runtime/residual_trace.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

std::vector<Value> numbers_below(int n) {
  std::vector<Value> v;
  for (int i = 0; i < n; ++i) v.push_back(Value::of_int(i));
  return v;
}

}  // namespace

TEST_CASE("embedded map: a map of the tokens is the token embedding's, in a model of no blocks") {
  // The size issue's example: Tracr compiles it, vocabulary 0..99 and max length 9, to 13,791
  // parameters. Here the residual is pad and the output's two values: nothing reads the tokens, and a
  // model of no blocks reads no bookkeeping but pad, which keeps the token rows' sums equal
  // (allocate.cpp): wte 103 x 3, wpe 10 x 3 and ln_f's gain and bias, 2 x 3.
  const Program program = program_from_text("mod7 = tokens % 7 == 0;\nmod7;\n");
  for (Mode mode : {Mode::Causal, Mode::Bidirectional}) {
    INFO((mode == Mode::Causal ? "causal" : "bidirectional"));
    CompileOptions o = test_options(numbers_below(100), 9, mode, 200);
    o.exhaustive_limit = 100 + 100 * 100;  // every input up to length 2, then 200 a length
    const CompileResult r = compile_program(program, o);
    CHECK(r.model.config.n_layer == 0);
    CHECK(r.model.config.n_embd == 3);
    CHECK(r.report.heads == 0);  // the config keeps n_head 1 (n_embd / n_head is d_head); no block has one
    CHECK(r.report.parameters == 103 * 3 + 10 * 3 + 2 * 3);
    CHECK(r.report.parameters <= 13791);
    CHECK(r.report.inputs_checked == 10100 + 7 * 200);
    CHECK(r.report.mismatches == 0);
    // The output tokens' rows write their dimension at 1 + e: the right one wins by e - 2e^2 before
    // ln_f, which scales that to about 50(1 - 2e) = 40, as an MLP-written output's.
    CHECK(r.report.min_logit_margin > 35);
  }
}

TEST_CASE("embedded map: maps of the positions, and a constant, are the position embedding's") {
  for (const char* text : {"even = indices % 2 == 0;\neven;\n", "where = indices;\nwhere;\n",
                           "back = 3 - indices;\nback;\n", "\"x\";\n"}) {
    for (Mode mode : {Mode::Causal, Mode::Bidirectional}) {
      INFO(text << (mode == Mode::Causal ? " causal" : " bidirectional"));
      const CompileResult r = compile_program(program_from_text(text), test_options(parse_vocabulary("ab"), 6, mode));
      CHECK(r.model.config.n_layer == 0);
      CHECK(r.report.inputs_checked == 126);  // every input up to length 6 over two symbols
      CHECK(r.report.mismatches == 0);
      CHECK(r.report.min_logit_margin > 35);
      // Nothing in the model reads the positions (or the tokens): the residual is pad and the
      // output's one-hot.
      CHECK(r.model.config.n_embd == 1 + int(r.model.metadata["output"]["token_ids"].size()));
    }
  }
}

TEST_CASE("embedded map: a map whose values are input symbols is tied rows, unless it cycles") {
  // Output tokens that are also input tokens: their rows are an input and an output at once, paired
  // through ln_f's gains of +1 and -1 (embedded_map.cpp). The right token wins where the map's
  // chains between such tokens rise: a fixed point is fine, a cycle of two or more is not.
  std::vector<Value> to_16 = numbers_below(17);
  std::string squares = "{";
  std::string halves = "{";
  for (int t = 0; t <= 16; ++t) {
    const bool square = t == 0 || t == 1 || t == 4 || t == 9 || t == 16;
    squares += (t ? ", " : "") + std::to_string(t) + ": " + (square ? "1" : "0");
    halves += (t ? ", " : "") + std::to_string(t) + ": " + std::to_string(t / 2);
  }
  // is_square (0 -> 1, 1 -> 1, the rest to 0 or 1); halving (16 -> 8 -> 4 -> 2 -> 1 -> 0, chains of
  // five steps); the identity (fixed points only).
  for (const std::string& text : {"is_square = " + squares + "}[tokens];\nis_square;\n",
                                  "half = " + halves + "}[tokens];\nhalf;\n", std::string("tokens;\n")}) {
    for (Mode mode : {Mode::Causal, Mode::Bidirectional}) {
      INFO(text << (mode == Mode::Causal ? " causal" : " bidirectional"));
      CompileOptions o = test_options(to_16, 4, mode);
      const CompileResult r = compile_program(program_from_text(text), o);
      CHECK(r.model.config.n_layer == 0);
      CHECK(r.report.inputs_checked == 17 + 17 * 17 + 17 * 17 * 17 + 17 * 17 * 17 * 17);
      CHECK(r.report.mismatches == 0);
      // ln_f's gain sets the smallest gap to 50 at the widest row.
      CHECK(r.report.min_logit_margin >= 49.9);
    }
  }
  // The residual: pad, the output's dimensions and their partners.
  const CompileResult square = compile_program(program_from_text("is_square = " + squares + "}[tokens];\nis_square;\n"),
                                               test_options(to_16, 4, Mode::Bidirectional));
  CHECK(square.model.residual_labels ==
        std::vector<std::string>{"pad", "is_square:0", "is_square:1", "is_square.unembed:0", "is_square.unembed:1"});
  CHECK(square.report.parameters == (18 + 5) * 5 + 2 * 5);

  // Around a cycle (a swap; a rotation of five), or without LayerNorm (no signed gains), an MLP.
  for (const char* text : {"swapped = \"b\" if tokens == \"a\" else \"a\";\nswapped;\n",
                           "rotated = {\"a\": \"b\", \"b\": \"c\", \"c\": \"d\", \"d\": \"e\", \"e\": \"a\"}[tokens];\nrotated;\n"}) {
    INFO(text);
    const CompileResult r =
        compile_program(program_from_text(text), test_options(parse_vocabulary("abcde"), 5, Mode::Bidirectional));
    CHECK(r.model.config.n_layer == 1);
    CHECK(r.report.mismatches == 0);
  }
  // Nor along a chain of more than 64 steps (t -> t - 1 over 0..80): the gain would grow with its
  // square (embedded_map.cpp).
  std::string down = "{";
  for (int t = 0; t <= 80; ++t) down += (t ? ", " : "") + std::to_string(t) + ": " + std::to_string(std::max(0, t - 1));
  CHECK(compile_program(program_from_text("down = " + down + "}[tokens];\ndown;\n"),
                        test_options(numbers_below(81), 2, Mode::Bidirectional))
            .model.config.n_layer == 1);
  CompileOptions plain = test_options(parse_vocabulary("ab"), 5, Mode::Bidirectional);
  plain.layer_norm = false;
  plain.activation = Activation::Relu;
  CHECK(compile_program(program_from_text("tokens;\n"), plain).model.config.n_layer == 1);
}

TEST_CASE("embedded map: a model of no blocks runs on the CPU as the interpreter says") {
  // Its values (100 to 109) are no input symbol's, which a map to 0..2 would be.
  const Program program = program_from_text("shifted = tokens + 100;\nshifted;\n");
  const CompileResult r = compile_program(program, test_options(numbers_below(10), 5, Mode::Causal));
  REQUIRE(r.model.config.n_layer == 0);
  const std::vector<int> ids = {r.model.bos_id, r.model.token_id("7"), r.model.token_id("3"), r.model.token_id("5")};
  CpuBackend backend(r.model);
  const ForwardResult f = backend.forward({ids});
  std::vector<std::string> outputs;
  for (int t = 1; t < int(ids.size()); ++t) {
    const float* logits = f.logits_at(0, t);
    outputs.push_back(r.model.vocab[size_t(std::max_element(logits, logits + f.vocab) - logits)]);
  }
  CHECK(outputs == std::vector<std::string>{"107", "103", "105"});
}

TEST_CASE("embedded map: a numerical map of the tokens or positions writes its numbers in one dimension") {
  // A numerical output is read off the residual stream before ln_f, so the row writes F(x) itself;
  // a model of no blocks reads no bookkeeping (not even pad: no logit is read), so the residual is
  // the output's one dimension.
  for (const char* text : {"half = numerical(tokens / 2);\nhalf;\n", "third = numerical(1 / (tokens + 3));\nthird;\n",
                           "spread = numerical(indices * 3 - 1);\nspread;\n"}) {
    for (Mode mode : {Mode::Causal, Mode::Bidirectional}) {
      INFO(text << (mode == Mode::Causal ? " causal" : " bidirectional"));
      const CompileResult r = compile_program(program_from_text(text), test_options(numbers_below(7), 4, mode));
      CHECK(r.model.config.n_layer == 0);
      CHECK(r.model.config.n_embd == 1);
      CHECK(r.model.metadata["output"]["encoding"] == "numerical");
      CHECK(r.report.inputs_checked == 7 + 49 + 343 + 2401);  // every input up to length 4
      CHECK(r.report.mismatches == 0);
      // float32 holds each of these values within half an ulp: 1/3 within 1.5e-8.
      CHECK(r.report.worst_numerical_error < 1e-7);
      // ln_f included, though no logit is read (its gain came out NaN once, from a nominal
      // variance below 0; the model reader refuses such a file).
      CHECK(std::all_of(r.model.storage.begin(), r.model.storage.end(), [](float v) { return std::isfinite(v); }));
    }
  }
}

TEST_CASE("embedded map: the numbers a numerical map of the tokens writes are read back by the CPU forward") {
  const Program program = program_from_text("scaled = numerical(tokens * 1.5 - 4);\nscaled;\n");
  const CompileResult r = compile_program(program, test_options(numbers_below(10), 5, Mode::Bidirectional));
  REQUIRE(r.model.config.n_layer == 0);
  CpuBackend backend(r.model);
  CHECK(run_positions(backend, r.model, {r.model.token_id("7"), r.model.token_id("0"), r.model.token_id("4")}).values ==
        std::vector<std::string>{"13/2", "-4", "2"});
}

TEST_CASE("embedded map: a map of the token and the position is scores the two rows add up") {
  // Tracr's float maps of a token and an index, and a mask of every third position: output values
  // that are input symbols (tied rows), values that are none, and both. Each is a model of no
  // blocks, verified on every input up to length 5.
  const std::vector<std::pair<const char*, const char*>> maps = {
      {"0123", "midpoint = (tokens + indices) / 2;\nmidpoint;\n"},
      {"0123", "scaled = (tokens - indices) * 0.25;\nscaled;\n"},
      {"123", "ratio = tokens / (indices + 1);\nratio;\n"},
      {"0123456", "masked = 0 if (indices + 1) % 3 == 0 else tokens;\nmasked;\n"},
      {"abc", "picked = tokens if indices % 2 == 1 else \"-\";\npicked;\n"},
  };
  for (const auto& [vocab, text] : maps)
    for (Mode mode : {Mode::Causal, Mode::Bidirectional}) {
      INFO(text << (mode == Mode::Causal ? " causal" : " bidirectional"));
      std::vector<Value> symbols;
      for (char c : std::string(vocab)) symbols.push_back(std::isdigit(c) ? Value::of_int(c - '0') : Value::of_string(std::string(1, c)));
      const CompileResult r = compile_program(program_from_text(text), test_options(symbols, 5, mode));
      CHECK(r.model.config.n_layer == 0);
      CHECK(r.report.mismatches == 0);
      int64_t every = 0, power = 1;
      for (int len = 1; len <= 5; ++len) every += power *= int64_t(symbols.size());
      CHECK(r.report.inputs_checked == every);
      // ln_f's gain makes the least gap, over every (symbol, position), 50.
      CHECK(r.report.min_logit_margin >= 49.9);
      CHECK(r.report.min_logit_margin <= 50.1);
    }
}

TEST_CASE("embedded map: a map of the token and the position that no scores write stays an MLP") {
  // t XOR i over two symbols and two positions: the four inequalities add up to 0 < 0. Without
  // LayerNorm (no signed gains, no mean to take off) an MLP too.
  const Program parity = program_from_text("same = (tokens == \"a\") == (indices % 2 == 0);\nsame;\n");
  const CompileResult r = compile_program(parity, test_options(parse_vocabulary("ab"), 6, Mode::Bidirectional));
  CHECK(r.model.config.n_layer == 1);
  CHECK(r.report.mismatches == 0);
  CompileOptions plain = test_options(parse_vocabulary("abc"), 5, Mode::Bidirectional);
  plain.layer_norm = false;
  plain.activation = Activation::Relu;
  const CompileResult mlp = compile_program(program_from_text("picked = tokens if indices % 2 == 1 else \"-\";\npicked;\n"), plain);
  CHECK(mlp.model.config.n_layer == 1);
  CHECK(mlp.report.mismatches == 0);
}

TEST_CASE("embedded map: a map of the token and the position decodes from the logits in a trace") {
  // Its dimensions hold scores, not a one-hot: the trace reads it as the unembedding does, and lists
  // the partners and pad with it, so that a patch moves all three.
  const Program program = program_from_text("masked = 0 if (indices + 1) % 3 == 0 else tokens;\nmasked;\n");
  const CompileResult r = compile_program(program, test_options(numbers_below(10), 8, Mode::Bidirectional, 100));
  REQUIRE(r.model.config.n_layer == 0);
  const ModelPlacement placement = read_placement(r.model);
  REQUIRE(placement.sops.size() == 1);
  CHECK(placement.sops[0].dims.size() == 2 * 10 + 1);
  CHECK(placement.sops[0].logit_tokens.size() == 10);
  CpuBackend backend(r.model);
  std::vector<int> sequence{r.model.bos_id};
  for (const char* t : {"7", "3", "5", "9", "1", "4", "8"}) sequence.push_back(r.model.token_id(t));
  ForwardOptions options;
  options.capture_residual = true;
  const ResidualTrace trace = decode_residual(r.model, backend.forward({sequence}, options), 0, sequence);
  const std::vector<std::string>& embedded = trace.decoded[0][0];
  CHECK(std::vector<std::string>(embedded.begin() + 1, embedded.end()) ==
        std::vector<std::string>{"7", "3", "0", "9", "1", "0", "8"});
}
