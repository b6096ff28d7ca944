// raspc run --trace, the inspect summary and raspc view, as a user calls them (the pages
// themselves are opened in Chromium by tests/view).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

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
  const std::string model = compiled("hist", "--max-len 6");
  CommandResult r = raspc_cli("run " + model + " --input abcab --trace");
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  // The selector width's 1/(w+1) appears after the attention and is erased by the MLP that turns
  // it into the one-hot hist.
  CHECK(r.out ==
        "after embedding:\n"
        "position  0  1  2  3  4\n"
        "tokens    a  b  c  a  b\n"
        "\n"
        "after block 1 attention:\n"
        "position      0    1    2    3    4\n"
        "tokens        a    b    c    a    b\n"
        "hist.scratch  1/3  1/3  1/2  1/3  1/3\n"
        "\n"
        "after block 1 MLP:\n"
        "position      0  1  2  3  4\n"
        "tokens        a  b  c  a  b\n"
        "hist.scratch  0  0  0  0  0\n"
        "hist          2  2  1  2  2\n"
        "\n"
        "[2,2,1,2,2]\n");
}

TEST_CASE("run --trace decodes sort, a two-layer program, stage by stage") {
  const std::string model = compiled("sort", "--max-len 4");
  CommandResult r = raspc_cli("run " + model + " --input '[3,1,4,2]' --trace");
  CHECK(r.code == 0);
  // Block 1 counts the smaller keys (1/(w+1)) and places each token (map#9); block 2 moves it.
  const std::string s1 = "selector_width#7_1.scratch", s2 = "selector_width#7_2.scratch";
  const std::string after_block_1 =
      s1 + "  0  0  0  0\n" + s2 + "  0  0  0  0\n" + "map#9                       2  0  3  1\n";
  CHECK(r.out ==
        "after embedding:\n"
        "position  0  1  2  3\n"
        "tokens    3  1  4  2\n"
        "indices   0  1  2  3\n"
        "\n"
        "after block 1 attention:\n"
        "position                    0    1  2    3\n"
        "tokens                      3    1  4    2\n"
        "indices                     0    1  2    3\n" +
            s1 + "  1/3  1  1/4  1/2\n" + s2 + "  1    1  1    1\n" +
            "\n"
            "after block 1 MLP:\n"
            "position                    0  1  2  3\n"
            "tokens                      3  1  4  2\n"
            "indices                     0  1  2  3\n" +
            after_block_1 +
            "\n"
            "after block 2 attention:\n"
            "position                    0  1  2  3\n"
            "tokens                      3  1  4  2\n"
            "indices                     0  1  2  3\n" +
            after_block_1 +
            "sorted                      1  2  3  4\n"
            "\n"
            "after block 2 MLP:\n"
            "position                    0  1  2  3\n"
            "tokens                      3  1  4  2\n"
            "indices                     0  1  2  3\n" +
            after_block_1 +
            "sorted                      1  2  3  4\n"
            "\n"
            "[1,2,3,4]\n");
}

TEST_CASE("inspect summarises aab in a screen") {
  const std::string model = compiled("aab", "--causal --max-len 6");
  CommandResult r = raspc_cli("inspect " + model);
  CHECK(r.code == 0);
  CHECK(r.out ==
        "model: aab.safetensors\n"
        "config: 1 layer, 1 head, n_embd 17 (d_head 17), MLP 4, positions 7, vocabulary 3, causal, LayerNorm on, gelu\n"
        "parameters: 1653; FLOPs per token: 3804 (at 7 positions)\n"
        "vocabulary: <bos> a b (BOS <bos>)\n"
        "residual (17): one bos pad zero tokens:a tokens:b indices.x indices.-x indices.x2 indices.-x2 indices.y ... 6 more\n"
        "layer 0\n"
        "  head 0: previous = aggregate over shift(tokens, 1, \"_\") (aab.rasp:19:12)\n"
        "    W_QK: 5 of 17 rows x 4 of 17 columns not all zero\n"
        "      rows: one bos zero indices.x indices.x2\n"
        "      columns: bos zero indices.x indices.x2\n"
        "    W_OV: 4 of 17 rows x 3 of 17 columns not all zero\n"
        "      rows: bos zero tokens:a tokens:b\n"
        "      columns: previous:_ previous:a previous:b\n"
        "  MLP: 4 of 4 units used: previous=_ tokens=a,previous=a tokens=b,previous=a previous=b\n"
        "    W_in: 7 of 17 rows x 4 of 4 columns not all zero\n"
        "      rows: one zero tokens:a tokens:b previous:_ previous:a previous:b\n"
        "      columns: previous=_ tokens=a,previous=a tokens=b,previous=a previous=b\n"
        "    W_out: 4 of 4 rows x 2 of 17 columns not all zero\n"
        "      rows: previous=_ tokens=a,previous=a tokens=b,previous=a previous=b\n"
        "      columns: next_token:a next_token:b\n"
        "verification: 126 inputs up to length 6 (all of them), 0 mismatches, minimum logit margin 40.00\n"
        "(every matrix: --all, or --tensor NAME; all-zero rows and columns are left out unless --dense)\n");
  CommandResult json = raspc_cli("inspect " + model + " --json");
  CHECK(json.code == 0);
  const nlohmann::json summary = nlohmann::json::parse(json.out);
  CHECK(summary["config"]["n_embd"] == 17);
  CHECK(summary["residual_labels"].size() == 17);
  CHECK(summary["layers"][0]["heads"][0]["sop"] == "previous");
  CHECK(summary["layers"][0]["heads"][0]["at"] == "aab.rasp:19:12");
  CHECK(summary["layers"][0]["mlp"]["out"]["columns"] == nlohmann::json({"next_token:a", "next_token:b"}));
  CHECK(summary["verification"]["mismatches"] == 0);
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
  CHECK(page.find("data-output=\"true\"><th>hist</th><td class=\"checked\" data-position=\"0\" title=\"interpreter: "
                  "2\">2</td>") != std::string::npos);
  // aab.rasp says `# causal: yes`: compiled causal, as its own header asks.
  r = raspc_cli("view '" RASPC_SOURCE_DIR "/programs/aab.rasp' --input aab -o aab.html");
  CHECK(r.code == 0);
  const std::string causal = raspc::testing::slurp(raspc::testing::scratch_folder() / "aab.html");
  CHECK(causal.find("positions 4, causal, LayerNorm on") != std::string::npos);
}
