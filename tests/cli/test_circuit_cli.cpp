// raspc circuit, patch and verify-interventions as a user runs them: their text, their JSON (the
// schema of docs/json.md) and their mistakes, on hist compiled at length 5.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <set>

#include "tests/cli/run_raspc.hpp"

namespace {

using raspc::testing::CommandResult;
using nlohmann::json;

CommandResult raspc_cli(const std::string& args) {
  return raspc::testing::run_raspc(args, raspc::testing::scratch_with_programs());
}

// hist.safetensors in the scratch folder.
void compile_hist() {
  const CommandResult r = raspc_cli("compile programs/hist.rasp --max-len 5 -o hist.safetensors");
  REQUIRE(r.code == 0);
}

std::set<std::string> keys(const json& object) {
  std::set<std::string> names;
  for (const auto& [key, value] : object.items()) names.insert(key);
  return names;
}

}  // namespace

TEST_CASE("circuit: hist's circuit as text and as JSON") {
  compile_hist();
  const CommandResult text = raspc_cli("circuit hist.safetensors");
  CHECK(text.code == 0);
  CHECK(text.err.empty());
  CHECK(text.out ==
        "model: hist.safetensors\n"
        "circuit: 4 of 5 nodes, 5 edges\n"
        "embed (hook_embed) writes bos, tokens\n"
        "pos_embed (hook_pos_embed) writes one\n"
        "a0.0 (blocks.0.attn.hook_z[0]) writes hist; selector_width; hist.rasp:12:8\n"
        "  <- embed via q: bos, tokens\n"
        "  <- pos_embed via q: one\n"
        "  <- embed via k: bos, tokens\n"
        "  <- embed via v: bos\n"
        "unembed (ln_final.hook_normalized) reads hist\n"
        "  <- a0.0 via unembed: hist\n"
        "not in the circuit:\n"
        "  m0 (blocks.0.hook_mlp_out): no unit has weights both in and out (a layer without an MLP of its own)\n");
  const CommandResult r = raspc_cli("circuit hist.safetensors --json");
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  CHECK(keys(j) == std::set<std::string>{"nodes", "edges"});
  for (const json& node : j["nodes"]) {
    std::set<std::string> expected{"id", "kind", "layer", "head", "hook", "dims", "in_circuit"};
    expected.insert(node["kind"] == "unembed" ? "reads" : "writes");
    if (node["kind"] == "head") expected.insert({"construction", "selector", "source"});
    if (node["kind"] == "mlp") expected.insert({"units_used", "source"});
    if (node["in_circuit"] == false) expected.insert("why_not");
    CHECK(keys(node) == expected);
  }
  for (const json& edge : j["edges"])
    CHECK(keys(edge) == std::set<std::string>{"from", "to", "via", "to_hook", "to_head", "carries", "dims", "in_circuit"});
  CHECK(j["nodes"][2]["id"] == "a0.0");
  CHECK(j["nodes"][2]["selector"]["at"] == "hist.rasp:11:14");
}

TEST_CASE("patch: an interchange and an ablation beside the interpreter, as text and as JSON") {
  compile_hist();
  const CommandResult r = raspc_cli("patch hist.safetensors --input abbd --from aaab --sop hist");
  CHECK(r.code == 0);
  CHECK(r.out ==
        "hist patched from [a,a,a,b], on abbd:\n"
        "  model, untouched  [1,2,2,1]\n"
        "  model, changed    [3,3,3,1]\n"
        "  interpreter       [3,3,3,1]\n"
        "the model agrees with the interpreter\n");
  const CommandResult ablated = raspc_cli("patch hist.safetensors --input abbd --ablate a0.0 --how bos --json");
  CHECK(ablated.code == 0);
  const json j = json::parse(ablated.out);
  CHECK(keys(j) == std::set<std::string>{"intervention", "clean", "model", "predicted", "no_prediction", "agree", "changed"});
  CHECK(j["intervention"] == "a0.0 bos-ablated");
  CHECK(j["predicted"].is_null());  // a selector width's attention on BOS is no value of the program
  CHECK(j["agree"].is_null());
  CHECK(j["no_prediction"] ==
        "a0.0 computes hist by a selector_width head, whose attention on BOS is no value of the program (only an "
        "aggregate's is: its default)");
}

TEST_CASE("patch: mistakes say what to do and exit 1") {
  compile_hist();
  auto error_of = [](const std::string& args) {
    const CommandResult r = raspc_cli(args);
    CHECK(r.code == 1);
    CHECK(r.out.empty());
    return r.err;
  };
  CHECK(error_of("patch hist.safetensors --input abbd") ==
        "--sop: error: say what to change: --from B --sop NAME patches an s-op, --ablate NODE ablates a head or MLP\n");
  CHECK(error_of("patch hist.safetensors --input abbd --from aaab --sop hst") ==
        "--sop: error: \"hst\" is no s-op of the program that this model holds in dimensions of its own (did you mean \"hist\"?); it can "
        "patch tokens, hist\n");
  CHECK(error_of("patch hist.safetensors --input abbd --from aab --sop hist") ==
        "--from: error: has 3 tokens and the input 4: an interchange needs two inputs of one length\n");
  CHECK(error_of("patch hist.safetensors --input abbd --ablate m0 --how bos") ==
        "--ablate: error: an MLP has no attention to move to BOS; ablate m0 with zero or mean\n");
  CHECK(error_of("patch hist.safetensors --input abbd --ablate a0.0 --how half").find("--how: error: \"half\" is no ablation") == 0);
  CHECK(error_of("patch hist.safetensors --input abbd --ablate m3").find("--ablate: error: \"m3\" is no head or MLP") == 0);
  CHECK(error_of("patch hist.safetensors --input abbz --ablate m0") ==
        "--input:1:4: error: \"z\" is not in the model's input vocabulary (a b c d)\n  abbz\n     ^\n");
  REQUIRE(raspc_cli("handset-aab -o aab.safetensors").code == 0);
  CHECK(error_of("circuit aab.safetensors").find("aab.safetensors: error: this model carries no placement of s-ops") == 0);
}

TEST_CASE("verify-interventions: hist agrees on every pair, as text and as JSON") {
  compile_hist();
  const CommandResult r = raspc_cli("verify-interventions hist.safetensors --pairs 40");
  CHECK(r.code == 0);
  CHECK(r.out.find("  hist    40 of 40 agree (100%)") != std::string::npos);
  CHECK(r.out.find("verify-interventions: every intervention agrees with the interpreter\n") != std::string::npos);
  const CommandResult j = raspc_cli("verify-interventions hist.safetensors --pairs 40 --json");
  REQUIRE(j.code == 0);
  const json report = json::parse(j.out);
  CHECK(keys(report) == std::set<std::string>{"pairs", "seed", "max_length", "interchanges", "ablations", "failures"});
  CHECK(report["failures"] == 0);
  CHECK(keys(report["interchanges"][0]) ==
        std::set<std::string>{"sop", "pairs", "agreed", "accuracy", "changed", "undefined", "failures"});
  CHECK(keys(report["ablations"][0]) == std::set<std::string>{"node", "in_circuit", "ablation", "inputs", "changed", "failures"});
  CHECK(report["interchanges"][1]["sop"] == "hist");
  CHECK(report["interchanges"][1]["accuracy"] == 1.0);
}
