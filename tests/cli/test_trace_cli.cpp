// raspc run --trace, the inspect summary and raspc view, as a user calls them (the pages
// themselves are opened in Chromium by tests/view).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_raspc.hpp"

namespace {

using raspc::testing::CommandResult;

CommandResult raspc_cli(const std::string& arguments) {
  return raspc::testing::run_raspc(arguments, raspc::testing::scratch_folder());
}

// Compiles programs/NAME.rasp into the scratch folder once per test process.
std::string compiled(const std::string& name, const std::string& flags) {
  const std::string model = name + ".safetensors";
  CommandResult r = raspc_cli("compile '" RASPC_SOURCE_DIR "/programs/" + name + ".rasp' " + flags + " -o " + model);
  REQUIRE(r.code == 0);
  return model;
}

}  // namespace

TEST_CASE("run --trace decodes hist's residual after every half-block") {
  // At max length 6 the unembedding reads hist's count from the 1/(w+1) its head writes
  // (compiler/constructions/scratch_output.cpp): hist is complete after the attention, read as
  // 1/x - 1 and checked against the interpreter there.
  const std::string model = compiled("hist", "--max-len 6");
  CommandResult r = raspc_cli("run " + model + " --input abcab --trace");
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out ==
        "after the embedding (blocks.0.hook_resid_pre):\n"
        "position  0  1  2  3  4\n"
        "tokens    a  b  c  a  b\n"
        "\n"
        "after blocks.0.attn (blocks.0.hook_resid_mid):\n"
        "position  0  1  2  3  4\n"
        "tokens    a  b  c  a  b\n"
        "hist      2  2  1  2  2\n"
        "\n"
        "after blocks.0.mlp (blocks.0.hook_resid_post):\n"
        "position  0  1  2  3  4\n"
        "tokens    a  b  c  a  b\n"
        "hist      2  2  1  2  2\n"
        "\n"
        "[2,2,1,2,2]\n");
  // Without LayerNorm the one-hot stays: the selector width's 1/(w+1) appears after the attention,
  // and the MLP turns it into hist's one-hot (no LayerNorm's moments to keep: it stays).
  const std::string digits_model = compiled("hist", "--max-len 6 --vocab 1234 --no-verify --no-layernorm");
  r = raspc_cli("run " + digits_model + " --input 12312 --trace");
  CHECK(r.code == 0);
  CHECK(r.out ==
        "after the embedding (blocks.0.hook_resid_pre):\n"
        "position  0  1  2  3  4\n"
        "tokens    1  2  3  1  2\n"
        "\n"
        "after blocks.0.attn (blocks.0.hook_resid_mid):\n"
        "position        0    1    2    3    4\n"
        "tokens          1    2    3    1    2\n"
        "hist (scratch)  1/3  1/3  1/2  1/3  1/3\n"
        "\n"
        "after blocks.0.mlp (blocks.0.hook_resid_post):\n"
        "position        0    1    2    3    4\n"
        "tokens          1    2    3    1    2\n"
        "hist (scratch)  1/3  1/3  1/2  1/3  1/3\n"
        "hist            2    2    1    2    2\n"
        "\n"
        "[2,2,1,2,2]\n");
}

TEST_CASE("run --trace decodes sort, a two-layer program, stage by stage") {
  const std::string model = compiled("sort", "--max-len 4");
  CommandResult r = raspc_cli("run " + model + " --input '[3,1,4,2]' --trace");
  CHECK(r.code == 0);
  // sort is a counting sort (compiler/count_sorts.cpp): block 1 tells, for each key value v but
  // the last, whether a position is below the count of keys <= v; block 2's MLP picks the token.
  // Each step's scratch holds BOS's attention weight (i + 1/2)/(i + 1/2 + count), a float the
  // trace prints as read: those rows are checked to 1e-4 (float32 attention), the rest exactly.
  std::istringstream lines(r.out);
  std::string shown, line;
  std::vector<std::vector<double>> scratch;
  bool erased = false;
  while (std::getline(lines, line)) {
    if (line.rfind("sort(tokens, tokens), step ", 0) != 0 || line.find("(scratch)") == std::string::npos) {
      shown += line + "\n";
      continue;
    }
    std::istringstream row(line.substr(line.find("(scratch)") + 9));
    std::vector<double> readings;
    for (double x; row >> x;) readings.push_back(x);
    if (scratch.size() < 3) scratch.push_back(readings);
    else erased = erased || readings != std::vector<double>(4, 0.0);
  }
  // Counts of keys <= 1, 2, 3 in [3,1,4,2]: 1, 2, 3.
  const std::vector<std::vector<double>> weights = {{1.0 / 3, 0.6, 2.5 / 3.5, 3.5 / 4.5},
                                                    {0.5 / 2.5, 1.5 / 3.5, 2.5 / 4.5, 3.5 / 5.5},
                                                    {0.5 / 3.5, 1.5 / 4.5, 2.5 / 5.5, 3.5 / 6.5}};
  REQUIRE(scratch.size() == 3);
  for (size_t k = 0; k < 3; ++k) {
    REQUIRE(scratch[k].size() == 4);
    for (size_t i = 0; i < 4; ++i) CHECK(scratch[k][i] == Approx(weights[k][i]).margin(1e-4));
  }
  CHECK_FALSE(erased);  // every later stage shows them erased, 0
  // Each step shows as its sort's (the model's labels are sorted_below_1, ...: test_shown_names.cpp).
  const std::string steps =
      "sort(tokens, tokens), step 1 of 3            True  False  False  False\n"
      "sort(tokens, tokens), step 2 of 3            True  True   False  False\n"
      "sort(tokens, tokens), step 3 of 3            True  True   True   False\n";
  const std::string header = "position                                     0     1      2      3\n"
                             "tokens                                       3     1      4      2\n";
  CHECK(shown ==
        "after the embedding (blocks.0.hook_resid_pre):\n"
        "position  0  1  2  3\n"
        "tokens    3  1  4  2\n"
        "\n"
        "after blocks.0.attn (blocks.0.hook_resid_mid):\n"
        "position                                     0         1         2         3\n"
        "tokens                                       3         1         4         2\n"
        "\n"
        "after blocks.0.mlp (blocks.0.hook_resid_post):\n" +
            header + steps +
            "\n"
            "after blocks.1.attn (blocks.1.hook_resid_mid):\n" +
            header + steps +
            "\n"
            "after blocks.1.mlp (blocks.1.hook_resid_post):\n" +
            header + steps +
            "sorted                                       1     2      3      4\n"
            "\n"
            "[1,2,3,4]\n");
}

TEST_CASE("inspect summarises aab in a screen") {
  const std::string model = compiled("aab", "--causal --max-len 6");
  CommandResult r = raspc_cli("inspect " + model);
  CHECK(r.code == 0);
  CHECK(r.out ==
        "model: aab.safetensors\n"
        "config: 1 layer, 1 head, n_embd 16 (d_head 16), MLP 4, vocabulary 3, positions 7 (BOS included), LayerNorm, GELU, causal\n"
        "parameters: 1492; FLOPs per token: 3458 (at 7 positions)\n"
        "vocabulary: <bos> a b (BOS <bos>)\n"
        "residual (16): one bos zero tokens:a tokens:b indices.x indices.-x indices.x2 indices.-x2 indices.y ... 6 more\n"
        "layer 0\n"
        "  head 0: previous = aggregate over shift(tokens, 1, \"_\") (aab.rasp:19:12)\n"
        "    W_QK: 5 of 16 rows x 4 of 16 columns not all zero\n"
        "      rows: one bos zero indices.x indices.x2\n"
        "      columns: bos zero indices.x indices.x2\n"
        "    W_OV: 4 of 16 rows x 3 of 16 columns not all zero\n"
        "      rows: bos zero tokens:a tokens:b\n"
        "      columns: previous:_ previous:a previous:b\n"
        "  MLP: 4 of 4 units used: previous=_ tokens=a,previous=a tokens=b,previous=a previous=b\n"
        "    W_in: 7 of 16 rows x 4 of 4 columns not all zero\n"
        "      rows: one zero tokens:a tokens:b previous:_ previous:a previous:b\n"
        "      columns: previous=_ tokens=a,previous=a tokens=b,previous=a previous=b\n"
        "    W_out: 4 of 4 rows x 2 of 16 columns not all zero\n"
        "      rows: previous=_ tokens=a,previous=a tokens=b,previous=a previous=b\n"
        "      columns: next_token:a next_token:b\n"
        "verification: 126 inputs (every input up to length 6), 0 mismatches, minimum logit margin 40.00\n"
        "(every matrix: --all, or --tensor NAME; all-zero rows and columns are left out unless --dense)\n");
  CommandResult json = raspc_cli("inspect " + model + " --json");
  CHECK(json.code == 0);
  const nlohmann::json summary = nlohmann::json::parse(json.out);
  CHECK(summary["config"]["n_embd"] == 16);
  CHECK(summary["residual_labels"].size() == 16);
  CHECK(summary["layers"][0]["heads"][0]["sop"] == "previous");
  CHECK(summary["layers"][0]["heads"][0]["at"] == "aab.rasp:19:12");
  CHECK(summary["layers"][0]["mlp"]["out"]["columns"] == nlohmann::json({"next_token:a", "next_token:b"}));
  CHECK(summary["verification"]["mismatches"] == 0);
}

TEST_CASE("inspect shows the names the program wrote, never an id") {
  // most_freq's locals (frequency, key) are frequency#4 and key#11 in the model's labels, its
  // has_focus an unnamed aggregate#7 and its sort's two widths selector_width#18_1 and _2: inspect
  // shows them as run --trace and view do, by the name written, else the expression.
  const std::string model = compiled("most_freq", "--max-len 5 --no-verify");
  for (const char* flags : {"", " --json"}) {
    INFO(flags);
    CommandResult r = raspc_cli("inspect " + model + flags);
    CHECK(r.code == 0);
    CHECK(r.out.find('#') == std::string::npos);
  }
  // --all also prints the file's metadata as stored (its labels, the program's comments); its
  // residual line and its matrices show the names.
  CommandResult all = raspc_cli("inspect " + model + " --all");
  const size_t metadata = all.out.find("\ncompile: ");
  REQUIRE(metadata != std::string::npos);
  const size_t tensors = all.out.find("\ntransformer.wte.weight ");
  REQUIRE(tensors != std::string::npos);
  CHECK(all.out.find('#') > metadata);
  CHECK(all.out.find('#', tensors) == std::string::npos);
  CHECK(all.out.find(" 13:frequency.scratch 14:has_focus(same_token and select(indices, indices, <)):0 ") < metadata);
  CommandResult r = raspc_cli("inspect " + model);
  CHECK(r.out.find("  head 0: frequency = selector_width over select(tokens, tokens, ==) (most_freq.rasp:14:16)\n") !=
        std::string::npos);
  CHECK(r.out.find("  head 1: has_focus(same_token and select(indices, indices, <)) = aggregate over ") != std::string::npos);
  CHECK(r.out.find(" key:-5 ") != std::string::npos);
  CHECK(r.out.find("  head 0: sort(shown, key), part 1 of 2 = selector_width over sort(shown, key)") != std::string::npos);
}

TEST_CASE("run --trace, view and inspect refuse what they cannot do, and say why") {
  REQUIRE(raspc_cli("handset-aab -o handset.safetensors").code == 0);
  CommandResult r = raspc_cli("run handset.safetensors --input aab --trace");
  CHECK(r.code == 1);
  CHECK(r.err == "handset.safetensors: error: the model says nothing about its s-ops (a trained model, or one compiled "
                 "before raspc stored them), so --trace has nothing to decode; raspc view still draws it\n");
  r = raspc_cli("run handset.safetensors --input aab --trace --json");
  CHECK(r.code == 1);
  CHECK(r.err == "--trace: error: prints tables for one --input; it does not combine with --json or --inputs\n");
  r = raspc_cli("view handset.safetensors --input aab --vocab ab -o page.html");
  CHECK(r.code == 1);
  CHECK(r.err == "--vocab: error: applies to a .rasp program, not to a model file\n");
  r = raspc_cli("inspect handset.safetensors --dense");
  CHECK(r.code == 1);
  CHECK(r.err == "--dense: error: applies to the matrices of --all or --tensor NAME; the summary prints none\n");
  // A trained-style model (no s-ops) still gets its page: attention and residual maps.
  r = raspc_cli("view handset.safetensors --input aab -o page.html");
  CHECK(r.code == 0);
  CHECK(r.out == "wrote page.html\n");
  const std::string page = raspc::testing::slurp(raspc::testing::scratch_folder() / "page.html");
  CHECK(page.find("class=\"attention-map\"") != std::string::npos);
  CHECK(page.find("http") == page.find("http://www.w3.org/2000/svg"));  // no link but the SVG namespace
}

TEST_CASE("view compiles a program first and writes its page") {
  CommandResult r = raspc_cli("view '" RASPC_SOURCE_DIR "/programs/hist.rasp' --input abca -o hist.html");
  CHECK(r.code == 0);
  CHECK(r.out == "wrote hist.html\n");
  const std::string page = raspc::testing::slurp(raspc::testing::scratch_folder() / "hist.html");
  CHECK(page.find("<td class=\"mismatch\"") == std::string::npos);
  CHECK(page.find("data-output=\"true\"><th title=\"hist at hist.rasp:12:8\">hist</th><td class=\"checked\" "
                  "data-position=\"0\" title=\"interpreter: 2\">2</td>") != std::string::npos);
  // An input longer than any compile is refused by its length, not compiled at that length.
  r = raspc_cli("view '" RASPC_SOURCE_DIR "/programs/hist.rasp' --input " + std::string(5000, 'a') + " -o long.html");
  CHECK(r.code == 1);
  CHECK(r.err == "--input: error: has 5000 tokens, more than the 4096 a program is compiled for; view a shorter "
                 "input, or a compiled model\n");
  CHECK(!std::filesystem::exists(raspc::testing::scratch_folder() / "long.html"));
  // aab.rasp says `# causal: yes`: compiled causal, as its own header asks.
  r = raspc_cli("view '" RASPC_SOURCE_DIR "/programs/aab.rasp' --input aab -o aab.html");
  CHECK(r.code == 0);
  const std::string causal = raspc::testing::slurp(raspc::testing::scratch_folder() / "aab.html");
  CHECK(causal.find("positions 4 (BOS included), LayerNorm, GELU, causal") != std::string::npos);
}

TEST_CASE("run --trace checks an input of digits only against a vocabulary of strings") {
  // long_addition's vocabulary holds "+", so "1" is a string token; an input without "+" once went
  // to the interpreter as integers ("the table has no entry for 1").
  const std::string model = compiled("long_addition", "--max-len 4 --no-verify");
  CommandResult r = raspc_cli("run " + model + " --input 1021 --trace");
  INFO(r.err);
  CHECK(r.code == 0);
  CommandResult eval = raspc_cli("eval '" RASPC_SOURCE_DIR "/programs/long_addition.rasp' --input 1021");
  REQUIRE(eval.code == 0);
  CHECK(eval.out == "[0,0,2,1]\n");
  CHECK(r.out.size() > eval.out.size());
  CHECK(r.out.substr(r.out.size() - eval.out.size()) == eval.out);  // the outputs, after the trace
}
