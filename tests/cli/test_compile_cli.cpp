// `raspc compile` and `raspc demo` as a user runs them: stdout, stderr, exit codes, files.
#include <catch2/catch.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "runtime/safetensors.hpp"
#include "tests/cli/run_raspc.hpp"

namespace {

using Result = raspc::testing::CommandResult;
using raspc::testing::slurp;

std::filesystem::path scratch() { return raspc::testing::scratch_folder(); }

// Runs `raspc ARGS` in the scratch folder, where programs/ links to the checkout's programs.
Result raspc_cli(const std::string& args) {
  return raspc::testing::run_raspc(args, raspc::testing::scratch_with_programs());
}

void write(const std::string& name, const std::string& text) { std::ofstream(scratch() / name) << text; }

// A program file's `# expect: INPUT -> OUT OUT ...` lines (`# expect-causal:` with `causal`), as
// pairs of the input and the output `raspc run` prints for it: [OUT,OUT,...].
std::vector<std::pair<std::string, std::string>> expect_lines(const std::string& program, bool causal) {
  std::istringstream text(slurp(std::string(RASPC_SOURCE_DIR) + "/programs/" + program + ".rasp"));
  const std::string tag = causal ? "# expect-causal: " : "# expect: ";
  std::vector<std::pair<std::string, std::string>> cases;
  for (std::string line; std::getline(text, line);) {
    if (line.rfind(tag, 0) != 0) continue;
    size_t arrow = line.find(" -> ");
    std::istringstream outputs(line.substr(arrow + 4));
    std::string printed = "[";
    for (std::string value; outputs >> value;) printed += (printed.size() > 1 ? "," : "") + value;
    cases.emplace_back(line.substr(tag.size(), arrow - tag.size()), printed + "]");
  }
  return cases;
}

}  // namespace

TEST_CASE("compile cli: histogram end to end, compile then run") {
  std::filesystem::remove(scratch() / "hist.safetensors");
  Result r = raspc_cli("compile programs/hist.rasp --vocab ehlo --max-len 8 -o hist.safetensors");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("model: 1 layer, 1 head") != std::string::npos);
  CHECK(r.out.find("verification: 87,380 inputs (every input up to length 8), 0 mismatches, minimum logit margin") !=
        std::string::npos);
  CHECK(r.out.find("wrote hist.safetensors") != std::string::npos);
  CHECK(std::filesystem::exists(scratch() / "hist.safetensors"));
  Result run = raspc_cli("run hist.safetensors --input hello");
  CHECK(run.code == 0);
  CHECK(run.out == "[1,1,2,2,1]\n");
}

TEST_CASE("compile cli: the vocabulary defaults to the program's # vocab: line") {
  Result r = raspc_cli("compile programs/reverse.rasp --max-len 5");
  CHECK(r.code == 0);
  CHECK(r.out.find("model: 2 layers") != std::string::npos);
  CHECK(r.out.find("0 mismatches") != std::string::npos);
}

TEST_CASE("compile cli: --dump-after and --explain") {
  Result r = raspc_cli("compile programs/hist.rasp --max-len 4 --no-verify --dump-after=schedule --explain");
  CHECK(r.code == 0);
  CHECK(r.out.find("# schedule: 1 block\nblock 0\n  attention: hist\n  mlp: (none)\n") != std::string::npos);
  CHECK(r.out.find("hist: categorical, because selector_width: categorical 1..4, read from BOS's attention weight "
                   "1/(w+1); a head, blocks.0.attn: its inputs are ready at the embeddings; the unembedding reads its "
                   "1/(w+1) from the scratch dimension its head writes (no one-hot, no MLP: "
                   "constructions/scratch_output.cpp)") != std::string::npos);
  // Without LayerNorm the MLP writes the one-hot (and leaves the scratch value: no LayerNorm's
  // moments to keep).
  Result digits =
      raspc_cli("compile programs/hist.rasp --max-len 4 --vocab 1234 --no-verify --no-layernorm --dump-after=schedule");
  CHECK(digits.out.find("# schedule: 1 block\nblock 0\n  attention: hist\n  mlp: hist(hist as 1/(w+1))\n") !=
        std::string::npos);
  Result bad = raspc_cli("compile programs/hist.rasp --dump-after=parse");
  CHECK(bad.code == 1);
  const std::string passes =
      "the passes, in order, are causal_prefixes, simplify, merge_means, width_steps, width_predicates, tiebreak_keys, "
      "count_sorts, count_ranks, prune_inputs, split_widths, pair_selectors, output_copy, infer, schedule, allocate, "
      "budget, lower, assemble, verify";
  CHECK(bad.err == "--dump-after: error: unknown pass \"parse\"; " + passes + "\n");
  Result typo = raspc_cli("compile programs/hist.rasp --dump-after=schedul");
  CHECK(typo.code == 1);
  CHECK(typo.err == "--dump-after: error: unknown pass \"schedul\"; " + passes + "; did you mean `schedule`?\n");
}

// Lowering refuses this program (a categorical aggregate of a numerical s-op), after scheduling and
// allocation have run: their dumps are what a user reads to see why, so they come before the error.
TEST_CASE("compile cli: --dump-after prints the pass's result even when a later pass refuses") {
  write("late.rasp", "f = aggregate(full_s, indicator(tokens == \"a\"));\n"
                     "categorical(aggregate(select(indices, indices, ==), f));\n");
  const std::string refusal =
      "late.rasp:2:13: error: a categorical aggregate cannot copy a numerical s-op; drop categorical() or make the "
      "value categorical\n"
      "  categorical(aggregate(select(indices, indices, ==), f));\n"
      "              ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n";
  Result r = raspc_cli("compile late.rasp --vocab abc --max-len 4 --dump-after=schedule");
  CHECK(r.code == 1);
  CHECK(r.out ==
        "# schedule: 2 blocks\nblock 0\n  attention: f\n  mlp: (none)\nblock 1\n  attention: aggregate#9\n  mlp: (none)\n");
  CHECK(r.err == refusal);
  Result allocate = raspc_cli("compile late.rasp --vocab abc --max-len 4 --dump-after=allocate");
  CHECK(allocate.code == 1);
  CHECK(allocate.out.rfind("# allocate: ", 0) == 0);
  CHECK(allocate.out.find("\tf\n") != std::string::npos);
  CHECK(allocate.out.find("\taggregate#9:1/4\n") != std::string::npos);
  CHECK(allocate.err == refusal);
  Result explained = raspc_cli("compile late.rasp --vocab abc --max-len 4 --explain");
  CHECK(explained.code == 1);
  CHECK(explained.out.find("f: numerical, because") != std::string::npos);
  CHECK(explained.err == refusal);
}

TEST_CASE("compile cli: Tracr-style models and causal mode") {
  Result r = raspc_cli("compile programs/frac_prevs.rasp --max-len 6 --causal --no-layernorm --activation relu");
  CHECK(r.code == 0);
  CHECK(r.out.find("no LayerNorm, ReLU, causal") != std::string::npos);
  CHECK(r.out.find("0 mismatches, worst numerical error") != std::string::npos);
}

TEST_CASE("compile cli: a refused program names the expression and writes nothing") {
  write("bad.rasp", "f = numerical(aggregate(full_s, indicator(tokens == \"a\")));\nselector_width(select(f, f, ==));\n");
  std::filesystem::remove(scratch() / "bad.safetensors");
  Result r = raspc_cli("compile bad.rasp --vocab ab --max-len 4 -o bad.safetensors");
  CHECK(r.code == 1);
  CHECK(r.err.rfind("bad.rasp:2:16: error: a selector cannot compare a numerical s-op", 0) == 0);
  CHECK(r.err.find("bad.rasp:1:15: note: this s-op is numerical: numerical(): ") != std::string::npos);
  CHECK(!std::filesystem::exists(scratch() / "bad.safetensors"));
  Result no_vocab = raspc_cli("compile bad.rasp");
  CHECK(no_vocab.code == 1);
  CHECK(no_vocab.err ==
        "bad.rasp: error: no vocabulary: give --vocab, or a `# vocab: ...` line at the top of the program\n");
  Result bad_activation = raspc_cli("compile programs/hist.rasp --activation tanh");
  CHECK(bad_activation.code == 1);
  CHECK(bad_activation.err == "--activation: error: must be gelu or relu, not \"tanh\"\n");
}

TEST_CASE("compile cli: undefined inputs are reported by name") {
  // Over strings a repeated token makes sort_unique average strings (over its int vocabulary the
  // mean is a number, and defined).
  Result r = raspc_cli("compile programs/sort_unique.rasp --max-len 4 --vocab abcd");
  CHECK(r.code == 0);
  CHECK(r.out.find("undefined: the program itself is undefined on 276 inputs, for example \"aa\": "
                   "programs/sort_unique.rasp:17:10: error: at position 0 this aggregate selects 2 positions") !=
        std::string::npos);
}

TEST_CASE("demo cli: aab, the hand-set model beside the compiled one") {
  Result r = raspc_cli("demo aab");
  INFO(r.err);
  CHECK(r.code == 0);
  // A story in order: the hand-set model, the program, the compiled model, both side by side, and
  // what to try next as the last line.
  const std::vector<std::string> parts = {"1. A transformer set by hand", "2. The same task as a RASP program",
                                          "3. Compiled by raspc into a GPT-2, then verified", "4. Side by side"};
  size_t at = 0;
  for (const std::string& part : parts) {
    INFO(part);
    CHECK((at = r.out.find(part, at)) != std::string::npos);
  }
  CHECK(r.out.find("predicted from those before it: 27/27") != std::string::npos);
  CHECK(r.out.find("Score on \"aab\" x 10: 27/27") != std::string::npos);
  CHECK(r.out.find("  aab -> aabaabaabaab\n") != std::string::npos);
  CHECK(r.out.find("0 mismatches") != std::string::npos);
  // Where the program is, by TransformerLens's names and the source's.
  CHECK(r.out.find("  blocks.0.attn: previous (aab.rasp:") != std::string::npos);
  CHECK(r.out.find("  blocks.0.mlp: next_token (aab.rasp:") != std::string::npos);
  CHECK(r.out.find("  FLOPs per token               783       3,318\n") != std::string::npos);
  CHECK(r.out.find("  completion of \"a\"      abaabaabaa  aabaabaaba\n") != std::string::npos);
  // No raw metadata JSON, and the last line is the view command.
  CHECK(r.out.find("{\"") == std::string::npos);
  CHECK(r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1) ==
        "  raspc view programs/aab.rasp --causal --input aabaab -o aab.html\n");
}

TEST_CASE("compile cli: a numerical output prints as the exact value the verification proved") {
  for (const char* program : {"frac_prevs", "pair_balance"}) {
    for (bool causal : {false, true}) {
      const std::string model = std::string(program) + (causal ? "_causal" : "") + ".safetensors";
      Result r = raspc_cli(std::string("compile programs/") + program + ".rasp --max-len 6" +
                           (causal ? " --causal" : "") + " -o " + model);
      INFO(program << (causal ? " causal: " : ": ") << r.err);
      REQUIRE(r.code == 0);
      CHECK(r.out.find("0 mismatches, worst numerical error") != std::string::npos);
      auto cases = expect_lines(program, causal);
      CHECK(cases.size() >= 3);
      for (const auto& [input, printed] : cases) {
        Result run = raspc_cli("run " + model + " --input '" + input + "'");
        INFO("input " << input << ": " << run.err);
        CHECK(run.code == 0);
        CHECK(run.out == printed + "\n");  // 1/3, not 0.333336
      }
    }
  }
  raspc::Model model = raspc::load_model((scratch() / "pair_balance.safetensors").string());
  const nlohmann::json& values = model.metadata["output"]["values"];
  REQUIRE(values.is_array());
  CHECK(values.front() == "-1");
  CHECK(values.back() == "1");
  CHECK(std::find(values.begin(), values.end(), "-1/3") != values.end());
}

TEST_CASE("compile cli: values too close to tell apart within the tolerance are not listed") {
  // Means over up to n positions take every k/m with m <= n; the closest are 1/(n-1) and 1/n,
  // 1/(n(n-1)) apart, which must exceed twice the tolerance (2e-3): n = 22 passes, n = 23 does not.
  for (int n : {22, 23}) {
    const std::string model = "frac_" + std::to_string(n) + ".safetensors";
    Result r = raspc_cli("compile programs/frac_prevs.rasp --max-len " + std::to_string(n) + " --verify-len 3 -o " + model);
    INFO(r.err);
    REQUIRE(r.code == 0);
    raspc::Model loaded = raspc::load_model((scratch() / model).string());
    CHECK(loaded.metadata["output"].contains("values") == (n == 22));
    // Without the list the same model prints what it reads, as files written before it did.
    Result run = raspc_cli("run " + model + " --input xaa");
    CHECK(run.code == 0);
    if (n == 22) {
      CHECK(run.out == "[1,1/2,1/3]\n");
    } else {
      CHECK(run.out.find('/') == std::string::npos);
      CHECK(run.out.find(",0.333") != std::string::npos);
    }
  }
}

TEST_CASE("compile cli: a vocabulary of non-ASCII symbols is one token a code point, in the model and its input") {
  write("rev.rasp", "reversed = aggregate(select(indices, length - indices - 1, ==), tokens);\nreversed;\n");
  std::filesystem::remove(scratch() / "utf8.safetensors");
  Result r = raspc_cli("compile rev.rasp --vocab '\xc3\xa9\xc3\xbc' --max-len 3 -o utf8.safetensors");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("vocabulary 4,") != std::string::npos);  // BOS, é, ü, and the output's 0: not six bytes
  raspc::Model model = raspc::load_model((scratch() / "utf8.safetensors").string());
  CHECK(model.vocab == std::vector<std::string>{"<bos>", "\xc3\xa9", "\xc3\xbc", "0"});
  Result run = raspc_cli("run utf8.safetensors --input '\xc3\xa9\xc3\xa9\xc3\xbc'");
  CHECK(run.code == 0);
  CHECK(run.out == "[\xc3\xbc,\xc3\xa9,\xc3\xa9]\n");
  run = raspc_cli("run utf8.safetensors --input '\xc3\xa9x'");
  CHECK(run.code == 1);
  CHECK(run.err == "--input:1:2: error: \"x\" is not in the model's input vocabulary (\xc3\xa9 \xc3\xbc)\n"
                   "  \xc3\xa9x\n   ^\n");
}

TEST_CASE("compile cli: --vocab naming <bos> is refused before compiling") {
  write("rev.rasp", "reversed = aggregate(select(indices, length - indices - 1, ==), tokens);\nreversed;\n");
  Result r = raspc_cli("compile rev.rasp --vocab '<bos> a b' --max-len 3");
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "--vocab:1:1: error: \"<bos>\" is the name of a model's beginning-of-sequence token, so it cannot be "
                 "an input symbol\n  <bos> a b\n  ^~~~~\n");
}

TEST_CASE("compile cli: --threads changes the verification's threads, never its report") {
  auto report = [](const std::string& threads) {
    Result r = raspc_cli("compile programs/most_freq.rasp --max-len 6 --samples 300 --json --threads " + threads);
    REQUIRE(r.code == 0);
    nlohmann::json j = nlohmann::json::parse(r.out);
    j.erase("compile_ms");  // the times, the threads and the wall time estimated on them are the only
    j.erase("verify_ms");   // fields a thread count may change
    j.erase("verify_threads");
    j.erase("estimated_verify_seconds");
    return j;
  };
  const nlohmann::json one = report("1");
  CHECK(one["inputs_checked"].get<long>() > 1000);
  CHECK(report("2") == one);
  CHECK(report("0") == one);
  Result bad = raspc_cli("compile programs/hist.rasp --threads -1");
  CHECK(bad.code == 1);
  CHECK(bad.err == "--threads: error: must be from 0 (every core) to 1024, not -1\n");
}
